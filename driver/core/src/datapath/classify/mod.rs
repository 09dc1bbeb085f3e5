//! The egress classifier: from a parsed frame and the NBL's out-of-band 802.1Q info to an
//! 802.1p priority, a traffic class and what to do with the frame's 802.1Q tag.
//!
//! A [`Compiled`] table is built once from the operational parameter set (spec §4.1: what the
//! NIC applies to egress) whenever that set changes, and is immutable afterwards; the per-packet
//! [`Compiled::classify_header`] reads the frame's facts in one pass (`super::scan`) and does at
//! most a few lookups in small hash tables. [`Compiled::classify`] gives the same answer from the
//! reference parse (`Frame::parse`); the tests and the fuzz target hold the two equal.
//!
//! ## Decisions (the spec leaves these open)
//!
//! **Priority precedence** — spec §1.4 defines each condition but gives no order between them,
//! only that DEFAULT applies to "every egress packet that matches no other element". The order
//! is this driver's choice (EtherType, TCP, UDP, TCP-or-UDP port, NetDirect port, then DEFAULT), after the
//! OS's own choice; first match wins:
//!
//! 1. [`Rule::OsSupplied`]: the priority in the NBL's `Ieee8021QNetBufferListInfo`. The OS (the
//!    QoS packet scheduler, `New-NetQosPolicy`) set it for this very packet; classifications are
//!    meant for traffic the miniport originates or manages itself (spec §1.4, last rule).
//! 2. [`Rule::EtherType`]: the Ethernet II type or the SNAP protocol id (spec §1.4: "account for
//!    Ethernet II vs 802.3 framing"), after any 802.1Q tag. In practice these name non-IP
//!    protocols (FCoE 0x8906, RoCE 0x8915), which no port rule can match; an "IPv4 → p" element
//!    would take all IPv4 traffic, ports included, as this order says.
//! 3. [`Rule::Tcp`] / [`Rule::Udp`], then [`Rule::TcpOrUdp`]: destination port (spec §1.4).
//!    A protocol-specific element beats the TCP-or-UDP element of the same port.
//! 4. [`Rule::NetDirect`]: a NETDIRECT_PORT element.
//! 5. [`Rule::FrameTag`]: the PCP of an 802.1Q tag already in the frame data: the sender's own
//!    per-packet choice, above the catch-all DEFAULT, below configured classifications.
//! 6. [`Rule::Default`]: the first DEFAULT element.
//! 7. [`Rule::None`]: priority 0.
//!
//! Within one kind, the element that comes first in the array wins (a later element with the
//! same condition is shadowed). Elements with a priority above 7 or an unknown selector are
//! skipped (validation refuses them before they reach an operational set).
//!
//! **Which parameters count** — the operational set from `qos::state` already carries the §4.3
//! overrides (an unconfigured classification group is empty), and its flags are cleared, so the
//! table reads the groups as they are and ignores `flags`. With `*QOS` off (spec §4.4: DCB
//! disabled on the adapter) there is no set: no classification, every packet in TC 0, only the
//! OS-supplied priority or an in-frame tag give a priority.
//!
//! **NETDIRECT_PORT on the wire** — spec §1.4: the port is the *source* port on connections the
//! miniport accepted and the *destination* port on connections it initiated. The NDK engine
//! knows which; when it hands a frame of one of its connections it passes that port
//! ([`Meta::nd_port`]), and the element matches exactly that. Without it, the frame itself has to
//! say: with iWARP (`*NetworkDirectTechnology` 1) an ND connection is a TCP connection, so a TCP
//! frame matches when its source *or* destination port is the element's (a frame does not say
//! which side initiated; the other side's port is ephemeral); with RoCEv2 (4) the UDP header is
//! always 4791 and carries no ND port, so every RoCEv2 or RoCE frame takes the *first*
//! NETDIRECT_PORT element (the usual configuration has one: SMB Direct, 445).
//!
//! **RDMA counting** — [`Decision::is_rdma`] holds for RoCEv2 (UDP destination 4791), RoCE
//! (EtherType 0x8915), a frame the NDK engine marked, and an iWARP frame matching a
//! NETDIRECT_PORT element, whatever rule set the priority.
//!
//! **Traffic class** — the operational `PriorityAssignmentTable` (spec §1.3); a TC id at or above
//! `NumTrafficClasses` (which validation refuses) falls back to TC 0.
//!
//! **Tagging** — spec §6.2's table gives, from `*QOS` and `*PriorityVLANTag`, whether priority
//! and VLAN tagging are on ([`TagPolicy::from_keywords`]). Then, for an egress frame:
//! - MAC Control (0x8808) and LLDP (0x88CC) frames are never tagged (802.1Q: a bridge never
//!   tags them; the PFC and DCBX frames the adapter sends must reach the peer's MAC untagged).
//! - With no tag in the frame: [`TagAction::Insert`] when priority tagging is on and a rule gave
//!   a priority (so DCB traffic reaches the peer priority-tagged, even with priority 0), or when
//!   VLAN tagging is on and the NBL has a VLAN id or the adapter a configured one
//!   (`OID_GEN_VLAN_ID`, [`Compiled::set_vlan`]). PCP is the priority when priority tagging is
//!   on, else 0; VID, with VLAN tagging on, is the NBL's, or the configured VID when the NBL names
//!   none (a VLAN-configured NIC tags what the OS left untagged, as real DCB/RDMA NICs do), else
//!   0. Otherwise [`TagAction::Leave`].
//! - With a tag in the frame: never a second tag. [`TagAction::Rewrite`] of the PCP when priority
//!   tagging is on and a rule above [`Rule::FrameTag`] chose another priority; the frame's VID
//!   is the sender's and stays. Otherwise leave it.
//! - On receive ([`Compiled::receive`]): with priority or VLAN tagging on, the tag is stripped
//!   (its values go to the NBL's out-of-band info, NDIS 6's rule that 802.1Q info travels out of
//!   band, \[INFER\] from the MacOptions of spec §4.4); with both off it is left in the data.
//!   With a configured VID and VLAN tagging on, a frame tagged with another VID is refused
//!   ([`Compiled::vlan_admits`], which says why untagged frames are admitted).

