//! The provider's side of the connection manager's bindings (ndkpi.md §4.1, §2.10): its
//! listeners and its shared endpoints, each a CM binding ([`super::cm`] decides), each with
//! what the CM does not keep: the object the consumer holds, one more handle (a listener's
//! connect-event callback; a shared endpoint's close that waits for the connectors using it,
//! §1.3: an antecedent's close pends until its successors close), and its entry in
//! `OID_NDK_LOCAL_ENDPOINTS` once listed. The provider has one table of listeners and one of
//! shared endpoints, each slot at its binding's index.
//!
//! Keyed by the shell's opaque handles, as `datapath::link::Link<T>` is: `O` the object, `X`
//! the one more handle; the core never looks inside either. What the adapter's tables must
//! learn comes back as [`Note`]s, for the provider's notes queue.

use core::marker::PhantomData;

use super::cm::{BindId, Cm, CmStatus};
use super::notes::Note;
use crate::ndk::tables::{Endpoint, EntryId, SockAddr};

/// One binding's slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BindingSlot<O, X> {
    /// The CM's id (`None`: free).
    id: Option<BindId>,
    /// The object the consumer holds (`None` until the shell has made it).
    object: Option<O>,
    /// A listener's connect-event callback; a shared endpoint's pending close.
    held: Option<X>,
    /// Its entry in the adapter's table (`OID_NDK_LOCAL_ENDPOINTS`).
    entry: Option<EntryId>,
}

impl<O, X> BindingSlot<O, X> {
    /// A free slot.
    pub const FREE: Self = Self {
        id: None,
        object: None,
        held: None,
        entry: None,
    };
}

/// What `NdkCloseSharedEndpoint` does now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointClose {
    /// Closed: free the object, `STATUS_SUCCESS`.
    Now,
    /// Connectors use it: `STATUS_PENDING`, completed when the last of them closes
    /// ([`Bindings::retry_endpoint_closes`]).
    Pending,
}

/// A table of bindings, one slot per CM binding, over storage the shell allocates.
#[derive(Debug)]
pub struct Bindings<S, O, X> {
    slots: S,
    _slot: PhantomData<fn() -> (O, X)>,
}

/// What a listed binding is in `OID_NDK_LOCAL_ENDPOINTS`: its local address, and in iWARP mode
/// the TCP port it pairs with, its ND port.
fn listed(id: BindId, local: SockAddr, listener: bool) -> Note {
    Note::Listening {
        id,
        endpoint: Endpoint {
            local,
            listener,
            tcp_port: local.port,
            ..Endpoint::default()
        },
    }
}

