//! The 802.1Q tag: which tagging the adapter does ([`TagPolicy`], spec §6.2), what to do with a
//! frame's tag ([`TagAction`]), and the edits that do it, in a copy ([`apply_tag`]) or in the
//! transmit buffer ([`tag_in_place`]). Which action a frame gets is the classifier's decision
//! ([`Compiled`](super::Compiled)).

use super::super::frame::{ETHERTYPE_VLAN, VlanTag};
use crate::wire::bytes::array_at;

/// Which 802.1Q tagging the adapter does (spec §6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct TagPolicy {
    /// 802.1p priority tagging.
    pub priority: bool,
    /// VLAN tagging.
    pub vlan: bool,
}

impl TagPolicy {
    /// The effective tagging for `*QOS` and `*PriorityVLANTag` (spec §6.2's table): with QoS on
    /// priority tagging is always on. A `*PriorityVLANTag` outside 0..3 is taken as its default
    /// 3 (the keyword's documented default; the config layer warns about it).
    #[must_use]
    pub const fn from_keywords(qos_enabled: bool, priority_vlan_tag: u32) -> Self {
        let (priority, vlan) = match priority_vlan_tag {
            0 => (false, false),
            1 => (true, false),
            2 => (false, true),
            _ => (true, true),
        };
        Self {
            priority: priority || qos_enabled,
            vlan,
        }
    }
}

/// What to do with the frame's 802.1Q tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum TagAction {
    /// Send (or indicate) the frame's bytes as they are.
    #[default]
    Leave,
    /// Insert a tag (TPID 0x8100, DEI 0) after the MAC addresses.
    Insert {
        /// Priority code point.
        pcp: u8,
        /// VLAN id.
        vid: u16,
    },
    /// Set the PCP of the tag the frame already has.
    Rewrite {
        /// Priority code point.
        pcp: u8,
    },
    /// Remove the frame's tag (receive side).
    Strip,
}

/// The 4 bytes of an inserted 802.1Q tag: TPID 0x8100, then the TCI (DEI 0).
#[inline(always)]
fn tag_bytes(pcp: u8, vid: u16) -> [u8; 4] {
    let tci = VlanTag {
        pcp,
        dei: false,
        vid,
    }
    .tci();
    let ([t0, t1], [c0, c1]) = (ETHERTYPE_VLAN.to_be_bytes(), tci.to_be_bytes());
    [t0, t1, c0, c1]
}

/// The TCI's first byte `hi` with its PCP set to `pcp` (DEI and the VID's top bits kept).
#[inline(always)]
fn with_pcp(hi: u8, pcp: u8) -> u8 {
    (hi & 0x1F) | ((pcp & 7) << 5)
}

/// The frame `b` has an 802.1Q tag after its MAC addresses.
#[inline(always)]
fn has_tag(b: &[u8]) -> bool {
    array_at::<2>(b, 12).map(u16::from_be_bytes) == Some(ETHERTYPE_VLAN)
}

/// Bytes a transmit buffer keeps free before the frame for [`tag_in_place`]: one 802.1Q tag.
pub const TAG_ROOM: usize = 4;

