//! The adapter's QoS state: local, remote and operational parameters, their resolution, and the
//! status indications it calls for (spec §4, §5).
//!
//! Decisions where the contract leaves a choice (each tested):
//! - With Willing off, a group whose `_CONFIGURED` bit is clear in the local parameters (§4.3): ETS
//!   takes the adapter's factory ETS settings (traffic needs some transmission selection); PFC is
//!   disabled (lossless behaviour nobody asked for would pause the link); classification is
//!   disabled (no NIC-side tagging, the documentation's own example).
//! - With Willing on and a valid remote set: ETS from the peer's ETS Recommendation (its
//!   configuration when it sent none), PFC from its PFC configuration, classifications from its
//!   application priorities; a remote group this adapter cannot apply (more TCs or PFC priorities
//!   than it has) leaves the local group in place.
//! - Indications set every `_CONFIGURED` bit (every group is present in the structure) and the
//!   `_CHANGED` bits of the groups that differ from the previous indication of the same kind; the
//!   first indication of a kind sets every `_CHANGED` bit. `WILLING` is 0 in operational
//!   indications and mirrors the peer's willing bit in remote ones.
//! - A remote set is invalidated (zero-filled indication, §5.2) when its peer's TTL expires, or when
//!   a second peer is heard while the first is valid; it stays invalid until every peer heard has
//!   expired.

use super::caps::Capabilities;
use super::params::{Classification, Classifications, QosParameters, condition, flags, tsa};
use super::validate;

/// Peers whose TTL the adapter tracks at once (more are treated like the second: invalidation).
const MAX_PEERS: usize = 4;

/// The ETS members of a parameter set (the ETS Recommendation TLV carries only these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EtsGroup {
    /// `NumTrafficClasses`
    pub num_tcs: u32,
    /// Priority -> TC.
    pub prio_tc: [u8; 8],
    /// TC -> percent.
    pub tc_bw: [u8; 8],
    /// TC -> TSA.
    pub tsa: [u8; 8],
}

impl EtsGroup {
    /// The ETS group of a parameter set.
    #[must_use]
    pub const fn of(p: &QosParameters) -> Self {
        Self {
            num_tcs: p.num_tcs,
            prio_tc: p.prio_tc,
            tc_bw: p.tc_bw,
            tsa: p.tsa,
        }
    }

    fn apply_to(&self, p: &mut QosParameters) {
        p.num_tcs = self.num_tcs;
        p.prio_tc = self.prio_tc;
        p.tc_bw = self.tc_bw;
        p.tsa = self.tsa;
    }
}

/// What the simulator playing a peer (and the shell, for a peer's TTL) hands the adapter.
/// (`Received` is much larger than `TtlExpired`; the events are passed by value once each and
/// never stored, so the size difference costs nothing worth a box. The DCBX agent hands its
/// peers' sets over with [`QosState::remote_received`] instead, written in place.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(
    clippy::large_enum_variant,
    reason = "short-lived, never stored; no allocator in the core"
)]
pub enum RemoteEvent {
    /// DCBX TLVs from a peer: its configuration (`flags` say which groups it sent, and its willing
    /// bit as `WILLING`), and its ETS Recommendation if it sent one.
    Received {
        /// The peer's chassis MAC address.
        peer: [u8; 6],
        /// The peer's parameters.
        params: QosParameters,
        /// The peer's ETS Recommendation TLV.
        recommendation: Option<EtsGroup>,
        /// The 802.1Qaz tie-break for the symmetric PFC attribute: the peer is willing for PFC
        /// too and this adapter's MAC address is the higher, so the peer adopts this adapter's
        /// PFC and this adapter keeps its own (the lower address yields; lldpad's `pfc_sm`).
        pfc_local_wins: bool,
    },
    /// The LLDP TTL of `peer` expired.
    TtlExpired {
        /// The peer.
        peer: [u8; 6],
    },
}

/// A remote input the shell hands the QoS state under its lock: a [`RemoteEvent`], or the DCBX
/// agent's event (`lldp::agent::PeerEvent`), whose parameter set is written in place.
pub trait RemoteInput {
    /// Applies the input to `qos` (spec §5.2, §5.3); the indications it calls for.
    fn apply(self, qos: &mut QosState) -> Indications;
}