mod tag;

pub use tag::{TAG_ROOM, TagAction, TagPolicy, apply_tag, tag_in_place};

use super::frame::{
    ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_MAC_CONTROL, ETHERTYPE_ROCE, Frame, ROCEV2_UDP_PORT,
    Status,
};
use super::scan::{self, Facts};
use crate::qos::params::{MAX_CLASSIFICATIONS, MAX_TCS, QosParameters, condition};

/// How NetworkDirect traffic looks on this adapter's wire (`*NetworkDirect`,
/// `*NetworkDirectTechnology`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum NetDirect {
    /// NDK disabled: only frames the NDK engine marks can match NETDIRECT_PORT.
    #[default]
    Disabled,
    /// iWARP: ND connections are TCP connections.
    Iwarp,
    /// RoCEv2: ND traffic is UDP to 4791.
    RoceV2,
}

impl NetDirect {
    /// From `*NetworkDirect` and the `NDK_RDMA_TECHNOLOGY` of `*NetworkDirectTechnology`
    /// (1 iWARP; anything else is the adapter's default, RoCEv2).
    #[must_use]
    pub const fn from_keywords(network_direct: bool, technology: u32) -> Self {
        match (network_direct, technology) {
            (false, _) => Self::Disabled,
            (true, 1) => Self::Iwarp,
            (true, _) => Self::RoceV2,
        }
    }
}

/// The per-packet facts that are not in the frame bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Meta {
    /// The 802.1p priority of the NBL's `Ieee8021QNetBufferListInfo`, when the OS set one.
    pub os_priority: Option<u8>,
    /// The VLAN id of the NBL's `Ieee8021QNetBufferListInfo` (0: none).
    pub vlan_id: u16,
    /// For a frame of an NDK connection: its NetworkDirect port (source port if the adapter
    /// accepted the connection, destination port if it initiated it; spec §1.4).
    pub nd_port: Option<u16>,
}

/// Which rule gave the priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Rule {
    /// The NBL's out-of-band priority.
    OsSupplied,
    /// A NETDIRECT_PORT element.
    NetDirect,
    /// A TCP_PORT element.
    Tcp,
    /// A UDP_PORT element.
    Udp,
    /// A TCP_OR_UDP_PORT element.
    TcpOrUdp,
    /// An ETHERTYPE element.
    EtherType,
    /// The PCP of the tag already in the frame.
    FrameTag,
    /// The DEFAULT element.
    Default,
    /// Nothing: priority 0.
    #[default]
    None,
}

