//! What the provider's connections and queues tell the adapter's NDK state (spec §1.6,
//! §3.6-3.9): a connection established (the `Connect` or `Accept` counter, and an entry of
//! `OID_NDK_CONNECTIONS`), one that failed (`ConnectFailure`), one that ended, one whose QP
//! failed while it was established (`ConnectionError`, its entry removed), a CQ that overflowed
//! (`CQError`), a listener bound (an entry of `OID_NDK_LOCAL_ENDPOINTS`) and closed. The
//! connection manager's events are decided under the provider's lock, which cannot reach the
//! adapter's NDK state: they are noted here, and whoever holds both applies them as the
//! activities the synthetic workload also reports ([`crate::ndk::Activity`]).

use super::cm::{BindId, ConnId};
use super::fifo::Fifo;
use crate::ndk::tables::{Connection, Endpoint, EntryId};

/// Notes kept between two applications; beyond them a note is dropped (a counter misses one
/// event, an entry stays listed until the adapter closes) \[a choice: every run of the
/// doorbell applies them, before and after it moves the QPs' completions, and a pending note
/// rings it; a connection makes at most three before the next run (established, its QP's
/// error, its end) and a CQ one; 32 covers a burst of errors across several connections and
/// CQs at once\]. The shell allocates the storage this long, in pool memory, never on a
/// kernel stack.
pub const NOTES: usize = 32;

/// One note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Note {
    /// A connection established on the connector `id` (`active`: by `NdkConnect`).
    Established {
        /// The connector.
        id: ConnId,
        /// Which side.
        active: bool,
        /// Its entry.
        connection: Connection,
    },
    /// An `NdkConnect` failed.
    Failed,
    /// A listener bound.
    Listening {
        /// The listener.
        id: BindId,
        /// Its entry.
        endpoint: Endpoint,
    },
    /// A connection's entry to remove.
    Ended(EntryId),
    /// An endpoint's entry to remove.
    Unbound(EntryId),
    /// The QP of an established connection went to the error state before the consumer
    /// disconnected (`ConnectionError`): its entry to remove.
    ConnectionError(EntryId),
    /// A CQ overflowed (`CQError`).
    CqError,
}

/// The notes not applied yet, oldest first, over storage `S` the owner allocated (its length
/// is the capacity, [`NOTES`] in the driver).
#[derive(Debug)]
pub struct Notes<S> {
    notes: Fifo<S, Option<Note>>,
}

impl<S: AsRef<[Option<Note>]> + AsMut<[Option<Note>]>> Notes<S> {
    /// None, over `notes`.
    #[must_use]
    pub const fn new(notes: S) -> Self {
        Self {
            notes: Fifo::new(notes),
        }
    }

    /// Adds a note (dropped when full, see [`NOTES`]).
    pub fn push(&mut self, note: Note) {
        let _ = self.notes.push(Some(note));
    }

    /// Whether a note waits to be applied.
    #[must_use]
    pub const fn pending(&self) -> bool {
        !self.notes.is_empty()
    }

    /// Takes the oldest.
    pub fn pop(&mut self) -> Option<Note> {
        self.notes.pop().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: usize) -> EntryId {
        EntryId {
            slot: u32::try_from(n).unwrap(),
            stamp: 7,
        }
    }

    #[test]
    fn notes_come_out_oldest_first_across_the_wrap() {
        let mut n = Notes::new([None; 4]);
        assert!(!n.pending());
        assert_eq!(n.pop(), None);
        for round in 0..3usize {
            n.push(Note::Failed);
            n.push(Note::Ended(entry(round)));
            n.push(Note::CqError);
            assert!(n.pending());
            assert_eq!(n.pop(), Some(Note::Failed));
            assert_eq!(n.pop(), Some(Note::Ended(entry(round))));
            assert_eq!(n.pop(), Some(Note::CqError));
            assert!(!n.pending());
        }
    }

    #[test]
    fn a_note_past_the_capacity_is_dropped_and_the_rest_kept() {
        let mut n = Notes::new([None; NOTES]);
        for i in 0..NOTES + 3 {
            n.push(Note::Unbound(entry(i)));
        }
        for i in 0..NOTES {
            assert_eq!(n.pop(), Some(Note::Unbound(entry(i))));
        }
        assert_eq!(n.pop(), None, "the three past the capacity were dropped");
        // Room again once applied.
        n.push(Note::CqError);
        assert_eq!(n.pop(), Some(Note::CqError));
    }

    #[test]
    fn no_storage_keeps_no_note() {
        let mut n = Notes::new([]);
        n.push(Note::CqError);
        assert!(!n.pending());
        assert_eq!(n.pop(), None);
    }
}
