//! The provider's shared endpoints (ndkpi.md §2.10, §4.1): a local address and ND port that
//! several connectors connect from (`NdkConnectWithSharedEndpoint`). The connection manager
//! binds it ([`super::cm`]); this table keeps, per binding, the consumer's object, its entry in
//! `OID_NDK_LOCAL_ENDPOINTS`, and a close that waits for the connectors using it (§1.3: an
//! antecedent's close pends until its successors close).
//!
//! Keyed by the shell's opaque handles, as `datapath::link::Link<T>` is: `O` the object the
//! consumer holds, `C` the completion a pending close owes; the core never looks inside
//! either. What the adapter's tables must learn comes back as [`Note`]s, for the provider's
//! notes queue.

use core::marker::PhantomData;

use super::cm::{BindId, Cm, CmStatus};
use super::notes::Note;
use crate::ndk::tables::{Endpoint, EntryId, SockAddr};

/// One shared endpoint's slot (the CM's bind table index, shared with the listeners).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndpointSlot<O, C> {
    /// The CM's id (`None`: free).
    id: Option<BindId>,
    /// The object the consumer holds (`None` until the shell has made it).
    object: Option<O>,
    /// An `NdkCloseSharedEndpoint` that returned `STATUS_PENDING`.
    close: Option<C>,
    /// Its entry in the adapter's table (`OID_NDK_LOCAL_ENDPOINTS`).
    entry: Option<EntryId>,
}

impl<O, C> EndpointSlot<O, C> {
    /// A free slot.
    pub const FREE: Self = Self {
        id: None,
        object: None,
        close: None,
        entry: None,
    };
}

/// What `NdkCloseSharedEndpoint` does now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointClose {
    /// Closed: free the object, `STATUS_SUCCESS`.
    Now,
    /// Connectors use it: `STATUS_PENDING`, completed when the last of them closes
    /// ([`Endpoints::retry_closes`]).
    Pending,
}

/// The shared endpoints, one slot per CM binding, over storage the shell allocates.
#[derive(Debug)]
pub struct Endpoints<S, O, C> {
    slots: S,
    _slot: PhantomData<fn() -> (O, C)>,
}