/// The classifier's answer for one egress frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Decision {
    /// The 802.1p priority, 0..7.
    pub priority: u8,
    /// The traffic class, 0..7 (below `NumTrafficClasses`).
    pub tc: u8,
    /// The rule that gave the priority.
    pub rule: Rule,
    /// What to do with the tag.
    pub tag: TagAction,
    /// RDMA traffic, for the RDMA counters.
    pub is_rdma: bool,
    /// How far the frame's headers could be read: anything but `Complete` is counted as a bad
    /// header (the frame is still sent, classified by what was read).
    pub frame: Status,
}

/// What an element gives a matching frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
struct Entry {
    priority: u8,
    /// The priority's traffic class, looked up when the table is compiled.
    tc: u8,
    rule: Rule,
}

/// The kinds of key in the one table of configured elements: a TCP or UDP destination port
/// under its IP protocol number (6, 17), an EtherType under 1 (ICMP's number: never a port
/// key), which makes it [`Facts::ethertype_key`]. Key 0 (kind 0) is never inserted: it stands
/// for a frame with neither ports nor an EtherType.
mod key {
    use super::super::frame::ip_protocol;

    /// `kind << 16 | value`.
    #[inline(always)]
    pub(super) const fn of(kind: u32, value: u16) -> u32 {
        kind << 16 | value as u32
    }

    pub(super) const TCP: u32 = ip_protocol::TCP as u32;
    pub(super) const UDP: u32 = ip_protocol::UDP as u32;
    pub(super) const ETHERTYPE: u32 = 1;
}

/// Keys a [`Table`] holds at most: every element of an operational set, a TCP_OR_UDP_PORT
/// element counting twice (a TCP and a UDP key).
const MAX_KEYS: usize = 2 * MAX_CLASSIFICATIONS;

/// Slots of a [`Table`]: twice the most keys it can hold, so that a lookup probes about once.
const SLOTS: usize = 2 * MAX_KEYS;

/// One slot of a [`Table`]: a key and its element's entry side by side (8 bytes), so that a
/// probe reads one slot, at an index the processor scales itself; `None`: an empty slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
struct Slot {
    key: u32,
    entry: Option<Entry>,
}

/// An open-addressing hash table from a key ([`key`]) to its first element: one or two probes
/// per packet where a binary search over 128 keys takes seven dependent steps. Keys are never
/// removed (the table is rebuilt with each operational set), so a probe sequence ends at the
/// first empty slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Table {
    slots: [Slot; SLOTS],
    len: usize,
}

impl Default for Table {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl Table {
    /// A table without keys.
    const EMPTY: Self = Self {
        slots: [Slot {
            key: 0,
            entry: None,
        }; SLOTS],
        len: 0,
    };

    /// Empties the table where it is (no table-sized value on the stack).
    fn clear(&mut self) {
        self.slots.fill(Slot::default());
        self.len = 0;
    }

    /// The first slot of `key`'s probe sequence (Fibonacci hashing to 8 bits).
    #[inline(always)]
    fn home(key: u32) -> usize {
        let h = key.wrapping_mul(0x9E37_79B1) >> 24;
        usize::try_from(h).unwrap_or(0)
    }

    /// Adds `key` unless it is there already (an earlier element keeps it) or the table holds
    /// [`MAX_KEYS`] keys (it cannot: the operational set holds at most [`MAX_CLASSIFICATIONS`]
    /// elements in all, each at most two keys).
    fn insert(&mut self, key: u32, entry: Entry) {
        if self.len >= MAX_KEYS {
            return;
        }
        let home = Self::home(key);
        for i in 0..SLOTS {
            let Some(slot) = self.slots.get_mut(home.wrapping_add(i) % SLOTS) else {
                return;
            };
            match slot.entry {
                Some(_) if slot.key == key => return,
                Some(_) => {}
                None => {
                    *slot = Slot {
                        key,
                        entry: Some(entry),
                    };
                    self.len = self.len.saturating_add(1);
                    return;
                }
            }
        }
    }

