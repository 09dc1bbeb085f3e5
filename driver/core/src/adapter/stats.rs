//! The adapter's general statistics (`OID_GEN_STATISTICS`, `OID_GEN_XMIT_OK`, `OID_GEN_RCV_OK`).
//!
//! Counters are relaxed atomics: the send path updates them at DISPATCH_LEVEL on any CPU, an OID
//! query reads them; each counter is exact, and a query may see one counter a frame ahead of
//! another, which NDIS statistics allow. (The NDK counters, which are updated far more often,
//! are per CPU instead: DESIGN.md §4.)

use core::sync::atomic::{AtomicU64, Ordering};

/// The class of a frame by its destination address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Destination {
    /// A unicast address.
    Directed,
    /// A group address other than broadcast.
    Multicast,
    /// FF-FF-FF-FF-FF-FF.
    Broadcast,
}

impl Destination {
    /// Classifies a destination MAC address.
    #[must_use]
    pub fn of(mac: [u8; 6]) -> Self {
        if mac == [0xFF; 6] {
            Self::Broadcast
        } else if mac[0] & 0x01 != 0 {
            Self::Multicast
        } else {
            Self::Directed
        }
    }
}

use ndis_sys::ntddndis::{
    NDIS_PACKET_TYPE_ALL_MULTICAST as ALL_MULTICAST, NDIS_PACKET_TYPE_BROADCAST as BROADCAST,
    NDIS_PACKET_TYPE_DIRECTED as DIRECTED, NDIS_PACKET_TYPE_MULTICAST as MULTICAST,
    NDIS_PACKET_TYPE_PROMISCUOUS as PROMISCUOUS,
};

/// Whether a frame to `dst` passes the packet filter of an adapter whose address is `own` and
/// whose multicast list (`OID_802_3_MULTICAST_LIST`) is `multicast`. A filter of 0 receives
/// nothing (NDIS sets it before binding protocols).
#[must_use]
pub fn filter_accepts(filter: u32, own: [u8; 6], multicast: &[[u8; 6]], dst: [u8; 6]) -> bool {
    if filter & PROMISCUOUS != 0 {
        return true;
    }
    match Destination::of(dst) {
        Destination::Directed => filter & DIRECTED != 0 && dst == own,
        Destination::Multicast => {
            filter & ALL_MULTICAST != 0 || (filter & MULTICAST != 0 && multicast.contains(&dst))
        }
        Destination::Broadcast => filter & BROADCAST != 0,
    }
}

#[derive(Debug, Default)]
struct Direction {
    frames: [AtomicU64; 3],
    bytes: [AtomicU64; 3],
    errors: AtomicU64,
    discards: AtomicU64,
}

impl Direction {
    fn count(&self, to: Destination, bytes: u64) {
        let i = to as usize;
        if let (Some(f), Some(b)) = (self.frames.get(i), self.bytes.get(i)) {
            f.fetch_add(1, Ordering::Relaxed);
            b.fetch_add(bytes, Ordering::Relaxed);
        }
    }

    fn frames(&self, to: Destination) -> u64 {
        self.frames
            .get(to as usize)
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }

    fn bytes(&self, to: Destination) -> u64 {
        self.bytes
            .get(to as usize)
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }

    fn snapshot(&self) -> DirectionSnapshot {
        use Destination::{Broadcast, Directed, Multicast};
        DirectionSnapshot {
            directed_frames: self.frames(Directed),
            multicast_frames: self.frames(Multicast),
            broadcast_frames: self.frames(Broadcast),
            directed_bytes: self.bytes(Directed),
            multicast_bytes: self.bytes(Multicast),
            broadcast_bytes: self.bytes(Broadcast),
            errors: self.errors.load(Ordering::Relaxed),
            discards: self.discards.load(Ordering::Relaxed),
        }
    }
}

/// The counters of one direction at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DirectionSnapshot {
    /// Unicast frames.
    pub directed_frames: u64,
    /// Multicast frames.
    pub multicast_frames: u64,
    /// Broadcast frames.
    pub broadcast_frames: u64,
    /// Unicast bytes.
    pub directed_bytes: u64,
    /// Multicast bytes.
    pub multicast_bytes: u64,
    /// Broadcast bytes.
    pub broadcast_bytes: u64,
    /// Frames that failed.
    pub errors: u64,
    /// Frames refused (for sends: while the adapter was not running).
    pub discards: u64,
}

impl DirectionSnapshot {
    /// Frames that went through.
    #[must_use]
    pub const fn frames(&self) -> u64 {
        self.directed_frames
            .wrapping_add(self.multicast_frames)
            .wrapping_add(self.broadcast_frames)
    }

    /// Bytes that went through.
    #[must_use]
    pub const fn bytes(&self) -> u64 {
        self.directed_bytes
            .wrapping_add(self.multicast_bytes)
            .wrapping_add(self.broadcast_bytes)
    }
}

/// Frames sent by one batch (an NBL chain, a retry pass), counted in plain memory and added to
/// the adapter's counters at once: one atomic addition per counter and batch, not two per frame
/// (the send path's cost is mostly its atomics after the copy).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SentTally {
    frames: [u64; 3],
    bytes: [u64; 3],
}

