//! The NDK connections and local endpoints the adapter has: what `OID_NDK_CONNECTIONS` and
//! `OID_NDK_LOCAL_ENDPOINTS` list (spec §3.8, §3.9) and what `ActiveConnection` counts.
//!
//! A table is an array of [`Slot`]s in pool memory the shell allocated at initialize (its size
//! comes from the `SimNdkMaxConnections` / `SimNdkMaxEndpoints` keywords). Entries are added and
//! removed from any CPU at DISPATCH_LEVEL (the activity hook) while a regular OID lists them and
//! `OID_SET_STATE` FALSE drains them, without a lock: each slot is a small state machine on one
//! atomic word (`FREE` -> `BUSY` -> `LIVE` -> `BUSY` -> `FREE`, each step claimed with a
//! compare-exchange and numbered by a generation), and its contents are atomic words written only
//! while the slot is `BUSY`. A reader copies a `LIVE` slot and keeps the copy only if the state
//! word did not change meanwhile (a seqlock), so it never lists a half-written entry.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

const FREE: u64 = 0;
const BUSY: u64 = 1;
const LIVE: u64 = 2;
const TAG: u64 = 3;

/// `AF_INET`
pub const AF_INET: u16 = 2;
/// `AF_INET6` (the Windows value)
pub const AF_INET6: u16 = 23;

/// An IPv4 or IPv6 socket address, as `SOCKADDR_INET` carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SockAddr {
    /// True for IPv6 (`AF_INET6`), false for IPv4 (`AF_INET`).
    pub v6: bool,
    /// The port, in host order (written in network order).
    pub port: u16,
    /// The address bytes in network order; IPv4 uses the first 4.
    pub addr: [u8; 16],
    /// `sin6_flowinfo` (IPv6 only).
    pub flowinfo: u32,
    /// `sin6_scope_id` (IPv6 only).
    pub scope_id: u32,
}

impl SockAddr {
    /// An IPv4 address and port.
    #[must_use]
    pub const fn v4(addr: [u8; 4], port: u16) -> Self {
        let mut a = [0u8; 16];
        a[0] = addr[0];
        a[1] = addr[1];
        a[2] = addr[2];
        a[3] = addr[3];
        Self {
            v6: false,
            port,
            addr: a,
            flowinfo: 0,
            scope_id: 0,
        }
    }

    /// An IPv6 address, port and scope id.
    #[must_use]
    pub const fn v6(addr: [u8; 16], port: u16, scope_id: u32) -> Self {
        Self {
            v6: true,
            port,
            addr,
            flowinfo: 0,
            scope_id,
        }
    }

    /// The same address with another port.
    #[must_use]
    pub const fn with_port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// The `SOCKADDR_INET` bytes (28): `SOCKADDR_IN` (16 bytes, zero-padded to 28) or
    /// `SOCKADDR_IN6`. Family in host order, port and flow information in network order.
    #[must_use]
    pub fn to_bytes(&self) -> [u8; SOCKADDR_INET_SIZE] {
        let mut b = [0u8; SOCKADDR_INET_SIZE];
        let family = if self.v6 { AF_INET6 } else { AF_INET };
        let (fam, rest) = b.split_at_mut(2);
        fam.copy_from_slice(&family.to_le_bytes());
        let (port, rest) = rest.split_at_mut(2);
        port.copy_from_slice(&self.port.to_be_bytes());
        if self.v6 {
            let (flow, rest) = rest.split_at_mut(4);
            flow.copy_from_slice(&self.flowinfo.to_be_bytes());
            let (addr, rest) = rest.split_at_mut(16);
            addr.copy_from_slice(&self.addr);
            if let Some(scope) = rest.get_mut(..4) {
                scope.copy_from_slice(&self.scope_id.to_le_bytes());
            }
        } else if let (Some(dst), Some(src)) = (rest.get_mut(..4), self.addr.get(..4)) {
            dst.copy_from_slice(src);
        }
        b
    }