impl RemoteInput for RemoteEvent {
    fn apply(self, qos: &mut QosState) -> Indications {
        qos.remote_event(self)
    }
}

/// The indications one change calls for (each already carrying its flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Indications {
    /// `NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE`, if the operational set changed.
    pub operational: Option<QosParameters>,
    /// `NDIS_STATUS_QOS_REMOTE_PARAMETERS_CHANGE`, if the remote set changed.
    pub remote: Option<QosParameters>,
}

impl Indications {
    /// No indication: [`Indications::default`] as a constant.
    pub const NONE: Self = Self {
        operational: None,
        remote: None,
    };

    /// Adds `later` to what is owed: a newer set replaces an older one (NDIS is told the state
    /// as it is, once), a set `later` does not carry stays owed.
    pub fn merge(&mut self, later: Indications) {
        if later.operational.is_some() {
            self.operational = later.operational;
        }
        if later.remote.is_some() {
            self.remote = later.remote;
        }
    }

    /// Nothing owed.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.operational.is_none() && self.remote.is_none()
    }
}

/// The factory (IHV) parameters for these capabilities: IEEE 802.1Q Table 8-5's priority to
/// traffic class mapping for as many ETS TCs as the adapter has, bandwidth shared as evenly as
/// whole percents allow (netvmini's 12/13 split for 8), PFC off, and netvmini's two
/// classifications: FCoE (EtherType 0x8906) on priority 1 and iSCSI (TCP 3260) on priority 2.
#[must_use]
pub fn factory(caps: &Capabilities) -> QosParameters {
    const MAPPING: [[u8; 8]; 8] = [
        [0, 0, 0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 1, 1, 1, 1],
        [0, 0, 0, 0, 1, 1, 2, 2],
        [0, 0, 1, 1, 2, 2, 3, 3],
        [0, 0, 1, 1, 2, 2, 3, 4],
        [1, 0, 2, 2, 3, 3, 4, 5],
        [1, 0, 2, 3, 4, 4, 5, 6],
        [1, 0, 2, 3, 4, 5, 6, 7],
    ];
    let n = caps
        .max_traffic_classes
        .min(caps.max_ets_traffic_classes)
        .clamp(1, 8);
    let index = usize::try_from(n).unwrap_or(1).saturating_sub(1);
    let prio_tc = MAPPING.get(index).copied().unwrap_or([0; 8]);
    // n is in 1..=8 (clamped above), so neither division can fail.
    let base = 100u32.checked_div(n).unwrap_or(100);
    let extra = 100u32.checked_rem(n).unwrap_or(0);
    let mut tc_bw = [0u8; 8];
    let mut tsa_table = [0u8; 8];
    // The extra percents go to TCs 1, 3, 5, ... then 0, 2, 4, ...
    let order = [1usize, 3, 5, 7, 0, 2, 4, 6];
    for tc in 0..usize::try_from(n).unwrap_or(0) {
        if let (Some(bw), Some(t)) = (tc_bw.get_mut(tc), tsa_table.get_mut(tc)) {
            *bw = u8::try_from(base).unwrap_or(0);
            *t = tsa::ETS;
        }
    }
    let mut given = 0;
    for tc in order {
        if given == extra {
            break;
        }
        if let (true, Some(bw)) = (usize::try_from(n).is_ok_and(|n| tc < n), tc_bw.get_mut(tc)) {
            *bw = bw.saturating_add(1);
            given = given.saturating_add(1);
        }
    }
    let mut classifications = Classifications::default();
    let _ = classifications.push(Classification {
        selector: condition::ETHERTYPE,
        field: 0x8906,
        priority: 1,
    });
    let _ = classifications.push(Classification {
        selector: condition::TCP_PORT,
        field: 3260,
        priority: 2,
    });
    QosParameters {
        flags: flags::ALL_CONFIGURED,
        num_tcs: n,
        prio_tc,
        tc_bw,
        tsa: tsa_table,
        pfc_enable: 0,
        classifications,
    }
}