impl<S, O, C> Endpoints<S, O, C>
where
    S: AsRef<[EndpointSlot<O, C>]> + AsMut<[EndpointSlot<O, C>]>,
    O: Copy,
    C: Copy,
{
    /// None open, over `slots` (one per CM binding).
    #[must_use]
    pub const fn new(slots: S) -> Self {
        Self {
            slots,
            _slot: PhantomData,
        }
    }

    /// `NdkCreateSharedEndpoint` on `address` (port 0: an ephemeral one): bound by the CM, its
    /// slot taken, and the note that lists it in `OID_NDK_LOCAL_ENDPOINTS`.
    ///
    /// # Errors
    /// The CM's binding statuses (§4.1).
    pub fn create(
        &mut self,
        cm: &mut Cm<'_>,
        address: SockAddr,
    ) -> Result<(BindId, Note), CmStatus> {
        let id = cm.create_shared_endpoint(address)?;
        let local = cm.bind_address(id)?;
        if let Some(slot) = self.slots.as_mut().get_mut(id.index()) {
            *slot = EndpointSlot {
                id: Some(id),
                ..EndpointSlot::FREE
            };
        }
        // The TCP port a shared endpoint pairs with in iWARP mode: its ND port (as a
        // listener's).
        let endpoint = Endpoint {
            local,
            listener: false,
            tcp_port: local.port,
            ..Endpoint::default()
        };
        Ok((id, Note::Listening { id, endpoint }))
    }

    /// How many slots the table has (one per CM binding).
    #[must_use]
    pub fn slots(&self) -> usize {
        self.slots.as_ref().len()
    }

    /// The id of the shared endpoint in slot `index`, if it is open.
    #[must_use]
    pub fn at(&self, index: usize) -> Option<BindId> {
        self.slots.as_ref().get(index).and_then(|e| e.id)
    }

    /// Records the object of the shared endpoint `id`, just made.
    pub fn set_object(&mut self, id: BindId, object: O) {
        if let Some(e) = self.slot(id) {
            e.object = Some(object);
        }
    }

    /// Records the table entry of the shared endpoint `id`; `false` when it is gone (the
    /// caller removes the entry).
    pub fn set_entry(&mut self, id: BindId, entry: EntryId) -> bool {
        match self.slot(id) {
            Some(e) => {
                e.entry = Some(entry);
                true
            }
            None => false,
        }
    }

    fn slot(&mut self, id: BindId) -> Option<&mut EndpointSlot<O, C>> {
        self.slots
            .as_mut()
            .get_mut(id.index())
            .filter(|e| e.id == Some(id))
    }

    /// Frees the slot of the shared endpoint `id` (its binding is gone): its object, if it had
    /// one, and the note that takes its entry out of the adapter's table, if it was listed.
    pub fn free(&mut self, id: BindId) -> (Option<O>, Option<Note>) {
        let Some(e) = self.slot(id) else {
            return (None, None);
        };
        let freed = *e;
        *e = EndpointSlot::FREE;
        (freed.object, freed.entry.map(Note::Unbound))
    }

    /// `NdkCloseSharedEndpoint` (§1.3): closed now, or pending with `close` while connectors
    /// use it (the CM says which), and the note a close now owes.
    pub fn close(
        &mut self,
        cm: &mut Cm<'_>,
        id: BindId,
        close: C,
    ) -> (EndpointClose, Option<Note>) {
        match cm.close_shared_endpoint(id) {
            Err(CmStatus::InvalidDeviceState) => {
                if let Some(e) = self.slot(id) {
                    e.close = Some(close);
                }
                (EndpointClose::Pending, None)
            }
            _ => (EndpointClose::Now, self.free(id).1),
        }
    }

    /// A connector closed: each shared endpoint whose close waited for it, and that no other
    /// connector uses now, closes: `closed` gets the completion it owes and its object, `note`
    /// what the adapter's table must learn.
    pub fn retry_closes(
        &mut self,
        cm: &mut Cm<'_>,
        mut closed: impl FnMut(C, Option<O>),
        mut note: impl FnMut(Note),
    ) {
        for i in 0..self.slots.as_ref().len() {
            let Some(e) = self.slots.as_ref().get(i).copied() else {
                continue;
            };
            let (Some(id), Some(close)) = (e.id, e.close) else {
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

    /// The table entries of the endpoints still listed, taken (the adapter's close removes
    /// them from the adapter's tables itself).
    pub fn take_entries(&mut self, mut f: impl FnMut(EntryId)) {
        for e in self.slots.as_mut() {
            if let Some(entry) = e.entry.take() {
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
    type Table = Endpoints<Vec<EndpointSlot<u32, u32>>, u32, u32>;

    fn table() -> Table {
        Endpoints::new(vec![EndpointSlot::FREE; 4])
    }

    #[test]
    fn a_created_endpoint_is_listed_and_its_close_unlists_it() {
        let (mut cm, mut t) = (cm(), table());
        let (id, note) = t.create(&mut cm, SockAddr::v4(A, 9000)).unwrap();
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
            t.close(&mut cm, id, 99),
            (EndpointClose::Now, Some(Note::Unbound(entry)))
        );
        assert_eq!(t.at(id.index()), None);
        assert!(!t.set_entry(id, entry), "gone");
        assert_eq!(t.free(id), (None, None), "freed once");
    }

    #[test]
    fn a_close_waits_for_the_connectors_and_completes_when_the_last_closes() {
        let (mut cm, mut t) = (cm(), table());
        let (id, _) = t.create(&mut cm, SockAddr::v4(A, 0)).unwrap();
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
        assert_eq!(t.close(&mut cm, id, 99), (EndpointClose::Pending, None));
        assert_eq!(t.at(id.index()), Some(id), "still open while used");
        let mut closed = Vec::new();
        t.retry_closes(
            &mut cm,
            |close, object| closed.push((close, object)),
            |_| {},
        );
        assert!(closed.is_empty(), "the connector still uses it");
        let _ = cm.close_connector(c);
        t.retry_closes(
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
    fn the_adapters_close_takes_every_listed_entry_once() {
        let (mut cm, mut t) = (cm(), table());
        let (a, _) = t.create(&mut cm, SockAddr::v4(A, 0)).unwrap();
        let (b, _) = t.create(&mut cm, SockAddr::v4(A, 0)).unwrap();
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