impl<S, O, X> Bindings<S, O, X>
where
    S: AsRef<[BindingSlot<O, X>]> + AsMut<[BindingSlot<O, X>]>,
    O: Copy,
    X: Copy,
{
    /// None open, over `slots` (one per CM binding).
    #[must_use]
    pub const fn new(slots: S) -> Self {
        Self {
            slots,
            _slot: PhantomData,
        }
    }

    /// How many slots the table has (one per CM binding).
    #[must_use]
    pub fn slots(&self) -> usize {
        self.slots.as_ref().len()
    }

    /// The id of the binding in slot `index`, if it is open.
    #[must_use]
    pub fn at(&self, index: usize) -> Option<BindId> {
        self.slots.as_ref().get(index).and_then(|b| b.id)
    }

    /// The slot of the new binding `id`, with `held`.
    fn take(&mut self, id: BindId, held: Option<X>) {
        if let Some(slot) = self.slots.as_mut().get_mut(id.index()) {
            *slot = BindingSlot {
                id: Some(id),
                held,
                ..BindingSlot::FREE
            };
        }
    }

    fn slot(&mut self, id: BindId) -> Option<&mut BindingSlot<O, X>> {
        self.slots
            .as_mut()
            .get_mut(id.index())
            .filter(|b| b.id == Some(id))
    }

    /// The handle the binding `id` holds, if it is open and holds one.
    #[must_use]
    pub fn held(&self, id: BindId) -> Option<X> {
        self.slots
            .as_ref()
            .get(id.index())
            .filter(|b| b.id == Some(id))
            .and_then(|b| b.held)
    }

    /// Records the object of the binding `id`, just made.
    pub fn set_object(&mut self, id: BindId, object: O) {
        if let Some(b) = self.slot(id) {
            b.object = Some(object);
        }
    }

    /// Records the table entry of the binding `id`; `false` when it is gone (the caller
    /// removes the entry).
    pub fn set_entry(&mut self, id: BindId, entry: EntryId) -> bool {
        match self.slot(id) {
            Some(b) => {
                b.entry = Some(entry);
                true
            }
            None => false,
        }
    }

    /// Frees the slot of the binding `id` (its CM binding is gone): its object, if it had one,
    /// and the note that takes its entry out of the adapter's table, if it was listed.
    pub fn free(&mut self, id: BindId) -> (Option<O>, Option<Note>) {
        let Some(b) = self.slot(id) else {
            return (None, None);
        };
        let freed = *b;
        *b = BindingSlot::FREE;
        (freed.object, freed.entry.map(Note::Unbound))
    }

    /// The table entries of the bindings still listed, taken (the adapter's close removes
    /// them from the adapter's tables itself).
    pub fn take_entries(&mut self, mut f: impl FnMut(EntryId)) {
        for b in self.slots.as_mut() {
            if let Some(entry) = b.entry.take() {
                f(entry);
            }
        }
    }

    /// `NdkCreateListener` with its connect-event callback `event`: a CM binding, not bound yet.
    ///
    /// # Errors
    /// The CM's (`INSUFFICIENT_RESOURCES` when every binding is taken).
    pub fn create_listener(&mut self, cm: &mut Cm<'_>, event: X) -> Result<BindId, CmStatus> {
        let id = cm.create_listener()?;
        self.take(id, Some(event));
        Ok(id)
    }

    /// `NdkListen`: the listener `id` bound to `address` (port 0: an ephemeral one), and the
    /// note that lists it.
    ///
    /// # Errors
    /// The CM's.
    pub fn listen(
        &self,
        cm: &mut Cm<'_>,
        id: BindId,
        address: SockAddr,
    ) -> Result<(SockAddr, Note), CmStatus> {
        let bound = cm.listen(id, address)?;
        Ok((bound, listed(id, bound, true)))
    }

    /// `NdkCloseListener`: requests not indicated are refused, no connect event follows; its
    /// object, and the note its entry owes.
    pub fn close_listener(&mut self, cm: &mut Cm<'_>, id: BindId) -> (Option<O>, Option<Note>) {
        let _ = cm.close_listener(id);
        self.free(id)
    }

    /// `NdkCreateSharedEndpoint` on `address` (port 0: an ephemeral one): bound by the CM, its
    /// slot taken, and the note that lists it.
    ///
    /// # Errors
    /// The CM's binding statuses (§4.1).
    pub fn create_shared_endpoint(
        &mut self,
        cm: &mut Cm<'_>,
        address: SockAddr,
    ) -> Result<(BindId, Note), CmStatus> {
        let id = cm.create_shared_endpoint(address)?;
        let local = cm.bind_address(id)?;
        self.take(id, None);
        Ok((id, listed(id, local, false)))
    }

    /// `NdkCloseSharedEndpoint` (§1.3): closed now, or pending with `close` while connectors
    /// use it (the CM says which), and the note a close now owes.
    pub fn close_shared_endpoint(
        &mut self,
        cm: &mut Cm<'_>,
        id: BindId,
        close: X,
    ) -> (EndpointClose, Option<Note>) {
        match cm.close_shared_endpoint(id) {
            Err(CmStatus::InvalidDeviceState) => {
                if let Some(b) = self.slot(id) {
                    b.held = Some(close);
                }
                (EndpointClose::Pending, None)
            }
            _ => (EndpointClose::Now, self.free(id).1),
        }
    }

    /// A connector closed: each shared endpoint whose close waited for it, and that no other
    /// connector uses now, closes: `closed` gets the completion it owes and its object, `note`
    /// what the adapter's table must learn.
    pub fn retry_endpoint_closes(
        &mut self,
        cm: &mut Cm<'_>,
        mut closed: impl FnMut(X, Option<O>),
        mut note: impl FnMut(Note),
    ) {
        for i in 0..self.slots.as_ref().len() {
            let Some(b) = self.slots.as_ref().get(i).copied() else {
                continue;
            };
            let (Some(id), Some(close)) = (b.id, b.held) else {
                continue;
            };
            if cm.close_shared_endpoint(id).is_ok() {
                let (object, unbound) = self.free(id);
                closed(close, object);
                if let Some(n) = unbound {
                    note(n);
                }
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
    use crate::ndk::provider::cm::{BindSlot, CmConfig, CmStorage, ConnSlot, QpInfo, Source};

    const A: [u8; 4] = [10, 0, 0, 1];
    const B: [u8; 4] = [10, 0, 0, 2];

    fn cm() -> Cm<'static> {
        let storage = CmStorage {
            conns: Box::leak(vec![ConnSlot::FREE; 4].into_boxed_slice()),
            binds: Box::leak(vec![BindSlot::FREE; 4].into_boxed_slice()),
        };
        let mut cm = Cm::new(CmConfig::new(&Profile::ROCE_V2_100G), storage);
        cm.set_addresses(&[SockAddr::v4(A, 0)]);
        cm
    }

    /// Objects and completions as the shell's opaque handles: numbers here.
    type Table = Bindings<Vec<BindingSlot<u32, u32>>, u32, u32>;

    fn table() -> Table {
        Bindings::new(vec![BindingSlot::FREE; 4])
    }

    #[test]
    fn a_created_endpoint_is_listed_and_its_close_unlists_it() {
        let (mut cm, mut t) = (cm(), table());
        let (id, note) = t
            .create_shared_endpoint(&mut cm, SockAddr::v4(A, 9000))
            .unwrap();
        let Note::Listening {
            id: noted,
            endpoint,
        } = note
        else {
            panic!("{note:?}")
        };
        assert_eq!(noted, id);
        assert_eq!(
            (endpoint.local.port, endpoint.tcp_port, endpoint.listener),
            (9000, 9000, false)
        );
        assert_eq!(t.at(id.index()), Some(id));
        t.set_object(id, 7);
        let entry = EntryId { slot: 3, stamp: 4 };
        assert!(t.set_entry(id, entry));
        // No connector uses it: it closes at once, and its entry goes.
        assert_eq!(
            t.close_shared_endpoint(&mut cm, id, 99),
            (EndpointClose::Now, Some(Note::Unbound(entry)))
        );
        assert_eq!(t.at(id.index()), None);
        assert!(!t.set_entry(id, entry), "gone");
        assert_eq!(t.free(id), (None, None), "freed once");
    }

    #[test]
    fn a_close_waits_for_the_connectors_and_completes_when_the_last_closes() {
        let (mut cm, mut t) = (cm(), table());
        let (id, _) = t
            .create_shared_endpoint(&mut cm, SockAddr::v4(A, 0))
            .unwrap();
        t.set_object(id, 7);
        let c = cm.create_connector().unwrap();
        let qp = QpInfo {
            handle: 1,
            qpn: 0x101,
            psn: 0x10,
        };
        cm.connect(
            0,
            c,
            qp,
            Source::Shared(id),
            SockAddr::v4(B, 445),
            1,
            1,
            b"",
        )
        .unwrap();
        assert_eq!(
            t.close_shared_endpoint(&mut cm, id, 99),
            (EndpointClose::Pending, None)
        );
        assert_eq!(t.at(id.index()), Some(id), "still open while used");
        let mut closed = Vec::new();
        t.retry_endpoint_closes(
            &mut cm,
            |close, object| closed.push((close, object)),
            |_| {},
        );
        assert!(closed.is_empty(), "the connector still uses it");
        let _ = cm.close_connector(c);
        t.retry_endpoint_closes(
            &mut cm,
            |close, object| closed.push((close, object)),
            |_| {},
        );
        assert_eq!(
            closed,
            [(99, Some(7))],
            "its pending close, with its object"
        );
        assert_eq!(t.at(id.index()), None);
    }

    #[test]
    fn a_listener_holds_its_event_is_listed_when_it_listens_and_unlisted_at_its_close() {
        let (mut cm, mut t) = (cm(), table());
        let id = t.create_listener(&mut cm, 42).unwrap();
        assert_eq!((t.at(id.index()), t.held(id)), (Some(id), Some(42)));
        t.set_object(id, 8);
        let (bound, note) = t.listen(&mut cm, id, SockAddr::v4(A, 445)).unwrap();
        assert_eq!(bound.port, 445);
        let Note::Listening {
            id: noted,
            endpoint,
        } = note
        else {
            panic!("{note:?}")
        };
        assert_eq!(
            (noted, endpoint.listener, endpoint.tcp_port),
            (id, true, 445)
        );
        assert_eq!(
            t.listen(&mut cm, id, SockAddr::v4(A, 446)),
            Err(CmStatus::InvalidDeviceState),
            "it listens already"
        );
        let entry = EntryId { slot: 5, stamp: 4 };
        assert!(t.set_entry(id, entry));
        assert_eq!(
            t.close_listener(&mut cm, id),
            (Some(8), Some(Note::Unbound(entry)))
        );
        assert_eq!((t.at(id.index()), t.held(id)), (None, None));
        // Its binding is free again in the CM: a new listener may take it.
        assert_eq!(
            t.create_listener(&mut cm, 43).map(|b| b.index()),
            Ok(id.index())
        );
    }

    #[test]
    fn the_adapters_close_takes_every_listed_entry_once() {
        let (mut cm, mut t) = (cm(), table());
        let (a, _) = t
            .create_shared_endpoint(&mut cm, SockAddr::v4(A, 0))
            .unwrap();
        let b = t.create_listener(&mut cm, 1).unwrap();
        assert!(t.set_entry(a, EntryId { slot: 1, stamp: 4 }));
        assert!(t.set_entry(b, EntryId { slot: 2, stamp: 4 }));
        let mut taken = Vec::new();
        t.take_entries(|e| taken.push(e));
        assert_eq!(
            taken,
            [EntryId { slot: 1, stamp: 4 }, EntryId { slot: 2, stamp: 4 }]
        );
        t.take_entries(|e| taken.push(e));
        assert_eq!(taken.len(), 2, "taken once");
    }
}