/// The QoS state of one adapter. Lives behind the adapter's lock; every method returns the
/// indications the change calls for, which the shell makes after releasing the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QosState {
    caps: Capabilities,
    factory: QosParameters,
    local: QosParameters,
    willing: bool,
    /// The valid remote set (zero-filled when there is none: see `remote_valid`).
    remote: QosParameters,
    /// The valid remote set's ETS Recommendation.
    remote_recommendation: Option<EtsGroup>,
    /// Whether a valid remote set is held in `remote`.
    remote_valid: bool,
    pfc_local_wins: bool,
    peers: [Option<[u8; 6]>; MAX_PEERS],
    invalid_until_quiet: bool,
    operational: QosParameters,
    last_operational: Option<QosParameters>,
    last_remote: Option<QosParameters>,
}

impl QosState {
    /// A state of zeroes: not a usable state, only the starting value of one built in place
    /// with [`QosState::reset`] (the shell copies it from the image into pool memory, so that no
    /// state-sized value is made on a kernel stack).
    pub const EMPTY: Self = Self {
        caps: Capabilities {
            flags: 0,
            max_traffic_classes: 0,
            max_ets_traffic_classes: 0,
            max_pfc_traffic_classes: 0,
        },
        factory: QosParameters::ZERO,
        local: QosParameters::ZERO,
        willing: false,
        remote: QosParameters::ZERO,
        remote_recommendation: None,
        remote_valid: false,
        pfc_local_wins: false,
        peers: [None; MAX_PEERS],
        invalid_until_quiet: false,
        operational: QosParameters::ZERO,
        last_operational: None,
        last_remote: None,
    };

    /// The state at initialize: local = factory settings, Willing as the adapter's default.
    #[must_use]
    pub fn new(caps: Capabilities, willing: bool) -> Self {
        let mut s = Self::EMPTY;
        s.reset(caps, willing);
        s
    }

    /// Makes `self`, where it is, what [`QosState::new`] returns (no state-sized value on the
    /// stack).
    pub fn reset(&mut self, caps: Capabilities, willing: bool) {
        // Every field by name: a field added to the state must be added here too.
        let Self {
            caps: caps_,
            factory: factory_,
            local,
            willing: willing_,
            remote,
            remote_recommendation,
            remote_valid,
            pfc_local_wins,
            peers,
            invalid_until_quiet,
            operational,
            last_operational,
            last_remote,
        } = self;
        *caps_ = caps;
        *factory_ = factory(&caps);
        *local = *factory_;
        *willing_ = willing;
        *remote = QosParameters::ZERO;
        *remote_recommendation = None;
        *remote_valid = false;
        *pfc_local_wins = false;
        *peers = [None; MAX_PEERS];
        *invalid_until_quiet = false;
        *operational = factory_.content();
        *last_operational = None;
        *last_remote = None;
        self.resolve();
    }

    /// The operational set in force (what the NIC applies; the classifier snapshot's source).
    #[must_use]
    pub fn operational(&self) -> &QosParameters {
        &self.operational
    }

    /// The ETS tables this adapter recommends to a willing peer: the local ETS configuration,
    /// or the factory one when none is configured (see `lldp::transmit`).
    #[must_use]
    pub fn recommendation(&self) -> EtsGroup {
        if self.local.flags & flags::ETS_CONFIGURED != 0 {
            EtsGroup::of(&self.local)
        } else {
            EtsGroup::of(&self.factory)
        }
    }

    /// Whether local DCBX Willing is on.
    #[must_use]
    pub fn willing(&self) -> bool {
        self.willing
    }

    /// The capabilities the state validates against.
    #[must_use]
    pub fn caps(&self) -> &Capabilities {
        &self.caps
    }

    /// The first operational indication, at initialize when `*QOS` = 1 (spec §2.2, §5.1).
    pub fn initial(&mut self) -> Indications {
        let operational = self.operational_change();
        self.indications(operational, false)
    }

    /// Applies an accepted `OID_QOS_PARAMETERS` (spec §3.5, §4.2, §4.3).
    pub fn set_local(&mut self, params: QosParameters) -> Indications {
        let mut owed = Indications::NONE;
        self.set_local_owing(&params, &mut owed);
        owed
    }

