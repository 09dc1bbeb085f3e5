//! The provider's side of the connection manager's connectors (ndkpi.md §4): per connector what
//! the CM does not keep: the object the consumer holds, the completion of each request in
//! progress (§1.2: `NdkConnect`, `NdkCompleteConnect`, `NdkAccept` and `NdkDisconnect` pend
//! until the CM's outcome), its disconnect-event callback, and its connection's entry in
//! `OID_NDK_CONNECTIONS` once listed.
//!
//! Keyed by the shell's opaque handles, as [`super::bindings`] is: `O` the object, `R` a
//! request's completion, `E` the disconnect callback. What the adapter's tables must learn comes
//! back as [`Note`]s.

use core::marker::PhantomData;

use super::cm::{Cm, CmStatus, ConnId, Request};
use super::notes::Note;
use crate::ndk::tables::EntryId;

/// The requests a connector may have in progress at once, one of each kind.
const REQUESTS: usize = 4;

/// The place of a request's completion in a slot.
const fn request_index(r: Request) -> usize {
    match r {
        Request::Connect => 0,
        Request::CompleteConnect => 1,
        Request::Accept => 2,
        Request::Disconnect => 3,
    }
}

/// One connector's slot (same index as the CM's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectorSlot<O, R, E> {
    /// The CM's id (`None`: free).
    id: Option<ConnId>,
    /// The object the consumer holds (`None` until the shell has made it).
    object: Option<O>,
    /// The completions of the requests in progress, by [`Request`].
    pending: [Option<R>; REQUESTS],
    /// `NdkDisconnectEventCallback`, given by `NdkAccept` or `NdkCompleteConnect`.
    disconnect: Option<E>,
    /// Its connection's entry in the adapter's table (`OID_NDK_CONNECTIONS`).
    entry: Option<EntryId>,
}

impl<O, R: Copy, E> ConnectorSlot<O, R, E> {
    /// A free slot.
    pub const FREE: Self = Self {
        id: None,
        object: None,
        pending: [None; REQUESTS],
        disconnect: None,
        entry: None,
    };
}

/// The handle types a table holds, for its `PhantomData` (it owns none of them itself: they
/// are in its storage).
type Handles<O, R, E> = fn() -> (O, R, E);

/// The connectors, one slot per CM connector, over storage the shell allocates.
#[derive(Debug)]
pub struct Connectors<S, O, R, E> {
    slots: S,
    _slot: PhantomData<Handles<O, R, E>>,
}

