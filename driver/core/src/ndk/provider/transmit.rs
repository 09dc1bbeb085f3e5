//! How much the provider frames at a time: the packets a run of its DPC or timer sends
//! ([`TX_BUDGET`]), and how many of them share one acquisition of the link's lock
//! ([`Acquisition`]). Numbers the shell's transmit step obeys; nothing here frames or locks.

/// Packets a run of the provider's DPC or timer frames at most (the shell's
/// `Provider::tx_budget`): 64 packets are 64 KiB at the 1,024-byte path MTU, 5 µs of a
/// 100 Gb/s link (256 KiB at 4,096).
pub const TX_BUDGET: u32 = 64;

/// Packets are framed and queued under one acquisition of the link's lock while their
/// payloads add up to fewer than this many bytes (at most [`LOCKED_PACKETS`], the link drain's
/// batch): a window of small messages then takes the lock once per 8 packets or so, not once
/// per packet (the message rate depends on it), while a packet of 1 KiB or more of payload
/// keeps an acquisition of its own. Held across 8 packets of 4 KiB being copied and
/// checksummed, the lock kept another CPU's drain spinning past the 10 ms retransmission
/// timeout in a debug build (a 1 MiB WRITE; an earlier form bounded by packets alone).
pub const LOCKED_BYTES: usize = 1024;

/// At most this many packets under one acquisition (see [`LOCKED_BYTES`]).
pub const LOCKED_PACKETS: u32 = 8;

// A run's budget is whole acquisitions' worth of packets.
const _: () = assert!(TX_BUDGET >= LOCKED_PACKETS && TX_BUDGET.is_multiple_of(LOCKED_PACKETS));

/// What one acquisition of the link's lock has carried so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Acquisition {
    packets: u32,
    bytes: usize,
}

impl Acquisition {
    /// A fresh acquisition: nothing carried yet.
    pub const NEW: Self = Self {
        packets: 0,
        bytes: 0,
    };

    /// Whether the lock is to be released before the next packet (and this started again):
    /// [`LOCKED_PACKETS`] packets carried, or [`LOCKED_BYTES`] of payload.
    #[must_use]
    pub const fn is_spent(&self) -> bool {
        self.packets >= LOCKED_PACKETS || self.bytes >= LOCKED_BYTES
    }

    /// A packet of `payload` bytes was queued under it.
    pub const fn carried(&mut self, payload: usize) {
        self.packets = self.packets.saturating_add(1);
        self.bytes = self.bytes.saturating_add(payload);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_packets_share_an_acquisition_up_to_the_drains_batch() {
        let mut a = Acquisition::NEW;
        for _ in 0..LOCKED_PACKETS {
            assert!(!a.is_spent());
            a.carried(64);
        }
        assert!(a.is_spent(), "8 packets of 64 bytes");
    }

    #[test]
    fn a_kilobyte_of_payload_keeps_an_acquisition_of_its_own() {
        let mut a = Acquisition::NEW;
        a.carried(LOCKED_BYTES - 1);
        assert!(!a.is_spent(), "one byte short");
        a.carried(1);
        assert!(a.is_spent());
        let mut b = Acquisition::NEW;
        b.carried(4096);
        assert!(b.is_spent(), "a path MTU's packet");
        b.carried(usize::MAX);
        assert!(b.is_spent(), "saturates, never wraps");
    }
}
