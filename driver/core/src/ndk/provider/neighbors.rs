//! Where RoCEv2 peers are: an IP address to MAC address table the provider learns from the
//! frames it receives, standing in for the neighbor cache an RDMA NIC's provider reads from
//! TCP/IP (ARP, neighbor discovery). A frame to an address not seen yet goes to the broadcast
//! address: on the virtual wire (a hub) every adapter gets it, and only the one owning the
//! destination IP takes it; its answer teaches the sender the MAC. \[A choice: the NDKPI has
//! no neighbor interface; a real provider resolves through the OS.\]

/// Entries the driver keeps (the length of the storage it allocates); the oldest is replaced.
pub const NEIGHBORS: usize = 16;

/// The broadcast MAC address.
pub const BROADCAST: [u8; 6] = [0xFF; 6];

/// An IP address (IPv4 in the first 4 bytes) and whether it is IPv6.
pub type Ip = (bool, [u8; 16]);

/// One entry: an IP address and its MAC address.
pub type Entry = Option<(Ip, [u8; 6])>;

/// The table, over storage `S` the owner allocated (all `None` at the start; in the driver
/// [`NEIGHBORS`] entries of pool memory, so that no kernel stack frame ever holds it).
#[derive(Debug)]
pub struct Neighbors<S> {
    entries: S,
    next: usize,
}

impl<S: AsRef<[Entry]> + AsMut<[Entry]>> Neighbors<S> {
    /// Empty, over `entries` (all `None`).
    #[must_use]
    pub const fn new(entries: S) -> Self {
        Self { entries, next: 0 }
    }

    /// Records that `ip` is at `mac`.
    pub fn learn(&mut self, ip: Ip, mac: [u8; 6]) {
        let entries = self.entries.as_mut();
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
            .as_ref()
            .iter()
            .flatten()
            .find(|(i, _)| *i == ip)
            .map_or(BROADCAST, |(_, mac)| *mac)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(last: u8) -> Ip {
        let mut a = [0; 16];
        a[..4].copy_from_slice(&[192, 168, 1, last]);
        (false, a)
    }

    #[test]
    fn an_unknown_address_is_broadcast_until_learned() {
        let mut n = Neighbors::new([None; NEIGHBORS]);
        assert_eq!(n.mac(v4(2)), BROADCAST);
        n.learn(v4(2), [2, 0, 0, 0, 0, 2]);
        assert_eq!(n.mac(v4(2)), [2, 0, 0, 0, 0, 2]);
        // The same bytes as IPv6 are another address.
        assert_eq!(n.mac((true, v4(2).1)), BROADCAST);
    }

    #[test]
    fn a_move_updates_in_place_and_the_oldest_is_replaced_when_full() {
        let mut n = Neighbors::new([None; 3]);
        n.learn(v4(1), [1; 6]);
        n.learn(v4(1), [9; 6]);
        assert_eq!(n.mac(v4(1)), [9; 6], "moved, one entry");
        n.learn(v4(2), [2; 6]);
        n.learn(v4(3), [3; 6]);
        // Full: the fourth replaces the first written.
        n.learn(v4(4), [4; 6]);
        assert_eq!(n.mac(v4(1)), BROADCAST);
        assert_eq!(
            [n.mac(v4(2)), n.mac(v4(3)), n.mac(v4(4))],
            [[2; 6], [3; 6], [4; 6]]
        );
    }

    #[test]
    fn no_storage_learns_nothing() {
        let mut n = Neighbors::new([]);
        n.learn(v4(1), [1; 6]);
        assert_eq!(n.mac(v4(1)), BROADCAST);
    }
}