impl<S, O, R, E> Connectors<S, O, R, E>
where
    S: AsRef<[ConnectorSlot<O, R, E>]> + AsMut<[ConnectorSlot<O, R, E>]>,
    O: Copy,
    R: Copy,
    E: Copy,
{
    /// None open, over `slots` (one per CM connector).
    #[must_use]
    pub const fn new(slots: S) -> Self {
        Self {
            slots,
            _slot: PhantomData,
        }
    }

    fn slot(&mut self, id: ConnId) -> Option<&mut ConnectorSlot<O, R, E>> {
        self.slots
            .as_mut()
            .get_mut(id.index())
            .filter(|c| c.id == Some(id))
    }

    /// The slot of the new connector `id`.
    fn take(&mut self, id: ConnId) {
        if let Some(slot) = self.slots.as_mut().get_mut(id.index()) {
            *slot = ConnectorSlot {
                id: Some(id),
                ..ConnectorSlot::FREE
            };
        }
    }

    /// `NdkCreateConnector`.
    ///
    /// # Errors
    /// The CM's (`INSUFFICIENT_RESOURCES` when every connector is taken).
    pub fn create(&mut self, cm: &mut Cm<'_>) -> Result<ConnId, CmStatus> {
        let id = cm.create_connector()?;
        self.take(id);
        Ok(id)
    }

    /// The passive connector `id` the CM made for a connect event (§4.2 step 2).
    pub fn passive(&mut self, id: ConnId) {
        self.take(id);
    }

    /// The id of the connector in slot `index`, if it is open.
    #[must_use]
    pub fn at(&self, index: usize) -> Option<ConnId> {
        self.slots.as_ref().get(index).and_then(|c| c.id)
    }

    /// How many slots the table has (one per CM connector).
    #[must_use]
    pub fn slots(&self) -> usize {
        self.slots.as_ref().len()
    }

    /// Whether `id` is an open connector.
    ///
    /// # Errors
    /// `INVALID_HANDLE` when it is not.
    pub fn check(&self, id: ConnId) -> Result<(), CmStatus> {
        match self.slots.as_ref().get(id.index()) {
            Some(c) if c.id == Some(id) => Ok(()),
            _ => Err(CmStatus::InvalidHandle),
        }
    }

    /// Records the object of the connector `id`, just made.
    pub fn set_object(&mut self, id: ConnId, object: O) {
        if let Some(c) = self.slot(id) {
            c.object = Some(object);
        }
    }

    /// Records the table entry of the connection of connector `id`; `false` when it is gone (the
    /// caller removes the entry).
    pub fn set_entry(&mut self, id: ConnId, entry: EntryId) -> bool {
        match self.slot(id) {
            Some(c) => {
                c.entry = Some(entry);
                true
            }
            None => false,
        }
    }

    /// The table entry of the connection of connector `id`, taken (its connection ended or
    /// failed: the caller notes which).
    pub fn take_entry(&mut self, id: ConnId) -> Option<EntryId> {
        self.slot(id).and_then(|c| c.entry.take())
    }

    /// A request of connector `id` pends with `completion` until the CM's outcome.
    pub fn set_pending(&mut self, id: ConnId, request: Request, completion: R) {
        if let Some(p) = self
            .slot(id)
            .and_then(|c| c.pending.get_mut(request_index(request)))
        {
            *p = Some(completion);
        }
    }

    /// The completion of connector `id`'s `request`, taken (the CM's outcome came).
    pub fn take_pending(&mut self, id: ConnId, request: Request) -> Option<R> {
        self.slot(id)
            .and_then(|c| c.pending.get_mut(request_index(request)))
            .and_then(Option::take)
    }

    /// Records connector `id`'s disconnect-event callback.
    pub fn set_disconnect(&mut self, id: ConnId, event: E) {
        if let Some(c) = self.slot(id) {
            c.disconnect = Some(event);
        }
    }

    /// Connector `id`'s disconnect-event callback, if it was given one.
    #[must_use]
    pub fn disconnect_event(&self, id: ConnId) -> Option<E> {
        self.slots
            .as_ref()
            .get(id.index())
            .filter(|c| c.id == Some(id))
            .and_then(|c| c.disconnect)
    }

    /// `NdkCloseConnector`: an abortive end of its connection (§4.4). The QP slot it joined
    /// (the caller flushes it), its object, and the note its connection's entry owes.
    pub fn close(
        &mut self,
        cm: &mut Cm<'_>,
        id: ConnId,
    ) -> (Option<usize>, Option<O>, Option<Note>) {
        let qp = cm.close_connector(id).ok().flatten();
        let Some(c) = self.slot(id) else {
            return (qp, None, None);
        };
        let freed = *c;
        *c = ConnectorSlot::FREE;
        (qp, freed.object, freed.entry.map(Note::Ended))
    }

    /// The connections' table entries still listed, taken (the adapter's close removes them
    /// from the adapter's tables itself).
    pub fn take_entries(&mut self, mut f: impl FnMut(EntryId)) {
        for c in self.slots.as_mut() {
            if let Some(entry) = c.entry.take() {
                f(entry);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::boxed::Box;
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::ndk::Profile;
    use crate::ndk::provider::cm::{BindSlot, CmConfig, CmStorage, ConnSlot};
    use crate::ndk::tables::SockAddr;

    fn cm() -> Cm<'static> {
        let storage = CmStorage {
            conns: Box::leak(vec![ConnSlot::FREE; 4].into_boxed_slice()),
            binds: Box::leak(vec![BindSlot::FREE; 4].into_boxed_slice()),
        };
        let mut cm = Cm::new(CmConfig::new(&Profile::ROCE_V2_100G), storage);
        cm.set_addresses(&[SockAddr::v4([10, 0, 0, 1], 0)]);
        cm
    }

    /// Objects, completions and callbacks as the shell's opaque handles: numbers here.
    type Table = Connectors<Vec<ConnectorSlot<u32, u32, u32>>, u32, u32, u32>;

    fn table() -> Table {
        Connectors::new(vec![ConnectorSlot::FREE; 4])
    }

    #[test]
    fn each_request_keeps_its_own_completion_until_its_outcome() {
        let (mut cm, mut t) = (cm(), table());
        let id = t.create(&mut cm).unwrap();
        assert_eq!((t.at(id.index()), t.check(id)), (Some(id), Ok(())));
        t.set_pending(id, Request::Connect, 1);
        t.set_pending(id, Request::Disconnect, 4);
        assert_eq!(t.take_pending(id, Request::Accept), None);
        assert_eq!(t.take_pending(id, Request::Connect), Some(1));
        assert_eq!(t.take_pending(id, Request::Connect), None, "taken once");
        assert_eq!(t.take_pending(id, Request::Disconnect), Some(4));
        t.set_disconnect(id, 9);
        assert_eq!(t.disconnect_event(id), Some(9));
    }

    #[test]
    fn a_close_frees_the_slot_and_ends_its_connections_entry() {
        let (mut cm, mut t) = (cm(), table());
        let id = t.create(&mut cm).unwrap();
        t.set_object(id, 7);
        let entry = EntryId { slot: 2, stamp: 4 };
        assert!(t.set_entry(id, entry));
        t.set_pending(id, Request::Connect, 1);
        assert_eq!(
            t.close(&mut cm, id),
            (None, Some(7), Some(Note::Ended(entry)))
        );
        assert_eq!(t.check(id), Err(CmStatus::InvalidHandle));
        assert_eq!(
            t.take_pending(id, Request::Connect),
            None,
            "nothing survives the close"
        );
        assert!(!t.set_entry(id, entry));
        assert_eq!(t.close(&mut cm, id), (None, None, None), "closed once");
    }

    #[test]
    fn the_adapters_close_takes_every_listed_entry_once() {
        let (mut cm, mut t) = (cm(), table());
        let a = t.create(&mut cm).unwrap();
        let b = t.create(&mut cm).unwrap();
        assert!(t.set_entry(a, EntryId { slot: 1, stamp: 4 }));
        assert!(t.set_entry(b, EntryId { slot: 2, stamp: 4 }));
        assert_eq!(t.take_entry(b), Some(EntryId { slot: 2, stamp: 4 }));
        let mut taken = Vec::new();
        t.take_entries(|e| taken.push(e));
        assert_eq!(taken, [EntryId { slot: 1, stamp: 4 }]);
        t.take_entries(|e| taken.push(e));
        assert_eq!(taken.len(), 1, "taken once");
    }
}