    /// [`QosState::set_local`], with the indication it calls for merged into `owed` in place
    /// ([`Indications::merge`]): the OID handler's frame then holds neither a parameter set nor
    /// an [`Indications`] (two sets) of its own, which made it the largest frame of the dev
    /// image (`cargo xtask pe`).
    pub fn set_local_owing(&mut self, params: &QosParameters, owed: &mut Indications) {
        self.local = *params;
        self.willing = params.flags & flags::WILLING != 0;
        self.resolve();
        if self.operational_change()
            && let Some(operational) = &self.last_operational
        {
            owed.operational = Some(*operational);
        }
    }

    /// Applies a remote event (spec §5.2, §5.3).
    pub fn remote_event(&mut self, event: RemoteEvent) -> Indications {
        // Matched in place: the parameter set is copied once, into the state.
        match &event {
            RemoteEvent::Received {
                peer,
                params,
                recommendation,
                pfc_local_wins,
            } => self.remote_received(*peer, *pfc_local_wins, |remote| {
                *remote = *params;
                *recommendation
            }),
            RemoteEvent::TtlExpired { peer } => self.remote_expired(*peer),
        }
    }

    /// A peer's DCBX TLVs were received (spec §5.2, §5.3): `fill` writes the peer's parameters
    /// into the state's remote set (zero-filled first; no set on the stack) and returns its ETS
    /// Recommendation. `fill` is not called when the remote set is invalid (a second peer).
    /// `pfc_local_wins` as in [`RemoteEvent::Received`].
    pub fn remote_received(
        &mut self,
        peer: [u8; 6],
        pfc_local_wins: bool,
        fill: impl FnOnce(&mut QosParameters) -> Option<EtsGroup>,
    ) -> Indications {
        self.pfc_local_wins = pfc_local_wins;
        self.clear_remote();
        if self.heard(peer) {
            self.remote_recommendation = fill(&mut self.remote);
            self.remote_valid = true;
        }
        self.remote_changed()
    }

    /// The LLDP TTL of `peer` expired (spec §5.2).
    pub fn remote_expired(&mut self, peer: [u8; 6]) -> Indications {
        for slot in &mut self.peers {
            if *slot == Some(peer) {
                *slot = None;
            }
        }
        if self.peers.iter().all(Option::is_none) {
            self.invalid_until_quiet = false;
        }
        self.clear_remote();
        self.remote_changed()
    }

    /// Records `peer` as heard; whether the remote set it sent is valid (not while two peers
    /// have been heard, until every peer heard has expired).
    fn heard(&mut self, peer: [u8; 6]) -> bool {
        let known = self.peers.iter().flatten().any(|p| *p == peer);
        if !known {
            match self.peers.iter_mut().find(|p| p.is_none()) {
                Some(slot) => *slot = Some(peer),
                None => self.invalid_until_quiet = true,
            }
        }
        if self.peers.iter().flatten().count() > 1 {
            self.invalid_until_quiet = true;
        }
        !self.invalid_until_quiet
    }

    /// No valid remote set: the zero-filled one.
    fn clear_remote(&mut self) {
        self.remote = QosParameters::ZERO;
        self.remote_recommendation = None;
        self.remote_valid = false;
    }

    /// The remote set was updated in place: the remote indication it calls for, then the
    /// operational set resolved again and its indication. Out of line, so that its callers'
    /// and its callees' frames stay apart.
    #[inline(never)]
    fn remote_changed(&mut self) -> Indications {
        let remote = self.remote_change();
        self.resolve();
        let operational = self.operational_change();
        self.indications(operational, remote)
    }

    /// The indications for the sets just recorded as indicated (`last_operational`,
    /// `last_remote`), built in the caller's return slot.
    fn indications(&self, operational: bool, remote: bool) -> Indications {
        Indications {
            operational: if operational {
                self.last_operational
            } else {
                None
            },
            remote: if remote { self.last_remote } else { None },
        }
    }

