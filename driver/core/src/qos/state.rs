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

/// What the DCBX engine (or, until it exists, the simulator playing a peer) hands the adapter.
/// (`Received` is much larger than `TtlExpired`; the events are passed by value once each and
/// never stored, so the size difference costs nothing worth a box.)
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
    remote: Option<(QosParameters, Option<EtsGroup>)>,
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
        remote: None,
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
        *remote = None;
        *pfc_local_wins = false;
        *peers = [None; MAX_PEERS];
        *invalid_until_quiet = false;
        *operational = factory_.content();
        *last_operational = None;
        *last_remote = None;
        self.operational = self.resolve();
    }

    /// The operational set in force (what the NIC applies; the classifier snapshot's source).
    #[must_use]
    pub fn operational(&self) -> &QosParameters {
        &self.operational
    }

    /// The ETS tables this adapter recommends to a willing peer: the local ETS configuration,
    /// or the factory one when none is configured (issue 8; see `lldp::transmit`).
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
        Indications {
            operational: self.operational_change(),
            remote: None,
        }
    }

    /// Applies an accepted `OID_QOS_PARAMETERS` (spec §3.5, §4.2, §4.3).
    pub fn set_local(&mut self, params: QosParameters) -> Indications {
        self.local = params;
        self.willing = params.flags & flags::WILLING != 0;
        self.operational = self.resolve();
        Indications {
            operational: self.operational_change(),
            remote: None,
        }
    }

    /// Applies a remote event (spec §5.2, §5.3).
    pub fn remote_event(&mut self, event: RemoteEvent) -> Indications {
        let remote = match event {
            RemoteEvent::Received {
                peer,
                params,
                recommendation,
                pfc_local_wins,
            } => {
                self.pfc_local_wins = pfc_local_wins;
                self.received(peer, params, recommendation)
            }
            RemoteEvent::TtlExpired { peer } => self.expired(peer),
        };
        self.operational = self.resolve();
        Indications {
            operational: self.operational_change(),
            remote,
        }
    }

    fn received(
        &mut self,
        peer: [u8; 6],
        params: QosParameters,
        recommendation: Option<EtsGroup>,
    ) -> Option<QosParameters> {
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
        if self.invalid_until_quiet {
            self.remote = None;
            return self.remote_change(QosParameters::default());
        }
        self.remote = Some((params, recommendation));
        self.remote_change(params)
    }

    fn expired(&mut self, peer: [u8; 6]) -> Option<QosParameters> {
        for slot in &mut self.peers {
            if *slot == Some(peer) {
                *slot = None;
            }
        }
        if self.peers.iter().all(Option::is_none) {
            self.invalid_until_quiet = false;
        }
        self.remote = None;
        self.remote_change(QosParameters::default())
    }

    /// The remote indication for `params`, unless it repeats the last one. A zero-filled set
    /// (invalidation) is indicated only after a non-zero one.
    fn remote_change(&mut self, params: QosParameters) -> Option<QosParameters> {
        // Few sets on the stack: each is 432 bytes, and a kernel stack has 24 KiB in all.
        let zero = params == QosParameters::ZERO;
        let last = self.last_remote.as_ref();
        if zero && last.is_none_or(|l| l.content() == QosParameters::ZERO) {
            return None;
        }
        if last.is_some_and(|l| {
            l.content() == params.content()
                && (l.flags & !flags::ALL_CHANGED) == (params.flags & !flags::ALL_CHANGED)
        }) {
            return None;
        }
        // `changed_from` compares the groups' content only, never the flags: the sets need not
        // be copied without their flags first.
        let changed = if zero {
            // Only the groups that held something before changed.
            last.map_or(0, |l| QosParameters::ZERO.changed_from(Some(l)))
        } else {
            params.changed_from(last)
        };
        let mut indicated = params;
        indicated.flags = (params.flags & !flags::ALL_CHANGED) | changed;
        self.last_remote = Some(indicated);
        Some(indicated)
    }

    fn operational_change(&mut self) -> Option<QosParameters> {
        let content = self.operational.content();
        let previous = self.last_operational.map(|p| p.content());
        if previous == Some(content) {
            return None;
        }
        let mut indicated = content;
        indicated.flags = flags::ALL_CONFIGURED | content.changed_from(previous.as_ref());
        self.last_operational = Some(indicated);
        Some(indicated)
    }

    /// Resolves the operational set (spec §4.2) from local (with the §4.3 overrides) and, when
    /// Willing and a valid remote set exists, from the remote set.
    fn resolve(&self) -> QosParameters {
        let mut op = self.local.content();
        if self.local.flags & flags::ETS_CONFIGURED == 0 {
            EtsGroup::of(&self.factory).apply_to(&mut op);
        }
        if self.local.flags & flags::PFC_CONFIGURED == 0 {
            op.pfc_enable = 0;
        }
        if self.local.flags & flags::CLASSIFICATION_CONFIGURED == 0 {
            op.classifications = Classifications::default();
        }
        if let (true, Some((remote, recommendation))) = (self.willing, self.remote.as_ref()) {
            let ets = match recommendation {
                Some(r) => Some(*r),
                None if remote.flags & flags::ETS_CONFIGURED != 0 => Some(EtsGroup::of(remote)),
                None => None,
            };
            if let Some(ets) = ets.filter(|e| self.can_apply_ets(e)) {
                ets.apply_to(&mut op);
            }
            if remote.flags & flags::PFC_CONFIGURED != 0
                && !self.pfc_local_wins
                && self.can_apply_pfc(remote.pfc_enable)
            {
                op.pfc_enable = remote.pfc_enable;
            }
            if remote.flags & flags::CLASSIFICATION_CONFIGURED != 0 {
                op.classifications = remote.classifications;
            }
        }
        op
    }

    fn can_apply_ets(&self, e: &EtsGroup) -> bool {
        let mut request = [0u8; 52];
        request[..4].copy_from_slice(&[0xB6, 1, 52, 0]);
        let _ = crate::wire::bytes::write_at(
            &mut request,
            4,
            &(flags::ETS_CONFIGURED | flags::PFC_CONFIGURED).to_le_bytes(),
        );
        let _ = crate::wire::bytes::write_at(&mut request, 8, &e.num_tcs.to_le_bytes());
        let _ = crate::wire::bytes::write_at(&mut request, 12, &e.prio_tc);
        let _ = crate::wire::bytes::write_at(&mut request, 20, &e.tc_bw);
        let _ = crate::wire::bytes::write_at(&mut request, 28, &e.tsa);
        validate::parse_request(&request, &self.caps).is_ok()
    }

    fn can_apply_pfc(&self, pfc_enable: u32) -> bool {
        pfc_enable & 0xFFFF_FF00 == 0
            && pfc_enable.count_ones() <= self.caps.max_pfc_traffic_classes
    }
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