    /// The length of its `SOCKADDR_IN` (16) or `SOCKADDR_IN6` (28).
    #[must_use]
    pub const fn sockaddr_len(&self) -> usize {
        if self.v6 { SOCKADDR_INET_SIZE } else { 16 }
    }

    /// Reads a `SOCKADDR_IN` or `SOCKADDR_IN6` a caller gave (family in host order, port and
    /// flow information in network order); `None` for another family or too few bytes for
    /// its family.
    #[must_use]
    pub fn from_bytes(bytes: &[u8]) -> Option<SockAddr> {
        let family = u16::from_le_bytes(bytes.get(..2)?.try_into().ok()?);
        let port = u16::from_be_bytes(bytes.get(2..4)?.try_into().ok()?);
        match family {
            AF_INET => {
                let addr: [u8; 4] = bytes.get(4..8)?.try_into().ok()?;
                bytes.get(..16)?;
                Some(SockAddr::v4(addr, port))
            }
            AF_INET6 => {
                let flowinfo = u32::from_be_bytes(bytes.get(4..8)?.try_into().ok()?);
                let addr: [u8; 16] = bytes.get(8..24)?.try_into().ok()?;
                let scope_id = u32::from_le_bytes(bytes.get(24..28)?.try_into().ok()?);
                Some(SockAddr {
                    flowinfo,
                    ..SockAddr::v6(addr, port, scope_id)
                })
            }
            _ => None,
        }
    }

    fn pack(&self, words: &mut [u64; 3]) {
        let (hi, lo) = self.addr.split_at(8);
        words[0] = u64::from_le_bytes(hi.try_into().unwrap_or([0; 8]));
        words[1] = u64::from_le_bytes(lo.try_into().unwrap_or([0; 8]));
        words[2] = u64::from(self.flowinfo) | (u64::from(self.scope_id) << 32);
    }

    fn unpack(v6: bool, port: u16, words: [u64; 3]) -> Self {
        let mut addr = [0u8; 16];
        let (hi, lo) = addr.split_at_mut(8);
        hi.copy_from_slice(&words[0].to_le_bytes());
        lo.copy_from_slice(&words[1].to_le_bytes());
        let [f0, f1, f2, f3, s0, s1, s2, s3] = words[2].to_le_bytes();
        Self {
            v6,
            port,
            addr,
            flowinfo: u32::from_le_bytes([f0, f1, f2, f3]),
            scope_id: u32::from_le_bytes([s0, s1, s2, s3]),
        }
    }
}

/// `sizeof(SOCKADDR_INET)`
pub const SOCKADDR_INET_SIZE: usize = 28;

/// Who owns an NDK object: a kernel consumer (NDK) or a user-mode process (ND/NDSPI).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Owner {
    /// A kernel-mode NDK consumer (SMB Direct, ...).
    #[default]
    Kernel,
    /// A user-mode ND consumer: its process id.
    User(u32),
}

/// One connection, as `NDIS_NDK_CONNECTION_ENTRY` describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Connection {
    /// The local address (and ND port).
    pub local: SockAddr,
    /// The remote address (and ND port).
    pub remote: SockAddr,
    /// The owner.
    pub owner: Owner,
    /// The ports of the underlying TCP connection (local, remote), listed as the odd entry when
    /// the technology maps ND connections onto TCP (iWARP).
    pub tcp_ports: (u16, u16),
}

/// One local endpoint, as `NDIS_NDK_LOCAL_ENDPOINT_ENTRY` describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Endpoint {
    /// The local address (and ND port).
    pub local: SockAddr,
    /// True for a listener, false for a shared endpoint.
    pub listener: bool,
    /// The owner.
    pub owner: Owner,
    /// The port of the underlying TCP endpoint (iWARP).
    pub tcp_port: u16,
}

/// Words per slot.
const WORDS: usize = 9;

/// One entry of a table, free or in use. 80 bytes of atomics; the tables are arrays of them.
#[derive(Debug)]
pub struct Slot {
    state: AtomicU64,
    words: [AtomicU64; WORDS],
}