    /// Whether the remote set (`self.remote`: the peer's, or the zero-filled one) calls for a
    /// remote indication: not when it repeats the last one, and a zero-filled set
    /// (invalidation) only after a non-zero one. If so, it is recorded in `last_remote`
    /// with its CHANGED bits. Compared in place: a set is 432 bytes, a kernel stack 24 KiB.
    fn remote_change(&mut self) -> bool {
        let params = &self.remote;
        let zero = *params == ZERO_SET;
        let last = self.last_remote.as_ref();
        if zero && last.is_none_or(|l| l.same_content(&ZERO_SET)) {
            return false;
        }
        if last.is_some_and(|l| {
            l.same_content(params)
                && (l.flags & !flags::ALL_CHANGED) == (params.flags & !flags::ALL_CHANGED)
        }) {
            return false;
        }
        // `changed_from` compares the groups' content only, never the flags. (A zero-filled
        // set gets here only after a previous one: only the groups that held something
        // changed.)
        let indicated_flags = (params.flags & !flags::ALL_CHANGED) | params.changed_from(last);
        self.last_remote = Some(self.remote);
        if let Some(l) = self.last_remote.as_mut() {
            l.flags = indicated_flags;
        }
        true
    }

    /// Whether the operational set differs (in content) from the last one indicated; if so, it
    /// is recorded in `last_operational` with every CONFIGURED bit and its CHANGED bits.
    fn operational_change(&mut self) -> bool {
        let last = self.last_operational.as_ref();
        if last.is_some_and(|l| l.same_content(&self.operational)) {
            return false;
        }
        let indicated_flags = flags::ALL_CONFIGURED | self.operational.changed_from(last);
        self.last_operational = Some(self.operational);
        if let Some(l) = self.last_operational.as_mut() {
            l.flags = indicated_flags;
        }
        true
    }

    /// Resolves the operational set (spec §4.2), in place, from local (with the §4.3 overrides)
    /// and, when Willing and a valid remote set exists, from the remote set.
    fn resolve(&mut self) {
        let Self {
            caps,
            factory,
            local,
            willing,
            remote,
            remote_recommendation,
            remote_valid,
            pfc_local_wins,
            operational: op,
            ..
        } = self;
        *op = *local;
        op.flags = 0;
        if local.flags & flags::ETS_CONFIGURED == 0 {
            EtsGroup::of(factory).apply_to(op);
        }
        if local.flags & flags::PFC_CONFIGURED == 0 {
            op.pfc_enable = 0;
        }
        if local.flags & flags::CLASSIFICATION_CONFIGURED == 0 {
            op.classifications = Classifications::EMPTY;
        }
        if *willing && *remote_valid {
            let ets = match remote_recommendation {
                Some(r) => Some(*r),
                None if remote.flags & flags::ETS_CONFIGURED != 0 => Some(EtsGroup::of(remote)),
                None => None,
            };
            if let Some(ets) = ets.filter(|e| can_apply_ets(caps, e)) {
                ets.apply_to(op);
            }
            if remote.flags & flags::PFC_CONFIGURED != 0
                && !*pfc_local_wins
                && can_apply_pfc(caps, remote.pfc_enable)
            {
                op.pfc_enable = remote.pfc_enable;
            }
            if remote.flags & flags::CLASSIFICATION_CONFIGURED != 0 {
                op.classifications = remote.classifications;
            }
        }
    }
}

/// The zero-filled set, to compare with in place.
static ZERO_SET: QosParameters = QosParameters::ZERO;

/// Whether the adapter can apply an ETS group: what `OID_QOS_PARAMETERS` would accept for it
/// (the ETS checks of spec §3.5; the rest of such a request, with PFC off and no element, is
/// always accepted).
fn can_apply_ets(caps: &Capabilities, e: &EtsGroup) -> bool {
    validate::check_ets(e.num_tcs, &e.prio_tc, &e.tc_bw, &e.tsa, caps).is_ok()
}