    /// The entry of `key`. An empty table answers from its first probe, like a miss: no test
    /// of its length on the way.
    #[inline(always)]
    fn get(&self, key: u32) -> Option<Entry> {
        let home = Self::home(key);
        // In an optimized build the first probe is in line: with at most a quarter of the
        // slots used it is almost always the last (an empty slot or the key), and the walk
        // past it is out of line. A debug build keeps the whole walk in line, as it was: one
        // frame fewer on the send path's deepest stack (`cargo xtask pe`'s dev budget).
        #[cfg(not(debug_assertions))]
        {
            let slot = self.slots.get(home % SLOTS)?;
            let entry = slot.entry?;
            if slot.key == key {
                return Some(entry);
            }
            self.probe(key, home.wrapping_add(1))
        }
        #[cfg(debug_assertions)]
        self.probe(key, home)
    }

    /// The walk of [`Table::get`] from slot `at` on.
    #[cfg_attr(not(debug_assertions), cold, inline(never))]
    #[cfg_attr(debug_assertions, inline(always))]
    fn probe(&self, key: u32, mut at: usize) -> Option<Entry> {
        // At most half the slots are used, so the walk meets an empty slot long before SLOTS.
        for _ in 0..SLOTS {
            let slot = self.slots.get(at % SLOTS)?;
            let entry = slot.entry?;
            if slot.key == key {
                return Some(entry);
            }
            at = at.wrapping_add(1);
        }
        None
    }
}

/// The classification table compiled from one operational parameter set, immutable until the
/// next set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Compiled {
    qos: bool,
    tagging: TagPolicy,
    /// 7 with priority tagging, else 0: the PCP of an inserted tag is `priority & pcp_mask`.
    pcp_mask: u8,
    /// 0x0FFF with VLAN tagging, else 0: the VID of an inserted tag is `vlan_id & vid_mask`.
    vid_mask: u16,
    /// The adapter's configured VLAN ID (`OID_GEN_VLAN_ID`) with VLAN tagging on, else 0: the
    /// VID of a tag inserted into a frame whose NBL names none, and the one VID the receive
    /// filter admits besides 0 ([`Compiled::vlan_admits`]). Compiled in, so that no packet looks
    /// up the configuration.
    vid: u16,
    netdirect_mode: NetDirect,
    /// Priority -> TC; all zeros without QoS.
    prio_tc: [u8; MAX_TCS],
    /// The first DEFAULT element, or priority 0 by no rule.
    fallback: Entry,
    /// The ETHERTYPE, TCP_PORT, UDP_PORT and TCP_OR_UDP_PORT elements, by [`key`]: a frame
    /// with ports is looked up by its ports, any other by its EtherType (one probe sequence per
    /// packet).
    configured: Table,
    /// The ETHERTYPE elements for IPv4 and IPv6. They take every frame of their type, ports or
    /// not, so they come before the ports; in the usual configuration there are none, and
    /// `ip_by_type` (either is there) is the one test a packet pays for them.
    ipv4: Option<Entry>,
    ipv6: Option<Entry>,
    ip_by_type: bool,
    /// NETDIRECT_PORT elements by port.
    netdirect: Table,
    /// The first NETDIRECT_PORT element (for RoCE frames, which carry no ND port).
    first_netdirect: Option<Entry>,
}

impl Compiled {
    /// A table compiled from nothing: QoS off, no tagging, NDK disabled. The starting value of
    /// a table built in place with [`Compiled::rebuild`] (the shell copies it from the image into
    /// pool memory: a table is too large to build on a kernel stack).
    pub const EMPTY: Self = Self {
        qos: false,
        tagging: TagPolicy {
            priority: false,
            vlan: false,
        },
        pcp_mask: 0,
        vid_mask: 0,
        vid: 0,
        netdirect_mode: NetDirect::Disabled,
        prio_tc: [0; MAX_TCS],
        fallback: Entry {
            priority: 0,
            tc: 0,
            rule: Rule::None,
        },
        configured: Table::EMPTY,
        ipv4: None,
        ipv6: None,
        ip_by_type: false,
        netdirect: Table::EMPTY,
        first_netdirect: None,
    };

