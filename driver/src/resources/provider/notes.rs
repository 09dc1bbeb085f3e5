//! What the provider's connections and queues tell the adapter's NDK state (spec §1.6,
//! §3.6-3.9): a connection established (the `Connect` or `Accept` counter, and an entry of
//! `OID_NDK_CONNECTIONS`), one that failed (`ConnectFailure`), one that ended, one whose QP
//! failed while it was established (`ConnectionError`, its entry removed), a CQ that overflowed
//! (`CQError`), a listener bound (an entry of `OID_NDK_LOCAL_ENDPOINTS`) and closed. The connection manager's events are
//! decided under the provider's lock, which cannot reach the adapter context (imports point
//! down): they are noted here, and the caller that holds the context applies them
//! (`execute::rdma::apply_notes`) as the activities the synthetic workload also reports
//! (`dcbndk_core::ndk::Activity`). The entry ids the tables give back are kept in the
//! connector's or listener's slot, so that its end removes exactly its entry.

use dcbndk_core::ndk::provider::cm::{BindId, ConnId};
use dcbndk_core::ndk::tables::{Connection, Endpoint, EntryId};

use super::Provider;
use crate::resources::memory::PoolArray;

/// Notes kept between two applications; beyond them a note is dropped (a counter misses one
/// event, an entry stays listed until the adapter closes) \[a choice: every run of the
/// doorbell applies them, before and after it moves the QPs' completions, and a pending note
/// rings it (`execute::rdma::schedule`); a connection makes at most three before the next run
/// (established, its QP's error, its end) and a CQ one; 32 covers a burst of errors across
/// several connections and CQs at once, in pool memory, never on a kernel stack\].
pub const NOTES: usize = 32;

/// One note.
#[derive(Debug, Clone, Copy)]
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

/// The notes not applied yet, oldest first, over pool memory of [`NOTES`] entries (allocated
/// with the provider's other tables: no kernel stack frame holds the queue).
pub struct Notes {
    notes: PoolArray<Option<Note>>,
    head: usize,
    len: usize,
}

impl Notes {
    /// None, over `notes` (all `None`).
    #[must_use]
    pub const fn new(notes: PoolArray<Option<Note>>) -> Self {
        Self {
            notes,
            head: 0,
            len: 0,
        }
    }

    /// Adds a note (dropped when full, see [`NOTES`]).
    pub fn push(&mut self, note: Note) {
        if self.len >= NOTES {
            return;
        }
        let at = self
            .head
            .saturating_add(self.len)
            .checked_rem(NOTES)
            .unwrap_or(0);
        if let Some(slot) = self.notes.as_mut_slice().get_mut(at) {
            *slot = Some(note);
            self.len = self.len.saturating_add(1);
        }
    }

    /// Whether a note waits to be applied.
    #[must_use]
    pub const fn pending(&self) -> bool {
        self.len > 0
    }

    /// Takes the oldest.
    pub fn pop(&mut self) -> Option<Note> {
        if self.len == 0 {
            return None;
        }
        let note = self
            .notes
            .as_mut_slice()
            .get_mut(self.head)
            .and_then(Option::take);
        self.head = self.head.saturating_add(1).checked_rem(NOTES).unwrap_or(0);
        self.len = self.len.saturating_sub(1);
        note
    }
}

impl Provider {
    /// Records the table entry of the connection of connector `id`; `false` when the connector
    /// is gone (the caller removes the entry).
    pub fn set_connection_entry(&mut self, id: ConnId, entry: EntryId) -> bool {
        match self
            .connectors
            .as_mut_slice()
            .get_mut(id.index())
            .filter(|c| c.id == Some(id))
        {
            Some(c) => {
                c.entry = Some(entry);
                true
            }
            None => false,
        }
    }

    /// Records the table entry of listener or shared endpoint `id`; `false` when it is gone.
    pub fn set_endpoint_entry(&mut self, id: BindId, entry: EntryId) -> bool {
        if let Some(e) = self
            .endpoints
            .as_mut_slice()
            .get_mut(id.index())
            .filter(|e| e.id == Some(id))
        {
            e.entry = Some(entry);
            return true;
        }
        match self
            .listeners
            .as_mut_slice()
            .get_mut(id.index())
            .filter(|l| l.id == Some(id))
        {
            Some(l) => {
                l.entry = Some(entry);
                true
            }
            None => false,
        }
    }
}