fn can_apply_pfc(caps: &Capabilities, pfc_enable: u32) -> bool {
    pfc_enable & 0xFFFF_FF00 == 0 && pfc_enable.count_ones() <= caps.max_pfc_traffic_classes
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPS: Capabilities = Capabilities::HARDWARE;
    const PEER: [u8; 6] = [0x02, 0, 0, 0, 0, 0xAA];
    const OTHER: [u8; 6] = [0x02, 0, 0, 0, 0, 0xBB];

    fn two_tc(flags_: u32, pfc: u32) -> QosParameters {
        QosParameters {
            flags: flags_,
            num_tcs: 2,
            prio_tc: [0, 0, 0, 1, 0, 0, 0, 0],
            tc_bw: [50, 50, 0, 0, 0, 0, 0, 0],
            tsa: [2, 2, 0, 0, 0, 0, 0, 0],
            pfc_enable: pfc,
            classifications: Classifications::default(),
        }
    }

    #[test]
    fn factory_settings_match_netvmini_and_fit_smaller_adapters() {
        let f = factory(&CAPS);
        assert_eq!(
            (f.num_tcs, f.prio_tc, f.tc_bw, f.tsa),
            (
                8,
                [1, 0, 2, 3, 4, 5, 6, 7],
                [12, 13, 12, 13, 12, 13, 12, 13],
                [2; 8]
            )
        );
        assert_eq!(f.classifications.len(), 2);
        for n in 1..=8u32 {
            let caps = Capabilities {
                max_traffic_classes: n.max(3),
                max_ets_traffic_classes: n,
                ..CAPS
            };
            let f = factory(&caps);
            assert_eq!(
                f.tc_bw.iter().map(|b| u32::from(*b)).sum::<u32>(),
                100,
                "{n}"
            );
            assert!(f.prio_tc.iter().all(|tc| u32::from(*tc) < f.num_tcs));
        }
    }

    #[test]
    fn a_state_reset_in_place_equals_a_new_one() {
        let mut s = QosState::new(CAPS, true);
        let _ = s.initial();
        let _ = s.remote_event(RemoteEvent::Received {
            peer: PEER,
            params: two_tc(flags::ALL_CONFIGURED, 0x18),
            recommendation: None,
            pfc_local_wins: false,
        });
        let _ = s.set_local(two_tc(flags::ETS_CONFIGURED, 0));
        s.reset(CAPS, false);
        assert_eq!(s, QosState::new(CAPS, false));
    }

    #[test]
    fn the_first_operational_indication_sets_every_bit_and_is_not_repeated() {
        let mut s = QosState::new(CAPS, false);
        let first = s.initial().operational.unwrap();
        assert_eq!(first.flags, flags::ALL_CONFIGURED | flags::ALL_CHANGED);
        assert_eq!(s.initial(), Indications::default(), "no duplicate");
    }

    #[test]
    fn willing_off_overrides_unconfigured_groups() {
        let mut s = QosState::new(CAPS, false);
        let _ = s.initial();
        // Only ETS and PFC configured: classifications are disabled.
        let op = s
            .set_local(two_tc(flags::ETS_CONFIGURED | flags::PFC_CONFIGURED, 0x08))
            .operational
            .unwrap();
        assert_eq!(
            (op.num_tcs, op.pfc_enable, op.classifications.len()),
            (2, 0x08, 0)
        );
        assert_eq!(op.flags & flags::ALL_CHANGED, flags::ALL_CHANGED);
        // Nothing configured: factory ETS, PFC off, no classification.
        let op = s.set_local(QosParameters::default()).operational.unwrap();
        assert_eq!((op.num_tcs, op.pfc_enable), (8, 0));
        assert_eq!(
            op.flags & flags::ALL_CHANGED,
            flags::ETS_CHANGED | flags::PFC_CHANGED
        );
        assert_eq!(
            s.set_local(QosParameters::default()),
            Indications::default(),
            "same request: no indication"
        );
    }

    #[test]
    fn remote_reception_refresh_expiry_and_a_second_peer() {
        let mut s = QosState::new(CAPS, false);
        let _ = s.initial();
        let remote = two_tc(flags::ALL_CONFIGURED, 0x18);
        let first = s.remote_event(RemoteEvent::Received {
            peer: PEER,
            params: remote,
            recommendation: None,
            pfc_local_wins: false,
        });
        assert_eq!(
            first.operational, None,
            "not willing: operational unchanged"
        );
        assert_eq!(
            first.remote.unwrap().flags,
            flags::ALL_CONFIGURED | flags::ALL_CHANGED
        );
        let refresh = s.remote_event(RemoteEvent::Received {
            peer: PEER,
            params: remote,
            recommendation: None,
            pfc_local_wins: false,
        });
        assert_eq!(refresh, Indications::default());
        let expired = s.remote_event(RemoteEvent::TtlExpired { peer: PEER });
        let zero = expired.remote.unwrap();
        assert_eq!(zero.content(), QosParameters::default());
        assert_eq!(
            zero.flags,
            flags::ALL_CHANGED & !flags::CLASSIFICATION_CHANGED
        );
        assert_eq!(
            s.remote_event(RemoteEvent::TtlExpired { peer: PEER }),
            Indications::default()
        );
        // Two peers: invalid until both expire.
        let _ = s.remote_event(RemoteEvent::Received {
            peer: PEER,
            params: remote,
            recommendation: None,
            pfc_local_wins: false,
        });
        let second = s.remote_event(RemoteEvent::Received {
            peer: OTHER,
            params: remote,
            recommendation: None,
            pfc_local_wins: false,
        });
        assert_eq!(second.remote.unwrap().content(), QosParameters::default());
        let _ = s.remote_event(RemoteEvent::TtlExpired { peer: OTHER });
        let again = s.remote_event(RemoteEvent::Received {
            peer: PEER,
            params: remote,
            recommendation: None,
            pfc_local_wins: false,
        });
        assert_eq!(again.remote, None, "still invalid while PEER's TTL runs");
        let _ = s.remote_event(RemoteEvent::TtlExpired { peer: PEER });
        let back = s.remote_event(RemoteEvent::Received {
            peer: PEER,
            params: remote,
            recommendation: None,
            pfc_local_wins: false,
        });
        assert!(back.remote.is_some_and(|r| r.content() == remote.content()));
    }

    #[test]
    fn willing_adopts_the_remote_set_and_falls_back_to_local() {
        let mut s = QosState::new(CAPS, false);
        let _ = s.initial();
        let mut local = two_tc(flags::ALL_CONFIGURED | flags::WILLING, 0x08);
        local.classifications.push(Classification {
            selector: condition::TCP_PORT,
            field: 445,
            priority: 3,
        });
        let _ = s.set_local(local);
        let mut remote = two_tc(flags::ALL_CONFIGURED, 0x10);
        remote.tc_bw = [30, 70, 0, 0, 0, 0, 0, 0];
        let recommendation = EtsGroup {
            tc_bw: [40, 60, 0, 0, 0, 0, 0, 0],
            ..EtsGroup::of(&remote)
        };
        let got = s.remote_event(RemoteEvent::Received {
            peer: PEER,
            params: remote,
            recommendation: Some(recommendation),
            pfc_local_wins: false,
        });
        let op = got.operational.unwrap();
        assert_eq!(
            (op.tc_bw[0], op.pfc_enable, op.classifications.len()),
            (40, 0x10, 0),
            "recommendation, remote PFC and apps"
        );
        assert_eq!(op.flags & flags::ALL_CHANGED, flags::ALL_CHANGED);
        // Both willing and this adapter's MAC the higher: the peer adopts our PFC, we keep it;
        // ETS (asymmetric) still follows the recommendation.
        let tie = s.remote_event(RemoteEvent::Received {
            peer: PEER,
            params: remote,
            recommendation: Some(recommendation),
            pfc_local_wins: true,
        });
        let op = tie.operational.unwrap();
        assert_eq!((op.tc_bw[0], op.pfc_enable), (40, 0x08), "local PFC kept");
        assert!(tie.remote.is_none(), "the peer's set itself did not change");
        let _ = s.remote_event(RemoteEvent::Received {
            peer: PEER,
            params: remote,
            recommendation: Some(recommendation),
            pfc_local_wins: false,
        });
        let lost = s.remote_event(RemoteEvent::TtlExpired { peer: PEER });
        let op = lost.operational.unwrap();
        assert_eq!(
            (op.tc_bw[0], op.pfc_enable, op.classifications.len()),
            (50, 0x08, 1),
            "back to local"
        );
        // Willing toggled off with a remote present: local wins at once.
        let _ = s.remote_event(RemoteEvent::Received {
            peer: PEER,
            params: remote,
            recommendation: Some(recommendation),
            pfc_local_wins: false,
        });
        let off = s
            .set_local(two_tc(flags::ALL_CONFIGURED, 0x08))
            .operational
            .unwrap();
        assert_eq!((off.tc_bw[0], off.pfc_enable), (50, 0x08));
    }

    /// What `can_apply_ets` was: the group as an `OID_QOS_PARAMETERS` request (ETS and PFC
    /// configured, PFC off, no element), validated.
    fn accepted_as_request(caps: &Capabilities, e: &EtsGroup) -> bool {
        let mut request = [0u8; 52];
        request[..4].copy_from_slice(&[0xB6, 1, 52, 0]);
        request[4..8]
            .copy_from_slice(&(flags::ETS_CONFIGURED | flags::PFC_CONFIGURED).to_le_bytes());
        request[8..12].copy_from_slice(&e.num_tcs.to_le_bytes());
        request[12..20].copy_from_slice(&e.prio_tc);
        request[20..28].copy_from_slice(&e.tc_bw);
        request[28..36].copy_from_slice(&e.tsa);
        validate::parse_request(&request, caps).is_ok()
    }

    #[test]
    fn an_ets_group_is_applicable_exactly_when_a_request_of_it_is_accepted() {
        // A small deterministic generator over values near every check's edges.
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let pick = |r: u64, from: &[u8]| from[usize::try_from(r).unwrap() % from.len()];
        let mut accepted = 0;
        for round in 0..20_000 {
            let caps = Capabilities {
                max_traffic_classes: u32::try_from(round % 9).unwrap(),
                max_ets_traffic_classes: u32::try_from((round / 9) % 9).unwrap(),
                ..CAPS
            };
            let n = u32::from(pick(next(), &[0, 1, 2, 3, 4, 8, 9, 200]));
            let mut e = EtsGroup {
                num_tcs: n,
                ..EtsGroup::default()
            };
            let tcs = u8::try_from(n.clamp(1, 8)).unwrap();
            for p in 0..8 {
                e.prio_tc[p] = if next() % 16 == 0 {
                    tcs
                } else {
                    u8::try_from(next() % u64::from(tcs)).unwrap()
                };
            }
            let share = 100 / tcs;
            for tc in 0..usize::from(tcs) {
                e.tsa[tc] = pick(next(), &[2, 2, 2, 2, 0, 1, 3]);
                e.tc_bw[tc] = if e.tsa[tc] == 0 { 0 } else { share };
            }
            e.tc_bw[0] = e.tc_bw[0].wrapping_add(100 - share * tcs);
            if next() % 8 == 0 {
                let tc = usize::try_from(next() % 8).unwrap();
                e.tc_bw[tc] = e.tc_bw[tc].wrapping_add(1);
            }
            if next() % 8 == 0 {
                e.tsa[usize::try_from(next() % 8).unwrap()] = 2;
            }
            let applicable = can_apply_ets(&caps, &e);
            assert_eq!(applicable, accepted_as_request(&caps, &e), "{caps:?} {e:?}");
            accepted += usize::from(applicable);
        }
        assert!(
            accepted > 1_000,
            "the generator reaches accepted groups: {accepted}"
        );
    }

    #[test]
    fn a_remote_group_the_adapter_cannot_apply_leaves_local_in_place() {
        let caps = Capabilities {
            max_pfc_traffic_classes: 1,
            ..CAPS
        };
        let mut s = QosState::new(caps, true);
        let _ = s.initial();
        let remote = two_tc(flags::ALL_CONFIGURED, 0x18);
        let got = s.remote_event(RemoteEvent::Received {
            peer: PEER,
            params: remote,
            recommendation: None,
            pfc_local_wins: false,
        });
        let op = got.operational.unwrap();
        assert_eq!(
            (op.num_tcs, op.pfc_enable),
            (2, 0),
            "ETS adopted; two PFC priorities refused"
        );
    }
}