    /// Compiles `params` (the operational set; `None` when `*QOS` is off) with the adapter's
    /// tagging and NetworkDirect technology. See the module documentation for every rule.
    #[must_use]
    pub fn new(params: Option<&QosParameters>, tagging: TagPolicy, netdirect: NetDirect) -> Self {
        let mut c = Self::EMPTY;
        c.rebuild(params, tagging, netdirect);
        c
    }

    /// [`Compiled::new`] in place: every field of `self` is replaced, whatever it held, and no
    /// table-sized value is made on the stack.
    pub fn rebuild(
        &mut self,
        params: Option<&QosParameters>,
        tagging: TagPolicy,
        netdirect: NetDirect,
    ) {
        let c = self;
        c.qos = params.is_some();
        c.tagging = tagging;
        c.pcp_mask = if tagging.priority { 7 } else { 0 };
        c.vid_mask = if tagging.vlan { 0x0FFF } else { 0 };
        c.vid = 0;
        c.netdirect_mode = netdirect;
        c.prio_tc = [0; MAX_TCS];
        c.fallback = Entry {
            priority: 0,
            tc: 0,
            rule: Rule::None,
        };
        c.configured.clear();
        c.ipv4 = None;
        c.ipv6 = None;
        c.ip_by_type = false;
        c.netdirect.clear();
        c.first_netdirect = None;
        let Some(p) = params else {
            return;
        };
        for (slot, &tc) in c.prio_tc.iter_mut().zip(p.prio_tc.iter()) {
            // Spec §1.3: a priority maps to a TC id below NumTrafficClasses.
            *slot = if u32::from(tc) < p.num_tcs.min(8) {
                tc
            } else {
                0
            };
        }
        // A copy of the map: the entries are made while `c` is filled in.
        let prio_tc = c.prio_tc;
        let entry = |priority: u8, rule| Entry {
            priority,
            tc: prio_tc.get(usize::from(priority & 7)).copied().unwrap_or(0),
            rule,
        };
        let elements = p.classifications.as_slice();
        for e in elements.iter().filter(|e| e.priority <= 7) {
            let (f, prio) = (e.field, e.priority);
            let t = &mut c.configured;
            match e.selector {
                condition::DEFAULT if c.fallback.rule == Rule::None => {
                    c.fallback = entry(prio, Rule::Default);
                }
                condition::TCP_PORT => t.insert(key::of(key::TCP, f), entry(prio, Rule::Tcp)),
                condition::UDP_PORT => t.insert(key::of(key::UDP, f), entry(prio, Rule::Udp)),
                condition::ETHERTYPE => {
                    t.insert(key::of(key::ETHERTYPE, f), entry(prio, Rule::EtherType));
                }
                condition::NETDIRECT_PORT => {
                    c.netdirect
                        .insert(u32::from(f), entry(prio, Rule::NetDirect));
                    let _ = c
                        .first_netdirect
                        .get_or_insert(entry(prio, Rule::NetDirect));
                }
                _ => {}
            }
        }
        // After every protocol-specific element, so that those win for the same port.
        for e in elements.iter().filter(|e| e.priority <= 7) {
            if e.selector == condition::TCP_OR_UDP_PORT {
                let both = entry(e.priority, Rule::TcpOrUdp);
                c.configured.insert(key::of(key::TCP, e.field), both);
                c.configured.insert(key::of(key::UDP, e.field), both);
            }
        }
        c.ipv4 = c.configured.get(key::of(key::ETHERTYPE, ETHERTYPE_IPV4));
        c.ipv6 = c.configured.get(key::of(key::ETHERTYPE, ETHERTYPE_IPV6));
        c.ip_by_type = c.ipv4.is_some() || c.ipv6.is_some();
    }

    /// Compiles in the adapter's configured VLAN ID (`OID_GEN_VLAN_ID`, 0: none): with VLAN
    /// tagging on, frames whose NBL names no VLAN leave tagged with it, and received frames
    /// tagged with another VID are refused ([`Compiled::vlan_admits`]). With VLAN tagging off
    /// (spec §6.2's table) the adapter neither tags nor filters VLANs, so it is kept as 0. After
    /// [`Compiled::rebuild`], which leaves no VID.
    pub fn set_vlan(&mut self, vid: u16) {
        self.vid = vid & self.vid_mask;
    }

