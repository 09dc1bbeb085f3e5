//! Where RoCEv2 peers are: an IP address to MAC address table the provider learns
//! from the frames it receives, standing in for the neighbor cache an RDMA NIC's provider reads
//! from TCP/IP (ARP, neighbor discovery). A frame to an address not seen yet goes to the
//! broadcast address: on the virtual wire (a hub) every adapter gets it, and only the one owning
//! the destination IP takes it (`crate::execute::rdma`); its answer teaches the sender the MAC.
//! \[A choice: the NDKPI has no neighbor interface; a real provider resolves through the OS.\]

use crate::resources::memory::PoolArray;

/// Entries kept; the oldest is replaced.
pub const NEIGHBORS: usize = 16;

/// The broadcast MAC address.
pub const BROADCAST: [u8; 6] = [0xFF; 6];

/// An IP address (IPv4 in the first 4 bytes) and whether it is IPv6.
pub type Ip = (bool, [u8; 16]);

/// One entry: an IP address and its MAC address.
pub type Entry = Option<(Ip, [u8; 6])>;

/// The table, over pool memory of [`NEIGHBORS`] entries (allocated with the provider's other
/// tables, so that no kernel stack frame ever holds it).
pub struct Neighbors {
    entries: PoolArray<Entry>,
    next: usize,
}

impl Neighbors {
    /// Empty, over `entries` (all `None`).
    #[must_use]
    pub const fn new(entries: PoolArray<Entry>) -> Self {
        Self { entries, next: 0 }
    }

    /// Records that `ip` is at `mac`.
    pub fn learn(&mut self, ip: Ip, mac: [u8; 6]) {
        let entries = self.entries.as_mut_slice();
        if let Some(e) = entries.iter_mut().flatten().find(|(i, _)| *i == ip) {
            e.1 = mac;
            return;
        }
        let len = entries.len();
        if let Some(slot) = entries.get_mut(self.next) {
            *slot = Some((ip, mac));
        }
        self.next = self.next.saturating_add(1).checked_rem(len).unwrap_or(0);
    }

    /// Where `ip` is, or the broadcast address.
    #[must_use]
    pub fn mac(&self, ip: Ip) -> [u8; 6] {
        self.entries
            .as_slice()
            .iter()
            .flatten()
            .find(|(i, _)| *i == ip)
            .map_or(BROADCAST, |(_, mac)| *mac)
    }
}