impl Default for Slot {
    fn default() -> Self {
        Self::new()
    }
}

impl Slot {
    /// A free slot.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            state: AtomicU64::new(FREE),
            words: [const { AtomicU64::new(0) }; WORDS],
        }
    }

    fn write(&self, words: &[u64; WORDS]) {
        for (dst, v) in self.words.iter().zip(words) {
            dst.store(*v, Ordering::Relaxed);
        }
    }

    /// A consistent copy of a live slot, with the state word it was copied under.
    fn read(&self) -> Option<(u64, [u64; WORDS])> {
        let before = self.state.load(Ordering::Acquire);
        if before & TAG != LIVE {
            return None;
        }
        let mut words = [0u64; WORDS];
        for (dst, w) in words.iter_mut().zip(&self.words) {
            *dst = w.load(Ordering::Relaxed);
        }
        fence(Ordering::Acquire);
        (self.state.load(Ordering::Relaxed) == before).then_some((before, words))
    }
}

/// The next state word: the same slot, one generation later, with `tag`.
const fn next(state: u64, tag: u64) -> u64 {
    ((state >> 2).wrapping_add(1) << 2) | tag
}

/// Identifies one entry for its removal: the slot and the state word it was published with, so
/// that a stale id (the entry was drained, the slot reused) removes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EntryId {
    /// The slot index.
    pub slot: u32,
    /// The published state word.
    pub stamp: u64,
}

impl EntryId {
    /// The id as one 64-bit value: 22 bits of slot, 42 of generation (for handles across FFI).
    #[must_use]
    pub const fn to_u64(self) -> u64 {
        ((self.stamp >> 2) << 22) | (self.slot as u64 & 0x3F_FFFF)
    }

    /// The id back from [`EntryId::to_u64`].
    #[must_use]
    pub const fn from_u64(v: u64) -> Self {
        #[allow(
            clippy::cast_possible_truncation,
            reason = "masked to 22 bits just before"
        )]
        let slot = (v & 0x3F_FFFF) as u32;
        Self {
            slot,
            stamp: ((v >> 22) << 2) | LIVE,
        }
    }
}

/// A table of entries over an array of slots.
#[derive(Debug, Clone, Copy)]
pub struct Table<'a> {
    slots: &'a [Slot],
    live: &'a AtomicU32,
}

static NO_LIVE: AtomicU32 = AtomicU32::new(0);

impl Default for Table<'_> {
    fn default() -> Self {
        Self {
            slots: &[],
            live: &NO_LIVE,
        }
    }
}

/// Why an entry could not be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddError {
    /// Every slot is in use.
    Full,
}

impl<'a> Table<'a> {
    /// A table over `slots`, counting live entries in `live`.
    #[must_use]
    pub const fn new(slots: &'a [Slot], live: &'a AtomicU32) -> Self {
        Self { slots, live }
    }

    /// The number of slots.
    #[must_use]
    pub const fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// The number of live entries now.
    #[must_use]
    pub fn live(&self) -> u32 {
        self.live.load(Ordering::SeqCst)
    }

    /// Claims a free slot, writes `words` and publishes the entry.
    fn add(&self, words: &[u64; WORDS]) -> Result<EntryId, AddError> {
        for (index, slot) in self.slots.iter().enumerate() {
            let state = slot.state.load(Ordering::Relaxed);
            if state & TAG != FREE {
                continue;
            }
            let busy = next(state, BUSY);
            if slot
                .state
                .compare_exchange(state, busy, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                continue;
            }
            slot.write(words);
            self.live.fetch_add(1, Ordering::SeqCst);
            let live = next(busy, LIVE);
            slot.state.store(live, Ordering::SeqCst);
            return Ok(EntryId {
                slot: u32::try_from(index).unwrap_or(u32::MAX),
                stamp: live,
            });
        }
        Err(AddError::Full)
    }