    /// The configured VLAN ID this table applies (0: none, or VLAN tagging off).
    #[must_use]
    pub fn vlan(&self) -> u16 {
        self.vid
    }

    /// The receive side's VLAN filter: whether a frame whose 802.1Q tag carries `tag_vid`
    /// (`None`: no tag) is for this adapter. With no configured VID (or VLAN tagging off) every
    /// frame is. With one, a frame tagged with another VID is not (a VLAN-configured NIC drops
    /// it; the shell counts it as a receive discard), and a frame with the VID, a
    /// priority-tagged frame (VID 0: 802.1Q, "no VLAN", only a priority) and an untagged frame
    /// are. The `OID_GEN_VLAN_ID` page is silent on untagged frames; they are admitted because
    /// this adapter's own untagged control traffic is never tagged (LLDPDUs, PFC frames: the
    /// module's "Tagging"), and because priority-tagged and untagged frames carry no VLAN that
    /// could be another's: refusing them would cut DCBX and PFC off on a VLAN-configured link,
    /// which real DCB NICs keep.
    #[inline(always)]
    #[must_use]
    pub fn vlan_admits(&self, tag_vid: Option<u16>) -> bool {
        match tag_vid {
            Some(v) => {
                let v = v & 0x0FFF;
                self.vid == 0 || v == 0 || v == self.vid
            }
            None => true,
        }
    }

    /// The traffic class of `priority` (taken modulo 8) in the operational set; 0 without QoS.
    #[inline(always)]
    #[must_use]
    pub fn tc_of(&self, priority: u8) -> u8 {
        self.prio_tc
            .get(usize::from(priority & 7))
            .copied()
            .unwrap_or(0)
    }

    /// The tagging this table applies.
    #[must_use]
    pub fn tagging(&self) -> TagPolicy {
        self.tagging
    }

    /// The NETDIRECT_PORT element matching the frame, if any (module documentation).
    #[inline(always)]
    fn netdirect_match(&self, f: &Facts, meta: &Meta, roce: bool) -> Option<Entry> {
        if let Some(port) = meta.nd_port {
            return self.netdirect.get(u32::from(port));
        }
        match self.netdirect_mode {
            NetDirect::Iwarp => f.tcp_ports().and_then(|(dst, src)| {
                self.netdirect
                    .get(u32::from(dst))
                    .or_else(|| self.netdirect.get(u32::from(src)))
            }),
            NetDirect::RoceV2 if roce => self.first_netdirect,
            _ => None,
        }
    }

    /// Classifies one egress frame from its reference parse (the data path calls
    /// [`Self::classify_header`], which gives the same answer faster).
    #[inline]
    #[must_use]
    pub fn classify(&self, f: &Frame, meta: &Meta) -> Decision {
        self.decide(&f.facts(), meta)
    }

    /// Classifies one egress frame from its leading bytes (the first [`HEADER_BYTES`] are all
    /// that is read): the data path's per-packet call, equal to
    /// `self.classify(&Frame::parse(header), meta)` on every input (`scan`'s tests and the
    /// `classify` fuzz target check it).
    ///
    /// [`HEADER_BYTES`]: super::frame::HEADER_BYTES
    #[inline(always)]
    #[must_use]
    pub fn classify_header(&self, header: &[u8], meta: &Meta) -> Decision {
        let mut f = Facts::default();
        match scan::scan_into(header, &mut f) {
            Some(()) => self.decide(&f, meta),
            None => self.classify_cut(header, meta),
        }
    }

    /// [`Self::classify_header`] for a frame whose headers end early: the reference, out of the
    /// per-packet code (a separate call keeps the scanned facts in registers).
    #[cold]
    #[inline(never)]
    fn classify_cut(&self, header: &[u8], meta: &Meta) -> Decision {
        self.classify(&Frame::parse(header), meta)
    }