/// Applies `action` to the frame of `len` bytes that starts at [`TAG_ROOM`] in `buf` (the
/// transmit copy put it there), without moving the frame: an inserted tag takes the room in
/// front (the MAC addresses move 4 bytes down), a stripped one leaves 4 bytes of it (they move
/// 4 bytes up). Returns where the frame to send starts in `buf` and its length; the result is
/// the bytes [`apply_tag`] writes for the same frame and action (the `classify` fuzz target
/// checks it), at a cost that does not grow with the frame (classification and
/// tagging are per packet, with the copy that a real NIC's DMA makes left to the transmit path).
///
/// `None` (and `buf` unspecified) where [`apply_tag`] fails: the frame does not fit `buf`, is
/// shorter than the MAC addresses (Insert), or has no 802.1Q tag to rewrite or strip.
#[inline]
#[must_use]
pub fn tag_in_place(buf: &mut [u8], len: usize, action: TagAction) -> Option<(usize, usize)> {
    let end = TAG_ROOM.checked_add(len)?;
    if end > buf.len() {
        return None;
    }
    // Insert first, on a test of its own: it is what almost every egress frame gets where
    // priority tagging is on (always with QoS), and one test costs less than the jump through
    // a table that a match of the four actions compiles to (this is on every packet's path).
    if let TagAction::Insert { pcp, vid } = action {
        return insert_in_place(buf, len, pcp, vid);
    }
    // The frame, as far as it is in `buf` (`end` is within it).
    let tagged = |buf: &[u8]| buf.get(TAG_ROOM..end).is_some_and(has_tag);
    match action {
        TagAction::Leave => Some((TAG_ROOM, len)),
        TagAction::Insert { pcp, vid } => insert_in_place(buf, len, pcp, vid),
        TagAction::Rewrite { pcp } => {
            // The PCP byte is the tag's first, after the TPID: it needs 15 bytes of frame.
            if !tagged(buf) || len < 15 {
                return None;
            }
            let hi = buf.get_mut(TAG_ROOM + 14)?;
            *hi = with_pcp(*hi, pcp);
            Some((TAG_ROOM, len))
        }
        TagAction::Strip => {
            if !tagged(buf) || len < 16 {
                return None;
            }
            buf.copy_within(TAG_ROOM..TAG_ROOM + 12, TAG_ROOM + 4);
            Some((TAG_ROOM + 4, len.checked_sub(4)?))
        }
    }
}

/// [`tag_in_place`]'s Insert, the frame of `len` bytes (within `buf`) at [`TAG_ROOM`].
#[inline(always)]
fn insert_in_place(buf: &mut [u8], len: usize, pcp: u8, vid: u16) -> Option<(usize, usize)> {
    if len < 12 {
        return None;
    }
    let tag = tag_bytes(pcp, vid);
    match array_at::<16>(buf, TAG_ROOM) {
        // The 16 bytes the frame starts with move down in one load (of what the copy into the
        // buffer just stored) and one store, and the tag overwrites the last 4: moving 12 bytes
        // took two loads, the second of which waited on that copy.
        Some(first) => {
            let head = buf.first_chunk_mut::<16>()?;
            *head = first;
            let [.., t0, t1, t2, t3] = head;
            [*t0, *t1, *t2, *t3] = tag;
        }
        // A buffer that ends within 16 bytes of the frame's start.
        None => {
            buf.copy_within(TAG_ROOM..TAG_ROOM + 12, 0);
            buf.get_mut(12..16)?.copy_from_slice(&tag);
        }
    }
    Some((0, len.checked_add(4)?))
}

/// Applies `action` to a frame's leading bytes `header`, writing the result at the start of
/// `out`; returns its length (`header.len()`, +4 for Insert, -4 for Strip). The bytes after
/// `header` in the frame follow unchanged.
///
/// `None` (and `out` unspecified) when `out` is too short, `header` is shorter than the MAC
/// addresses (Insert), or has no 802.1Q tag to rewrite or strip.
#[must_use]
pub fn apply_tag(header: &[u8], action: TagAction, out: &mut [u8]) -> Option<usize> {
    match action {
        TagAction::Leave => {
            out.get_mut(..header.len())?.copy_from_slice(header);
            Some(header.len())
        }
        TagAction::Insert { pcp, vid } => {
            let len = header.len().checked_add(4)?;
            let (macs, rest) = (header.get(..12)?, header.get(12..)?);
            let out = out.get_mut(..len)?;
            let (o_macs, o_rest) = out.split_at_mut_checked(12)?;
            o_macs.copy_from_slice(macs);
            let (o_tag, o_tail) = o_rest.split_at_mut_checked(4)?;
            o_tag.copy_from_slice(&tag_bytes(pcp, vid));
            o_tail.copy_from_slice(rest);
            Some(len)
        }
        TagAction::Rewrite { pcp } => {
            if !has_tag(header) {
                return None;
            }
            let out = out.get_mut(..header.len())?;
            out.copy_from_slice(header);
            let hi = out.get_mut(14)?;
            *hi = with_pcp(*hi, pcp);
            Some(header.len())
        }
        TagAction::Strip => {
            if !has_tag(header) {
                return None;
            }
            let len = header.len().checked_sub(4)?;
            let out = out.get_mut(..len)?;
            let (o_macs, o_rest) = out.split_at_mut_checked(12)?;
            o_macs.copy_from_slice(header.get(..12)?);
            o_rest.copy_from_slice(header.get(16..)?);
            Some(len)
        }
    }
}