    /// Removes the entry `id` if it is still the one published there; true if this call removed
    /// it.
    fn remove(&self, id: EntryId) -> bool {
        let Some(slot) = usize::try_from(id.slot)
            .ok()
            .and_then(|i| self.slots.get(i))
        else {
            return false;
        };
        let busy = next(id.stamp, BUSY);
        if slot
            .state
            .compare_exchange(id.stamp, busy, Ordering::SeqCst, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        self.live.fetch_sub(1, Ordering::SeqCst);
        slot.state.store(next(busy, FREE), Ordering::Release);
        true
    }

    /// Removes every live entry; returns how many this call removed.
    fn drain(&self) -> u32 {
        let mut removed = 0u32;
        for (index, slot) in self.slots.iter().enumerate() {
            let state = slot.state.load(Ordering::SeqCst);
            if state & TAG == LIVE {
                let id = EntryId {
                    slot: u32::try_from(index).unwrap_or(u32::MAX),
                    stamp: state,
                };
                if self.remove(id) {
                    removed = removed.saturating_add(1);
                }
            }
        }
        removed
    }

    /// Calls `f` with a consistent copy of each live entry, at most `limit` of them; returns how
    /// many it visited.
    fn visit(&self, limit: usize, mut f: impl FnMut(usize, &[u64; WORDS])) -> usize {
        let mut n = 0usize;
        for slot in self.slots {
            if n >= limit {
                break;
            }
            if let Some((_, words)) = slot.read() {
                f(n, &words);
                n = n.saturating_add(1);
            }
        }
        n
    }
}

fn owner_words(owner: Owner) -> (u64, u64) {
    match owner {
        Owner::Kernel => (0, 0),
        Owner::User(pid) => (1, u64::from(pid)),
    }
}

fn owner_of(flag: u64, pid: u64) -> Owner {
    if flag & 1 == 0 {
        Owner::Kernel
    } else {
        Owner::User(u32::try_from(pid & 0xFFFF_FFFF).unwrap_or(0))
    }
}

fn u16_at(word: u64, shift: u32) -> u16 {
    u16::try_from(word.checked_shr(shift).unwrap_or(0) & 0xFFFF).unwrap_or(0)
}

fn pack_connection(c: &Connection) -> [u64; WORDS] {
    let mut w = [0u64; WORDS];
    let (user, pid) = owner_words(c.owner);
    w[0] = u64::from(c.local.v6)
        | (u64::from(c.local.port) << 16)
        | (u64::from(c.remote.port) << 32)
        | (user << 48);
    w[1] = pid | (u64::from(c.tcp_ports.0) << 32) | (u64::from(c.tcp_ports.1) << 48);
    let mut local = [0u64; 3];
    c.local.pack(&mut local);
    let mut remote = [0u64; 3];
    c.remote.pack(&mut remote);
    w[2..5].copy_from_slice(&local);
    w[5..8].copy_from_slice(&remote);
    w
}

fn unpack_connection(w: &[u64; WORDS]) -> Connection {
    let v6 = w[0] & 1 != 0;
    Connection {
        local: SockAddr::unpack(v6, u16_at(w[0], 16), [w[2], w[3], w[4]]),
        remote: SockAddr::unpack(v6, u16_at(w[0], 32), [w[5], w[6], w[7]]),
        owner: owner_of(w[0] >> 48, w[1]),
        tcp_ports: (u16_at(w[1], 32), u16_at(w[1], 48)),
    }
}

fn pack_endpoint(e: &Endpoint) -> [u64; WORDS] {
    let mut w = [0u64; WORDS];
    let (user, pid) = owner_words(e.owner);
    w[0] = u64::from(e.local.v6)
        | (u64::from(e.local.port) << 16)
        | (u64::from(e.tcp_port) << 32)
        | (user << 48)
        | (u64::from(e.listener) << 56);
    w[1] = pid;
    let mut local = [0u64; 3];
    e.local.pack(&mut local);
    w[2..5].copy_from_slice(&local);
    w
}

fn unpack_endpoint(w: &[u64; WORDS]) -> Endpoint {
    Endpoint {
        local: SockAddr::unpack(w[0] & 1 != 0, u16_at(w[0], 16), [w[2], w[3], w[4]]),
        listener: (w[0] >> 56) & 1 != 0,
        owner: owner_of(w[0] >> 48, w[1]),
        tcp_port: u16_at(w[0], 32),
    }
}

/// The connection table.
#[derive(Debug, Clone, Copy, Default)]
pub struct Connections<'a>(pub Table<'a>);