    /// The decision from the frame's facts (module documentation). Without QoS every table is
    /// empty, `fallback` is "no rule" and `prio_tc` all zeros, so nothing here asks about QoS.
    /// Not inlined in a debug build, as [`scan::scan_into`]: its frame is then beside the
    /// scan's, not added to it (`cargo xtask pe`'s dev budget).
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline(never))]
    fn decide(&self, f: &Facts, meta: &Meta) -> Decision {
        // The port key once, for the RoCEv2 test and the lookup: `Facts::is_roce` in a compare
        // fewer (UDP to 4791 is the key `17 << 16 | 4791`).
        let ports = f.port_key();
        let roce = f.ethertype_is(ETHERTYPE_ROCE) | (ports == key::of(key::UDP, ROCEV2_UDP_PORT));
        // RDMA: RoCE, a frame the NDK engine marked, or one matching a NETDIRECT_PORT element.
        // Only with iWARP can the last hold without the first two (RoCEv2 matches only RoCE
        // frames), so only then is the element looked up for this alone.
        let mut is_rdma = roce | meta.nd_port.is_some();
        if self.netdirect_mode == NetDirect::Iwarp && !is_rdma {
            is_rdma = self.netdirect_match(f, meta, roce).is_some();
        }
        let chosen = if let Some(p) = meta.os_priority {
            let priority = p & 7;
            Entry {
                priority,
                tc: self.tc_of(priority),
                rule: Rule::OsSupplied,
            }
        } else if let Some(e) = self.configured(f, ports) {
            e
        } else if let Some(e) = self.netdirect_match(f, meta, roce) {
            e
        } else if let Some(pcp) = f.tag_pcp() {
            Entry {
                priority: pcp,
                tc: self.tc_of(pcp),
                rule: Rule::FrameTag,
            }
        } else {
            self.fallback
        };
        let Entry { priority, tc, rule } = chosen;
        Decision {
            priority,
            tc,
            rule,
            tag: self.egress_tag(f, meta, priority, rule),
            is_rdma,
            frame: f.status(),
        }
    }

    /// EtherType, then TCP/UDP destination port (module documentation, items 2 and 3): the
    /// IPv4 and IPv6 EtherType elements first, then the ports of a frame that has them, else
    /// its EtherType. (Another EtherType element cannot match a frame with ports: those are
    /// IPv4 or IPv6.)
    #[inline(always)]
    fn configured(&self, f: &Facts, ports: u32) -> Option<Entry> {
        if self.ip_by_type {
            let by_type = if f.ethertype_is(ETHERTYPE_IPV4) {
                self.ipv4
            } else if f.ethertype_is(ETHERTYPE_IPV6) {
                self.ipv6
            } else {
                None
            };
            if by_type.is_some() {
                return by_type;
            }
        }
        let key = if ports != 0 { ports } else { f.ethertype_key() };
        self.configured.get(key)
    }

    /// The egress tag action (module documentation, "Tagging").
    #[inline(always)]
    fn egress_tag(&self, f: &Facts, meta: &Meta, priority: u8, rule: Rule) -> TagAction {
        let never = f.ethertype_is(ETHERTYPE_MAC_CONTROL) | f.ethertype_is(crate::lldp::ETHERTYPE);
        if never || !f.has_src() {
            return TagAction::Leave;
        }
        match f.tag_pcp() {
            Some(pcp) => {
                let chosen = !matches!(rule, Rule::FrameTag | Rule::Default | Rule::None);
                if self.tagging.priority && chosen && pcp != priority {
                    TagAction::Rewrite { pcp: priority }
                } else {
                    TagAction::Leave
                }
            }
            None => {
                let pcp_wanted = self.tagging.priority & (rule != Rule::None);
                // The NBL's VLAN ID, or else the adapter's configured one (`vid`, 0 without
                // one or with VLAN tagging off): a select, no lookup.
                let own = meta.vlan_id & self.vid_mask;
                let vid = if own != 0 { own } else { self.vid };
                if pcp_wanted | (vid != 0) {
                    TagAction::Insert {
                        pcp: priority & self.pcp_mask,
                        vid,
                    }
                } else {
                    TagAction::Leave
                }
            }
        }
    }

    /// The receive-side tag action: [`TagAction::Strip`] when the frame has a tag and priority
    /// or VLAN tagging is on (module documentation); the stripped values are `frame.tag`.
    #[must_use]
    pub fn receive(&self, f: &Frame) -> TagAction {
        if f.tag.is_some() && (self.tagging.priority || self.tagging.vlan) {
            TagAction::Strip
        } else {
            TagAction::Leave
        }
    }
}

#[cfg(test)]
mod tests;
