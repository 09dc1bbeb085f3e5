//! When the adapter transmits its LLDPDU and when a peer's information expires (802.1AB §9.2),
//! in milliseconds of whatever clock the host gives (NDIS timers on Windows, virtual time in the
//! simulator): pure state, no clock of its own, so tests of the 30 s interval and of TTL expiry
//! run in no time.
//!
//! Parameters: msgTxInterval 30 s, msgFastTx 1 s and msgTxHold 4 (802.1AB's defaults), so the TTL
//! advertised is 4 × 30 + 1 = 121 s; 5 fast frames after a start or a change (the project's
//! choice; 802.1AB's txFastInit default is 4).

/// msgTxInterval, milliseconds.
pub const TX_INTERVAL_MS: u64 = 30_000;
/// msgFastTx, milliseconds.
pub const FAST_TX_INTERVAL_MS: u64 = 1_000;
/// Frames sent msgFastTx apart after a start or a change.
pub const FAST_TX_COUNT: u8 = 5;
/// The TTL this adapter advertises, seconds: msgTxInterval × msgTxHold + 1.
pub const TTL_S: u16 = 121;

/// When the next LLDPDU is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxSchedule {
    next_ms: u64,
    fast_left: u8,
}

impl TxSchedule {
    /// A schedule starting at `now_ms` with fast transmission (a port coming up).
    #[must_use]
    pub const fn new(now_ms: u64) -> Self {
        Self {
            next_ms: now_ms,
            fast_left: FAST_TX_COUNT,
        }
    }

    /// The local configuration changed: fast transmission again, starting now.
    pub fn changed(&mut self, now_ms: u64) {
        *self = Self::new(now_ms);
    }

    /// Whether an LLDPDU is due at `now_ms`.
    #[must_use]
    pub const fn due(&self, now_ms: u64) -> bool {
        now_ms >= self.next_ms
    }

    /// When the next one is due (for arming the timer).
    #[must_use]
    pub const fn next_ms(&self) -> u64 {
        self.next_ms
    }

    /// An LLDPDU was sent at `now_ms`.
    pub fn sent(&mut self, now_ms: u64) {
        self.fast_left = self.fast_left.saturating_sub(1);
        let wait = if self.fast_left > 0 {
            FAST_TX_INTERVAL_MS
        } else {
            TX_INTERVAL_MS
        };
        self.next_ms = now_ms.saturating_add(wait);
    }
}

/// Peers tracked at once; a further one is refused (the QoS state already treats any second
/// peer as invalidating the remote set, so more precision buys nothing).
pub const MAX_NEIGHBORS: usize = 4;

/// The peers heard and when their information expires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Neighbors {
    entries: [Option<([u8; 6], u64)>; MAX_NEIGHBORS],
}

/// What hearing an LLDPDU did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heard {
    /// The peer's information is (still) valid until the time given.
    Valid,
    /// TTL 0: the peer is shutting down; its information is gone now.
    Shutdown,
    /// No room for another peer: ignored.
    TableFull,
}

impl Neighbors {
    /// No peer.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            entries: [None; MAX_NEIGHBORS],
        }
    }

    /// Whether `peer`'s information is held.
    #[must_use]
    pub fn contains(&self, peer: [u8; 6]) -> bool {
        self.entries.iter().flatten().any(|(p, _)| *p == peer)
    }

    /// An LLDPDU from `peer` with `ttl_s` arrived at `now_ms`.
    pub fn heard(&mut self, peer: [u8; 6], ttl_s: u16, now_ms: u64) -> Heard {
        if ttl_s == 0 {
            self.forget(peer);
            return Heard::Shutdown;
        }
        let expires = now_ms.saturating_add(u64::from(ttl_s).saturating_mul(1000));
        let slot = self
            .entries
            .iter()
            .position(|e| e.is_some_and(|(p, _)| p == peer))
            .or_else(|| self.entries.iter().position(Option::is_none));
        match slot.and_then(|i| self.entries.get_mut(i)) {
            Some(e) => {
                *e = Some((peer, expires));
                Heard::Valid
            }
            None => Heard::TableFull,
        }
    }

    /// Forgets `peer`.
    pub fn forget(&mut self, peer: [u8; 6]) {
        for e in &mut self.entries {
            if e.is_some_and(|(p, _)| p == peer) {
                *e = None;
            }
        }
    }

    /// Removes and returns one peer whose information has expired at `now_ms` (call until
    /// `None`; each becomes a `RemoteEvent::TtlExpired`).
    pub fn take_expired(&mut self, now_ms: u64) -> Option<[u8; 6]> {
        let e = self
            .entries
            .iter_mut()
            .find(|e| e.is_some_and(|(_, at)| now_ms >= at))?;
        e.take().map(|(p, _)| p)
    }

    /// The earliest expiry (for arming the timer).
    #[must_use]
    pub fn next_expiry_ms(&self) -> Option<u64> {
        self.entries.iter().flatten().map(|&(_, at)| at).min()
    }

    /// How many peers are valid.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.iter().flatten().count()
    }

    /// Whether none is.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