impl Connections<'_> {
    /// Adds a connection.
    ///
    /// # Errors
    /// [`AddError::Full`] when every slot is in use.
    pub fn add(&self, c: &Connection) -> Result<EntryId, AddError> {
        self.0.add(&pack_connection(c))
    }

    /// Removes a connection; false if it was not there (any more).
    pub fn remove(&self, id: EntryId) -> bool {
        self.0.remove(id)
    }

    /// Removes every connection.
    pub fn drain(&self) -> u32 {
        self.0.drain()
    }

    /// Live connections.
    #[must_use]
    pub fn live(&self) -> u32 {
        self.0.live()
    }

    /// Calls `f(i, connection)` for at most `limit` live connections; returns how many.
    pub fn visit(&self, limit: usize, mut f: impl FnMut(usize, &Connection)) -> usize {
        self.0.visit(limit, |i, w| f(i, &unpack_connection(w)))
    }
}

/// The local endpoint table.
#[derive(Debug, Clone, Copy, Default)]
pub struct Endpoints<'a>(pub Table<'a>);

impl Endpoints<'_> {
    /// Adds an endpoint.
    ///
    /// # Errors
    /// [`AddError::Full`] when every slot is in use.
    pub fn add(&self, e: &Endpoint) -> Result<EntryId, AddError> {
        self.0.add(&pack_endpoint(e))
    }

    /// Removes an endpoint; false if it was not there (any more).
    pub fn remove(&self, id: EntryId) -> bool {
        self.0.remove(id)
    }

    /// Removes every endpoint.
    pub fn drain(&self) -> u32 {
        self.0.drain()
    }

    /// Live endpoints.
    #[must_use]
    pub fn live(&self) -> u32 {
        self.0.live()
    }

    /// Calls `f(i, endpoint)` for at most `limit` live endpoints; returns how many.
    pub fn visit(&self, limit: usize, mut f: impl FnMut(usize, &Endpoint)) -> usize {
        self.0.visit(limit, |i, w| f(i, &unpack_endpoint(w)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn table(n: usize) -> (Vec<Slot>, AtomicU32) {
        ((0..n).map(|_| Slot::new()).collect(), AtomicU32::new(0))
    }

    #[test]
    fn sockaddr_bytes_follow_sockaddr_in_and_in6() {
        let v4 = SockAddr::v4([192, 168, 1, 2], 445).to_bytes();
        assert_eq!(&v4[..8], &[2, 0, 0x01, 0xBD, 192, 168, 1, 2]);
        assert!(v4[8..].iter().all(|b| *b == 0));
        let mut a = [0u8; 16];
        a[0] = 0xFE;
        a[1] = 0x80;
        a[15] = 1;
        let v6 = SockAddr::v6(a, 5445, 7).to_bytes();
        assert_eq!(&v6[..4], &[23, 0, 0x15, 0x45]);
        assert_eq!(&v6[4..8], &[0; 4]);
        assert_eq!(&v6[8..24], &a);
        assert_eq!(&v6[24..28], &[7, 0, 0, 0]);
    }

    #[test]
    fn entries_round_trip_through_the_slots() {
        let (slots, live) = table(4);
        let t = Connections(Table::new(&slots, &live));
        let mut a = [0u8; 16];
        a[0] = 0x20;
        a[15] = 9;
        let c = Connection {
            local: SockAddr::v6(a, 1000, 3),
            remote: SockAddr::v6(a, 2000, 3),
            owner: Owner::User(4242),
            tcp_ports: (50_000, 445),
        };
        let id = t.add(&c).unwrap();
        let k = Connection {
            local: SockAddr::v4([10, 0, 0, 1], 1),
            remote: SockAddr::v4([10, 0, 0, 2], 2),
            ..Connection::default()
        };
        t.add(&k).unwrap();
        let mut seen = Vec::new();
        assert_eq!(t.visit(10, |_, x| seen.push(*x)), 2);
        assert_eq!(seen, [c, k]);
        assert_eq!(t.live(), 2);
        assert!(t.remove(id));
        assert!(!t.remove(id), "a second removal finds nothing");
        assert_eq!(t.live(), 1);
        assert_eq!(EntryId::from_u64(id.to_u64()), id);

        let (slots, live) = table(2);
        let e = Endpoints(Table::new(&slots, &live));
        let ep = Endpoint {
            local: SockAddr::v4([10, 1, 2, 3], 445),
            listener: true,
            owner: Owner::Kernel,
            tcp_port: 445,
        };
        e.add(&ep).unwrap();
        e.visit(1, |_, x| assert_eq!(*x, ep));
    }

    #[test]
    fn a_full_table_refuses_and_a_drain_empties_it() {
        let (slots, live) = table(3);
        let t = Connections(Table::new(&slots, &live));
        let ids: Vec<_> = (0..3)
            .map(|i| t.add(&Connection::default().clone_with_port(i)).unwrap())
            .collect();
        assert_eq!(t.add(&Connection::default()), Err(AddError::Full));
        assert_eq!(t.drain(), 3);
        assert_eq!(t.live(), 0);
        assert!(
            ids.iter().all(|id| !t.remove(*id)),
            "stale ids remove nothing"
        );
        let again = t.add(&Connection::default()).unwrap();
        assert_ne!(again, ids[0], "a reused slot has a new generation");
        assert_eq!(t.visit(0, |_, _| {}), 0, "limit 0 visits nothing");
        let empty = Connections::default();
        assert_eq!(empty.add(&Connection::default()), Err(AddError::Full));
        assert!(!empty.remove(again));
    }

    #[test]
    fn concurrent_adds_removes_and_drains_keep_the_live_count_exact() {
        let (slots, live) = table(64);
        let t = Connections(Table::new(&slots, &live));
        std::thread::scope(|s| {
            for k in 0..4u16 {
                s.spawn(move || {
                    for i in 0..2000u16 {
                        if let Ok(id) = t.add(&Connection::default().clone_with_port(k + i))
                            && i % 3 != 0
                        {
                            t.remove(id);
                        }
                    }
                });
            }
            s.spawn(|| {
                for _ in 0..50 {
                    t.drain();
                    t.visit(64, |_, _| {});
                }
            });
        });
        let mut n = 0;
        t.visit(64, |_, _| n += 1);
        assert_eq!(n, t.live() as usize);
    }

    impl Connection {
        fn clone_with_port(&self, port: u16) -> Self {
            let mut c = *self;
            c.local.port = port;
            c
        }
    }

    #[test]
    fn sockaddr_bytes_round_trip() {
        let v4 = SockAddr::v4([10, 0, 0, 1], 445);
        let b = v4.to_bytes();
        assert_eq!(SockAddr::from_bytes(&b[..16]), Some(v4));
        assert_eq!(SockAddr::from_bytes(&b[..15]), None);
        let v6 = SockAddr {
            flowinfo: 7,
            ..SockAddr::v6(
                [0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
                9000,
                3,
            )
        };
        let b = v6.to_bytes();
        assert_eq!(SockAddr::from_bytes(&b), Some(v6));
        assert_eq!(SockAddr::from_bytes(&b[..27]), None);
        assert_eq!(v6.sockaddr_len(), 28);
        assert_eq!(SockAddr::from_bytes(&[0xFF, 0xFF, 0, 0]), None);
    }
}