impl SentTally {
    /// Nothing sent.
    pub const ZERO: Self = Self {
        frames: [0; 3],
        bytes: [0; 3],
    };

    /// A frame of `bytes` bytes to `to` was sent.
    pub fn count(&mut self, to: Destination, bytes: u64) {
        let i = to as usize;
        if let (Some(f), Some(b)) = (self.frames.get_mut(i), self.bytes.get_mut(i)) {
            *f = f.saturating_add(1);
            *b = b.saturating_add(bytes);
        }
    }
}

/// Send and receive counters of one adapter.
#[derive(Debug, Default)]
pub struct Statistics {
    xmit: Direction,
    rcv: Direction,
}

impl Statistics {
    /// A frame of `bytes` bytes to `to` was sent (one frame; the send path counts a batch at
    /// once with [`Statistics::sent_tally`]).
    pub fn sent(&self, to: Destination, bytes: u64) {
        self.xmit.count(to, bytes);
    }

    /// The frames of a batch were sent.
    pub fn sent_tally(&self, tally: &SentTally) {
        let x = &self.xmit;
        for (counter, n) in x
            .frames
            .iter()
            .zip(tally.frames)
            .chain(x.bytes.iter().zip(tally.bytes))
        {
            if n != 0 {
                counter.fetch_add(n, Ordering::Relaxed);
            }
        }
    }

    /// A frame could not be sent (malformed).
    pub fn send_error(&self) {
        self.xmit.errors.fetch_add(1, Ordering::Relaxed);
    }

    /// A frame was refused because the adapter was not running.
    pub fn send_discarded(&self) {
        self.xmit.discards.fetch_add(1, Ordering::Relaxed);
    }

    /// A frame of `bytes` bytes to `to` was received and indicated.
    pub fn received(&self, to: Destination, bytes: u64) {
        self.rcv.count(to, bytes);
    }

    /// A received frame was dropped (no receive buffer free, or the adapter not running).
    pub fn receive_discarded(&self) {
        self.rcv.discards.fetch_add(1, Ordering::Relaxed);
    }

    /// A received frame was malformed (shorter than an Ethernet header or too long).
    pub fn receive_error(&self) {
        self.rcv.errors.fetch_add(1, Ordering::Relaxed);
    }

    /// The send counters now.
    #[must_use]
    pub fn xmit(&self) -> DirectionSnapshot {
        self.xmit.snapshot()
    }

    /// The receive counters now.
    #[must_use]
    pub fn rcv(&self) -> DirectionSnapshot {
        self.rcv.snapshot()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tally_adds_each_destination_once() {
        let stats = Statistics::default();
        let mut t = SentTally::default();
        t.count(Destination::Directed, 64);
        t.count(Destination::Directed, 100);
        t.count(Destination::Broadcast, 60);
        stats.sent_tally(&t);
        stats.sent_tally(&SentTally::default());
        let x = stats.xmit.snapshot();
        assert_eq!((x.directed_frames, x.directed_bytes), (2, 164));
        assert_eq!((x.broadcast_frames, x.broadcast_bytes), (1, 60));
        assert_eq!((x.multicast_frames, x.multicast_bytes), (0, 0));
    }

    #[test]
    fn destinations_are_classified_by_the_group_bit() {
        assert_eq!(Destination::of([0xFF; 6]), Destination::Broadcast);
        assert_eq!(
            Destination::of([0x01, 0, 0x5E, 0, 0, 1]),
            Destination::Multicast
        );
        assert_eq!(
            Destination::of([0x02, 0xDC, 0xB0, 0, 0, 1]),
            Destination::Directed
        );
    }

    #[test]
    fn the_packet_filter_decides_by_destination_class() {
        let own = [0x02, 0, 0, 0, 0, 1];
        let other = [0x02, 0, 0, 0, 0, 2];
        let group = [0x01, 0x80, 0xC2, 0, 0, 0x0E];
        let all = [0xFF; 6];
        let list = [group];
        assert!(
            !filter_accepts(0, own, &list, own),
            "filter 0 receives nothing"
        );
        assert!(filter_accepts(DIRECTED, own, &[], own));
        assert!(!filter_accepts(DIRECTED, own, &[], other));
        assert!(!filter_accepts(DIRECTED, own, &list, group));
        assert!(filter_accepts(MULTICAST, own, &list, group));
        assert!(!filter_accepts(MULTICAST, own, &[], group), "not listed");
        assert!(filter_accepts(ALL_MULTICAST, own, &[], group));
        assert!(!filter_accepts(MULTICAST, own, &list, all));
        assert!(filter_accepts(BROADCAST, own, &[], all));
        assert!(filter_accepts(PROMISCUOUS, own, &[], other));
    }

    #[test]
    fn counters_add_up() {
        let s = Statistics::default();
        s.sent(Destination::Directed, 100);
        s.sent(Destination::Directed, 60);
        s.sent(Destination::Broadcast, 64);
        s.send_discarded();
        s.send_error();
        let x = s.xmit();
        assert_eq!(
            (x.directed_frames, x.directed_bytes, x.broadcast_frames),
            (2, 160, 1)
        );
        assert_eq!(
            (x.frames(), x.bytes(), x.discards, x.errors),
            (3, 224, 1, 1)
        );
        assert_eq!(s.rcv(), DirectionSnapshot::default());
    }
}
