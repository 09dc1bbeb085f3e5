//! The IEEE 802.1Qaz DCBX TLVs carried in LLDP (organizationally specific TLVs, OUI 00-80-C2):
//! ETS Configuration (subtype 9), ETS Recommendation (10), PFC Configuration (11) and Application
//! Priority (12), with parse and emit, and their conversion into the remote parameter set the
//! QoS state takes (spec §4.1-4.2, `qos::state::RemoteEvent`).
//!
//! Layouts (802.1Q-2018 D.2.8-D.2.10, D.2.12), after the 3-byte OUI and the subtype byte:
//! - ETS Configuration: `Willing:1 CBS:1 Reserved:3 MaxTCs:3`, the priority assignment table (4
//!   bytes, two priorities per byte, priority 0 in the high nibble), the TC bandwidth table (8
//!   bytes) and the TSA assignment table (8 bytes): 25 bytes in all.
//! - ETS Recommendation: a reserved byte, then the same three tables: 25 bytes.
//! - PFC Configuration: `Willing:1 MBC:1 Reserved:2 PFCcap:4`, the enable bitmap: 6 bytes.
//! - Application Priority: a reserved byte, then 3-byte entries `Priority:3 Reserved:2 Sel:3`,
//!   protocol ID (16 bits, big endian): 5 + 3n bytes.
//!
//! Conversion decisions (the contract is silent; tested in `tests.rs`):
//! - MaxTCs 0 means 8 (802.1Q D.2.8.5).
//! - The ETS Recommendation's TC count is the MaxTCs of the LLDPDU's ETS Configuration (8 when
//!   none was sent): the Recommendation TLV has no MaxTCs of its own.
//! - An ETS table naming a traffic class above 7 (the nibbles 8-15 are reserved) or a TSA other
//!   than strict, CBS or ETS (e.g. 255, vendor specific) cannot be expressed as NDIS parameters:
//!   that ETS TLV is left out of the remote set (as if not received) and reported.
//! - Application selectors map to NDIS conditions: 1 EtherType -> `ETHERTYPE`, 2 TCP/SCTP port ->
//!   `TCP_PORT`, 3 UDP/DCCP port -> `UDP_PORT`, 4 TCP/SCTP/UDP/DCCP port -> `TCP_OR_UDP_PORT`.
//!   Selector 5 (DSCP, 802.1Qcd) and the reserved 0, 6, 7 have no NDIS condition: the entry is
//!   skipped and counted. Entries past the 64 a parameter set holds are skipped and counted.

use crate::qos::params::{
    Classification, MAX_CLASSIFICATIONS, MAX_TCS, QosParameters, condition, flags, tsa as ndis_tsa,
};
use crate::qos::state::EtsGroup;

use super::Error;

/// The IEEE 802.1 OUI.
pub const OUI_8021: [u8; 3] = [0x00, 0x80, 0xC2];

/// The 802.1Qaz subtypes.
pub mod subtype {
    /// ETS Configuration
    pub const ETS_CONFIGURATION: u8 = 9;
    /// ETS Recommendation
    pub const ETS_RECOMMENDATION: u8 = 10;
    /// PFC Configuration
    pub const PFC_CONFIGURATION: u8 = 11;
    /// Application Priority
    pub const APPLICATION_PRIORITY: u8 = 12;
}

/// The length of an ETS TLV's value (OUI and subtype included).
pub const ETS_LEN: usize = 25;
/// The length of a PFC TLV's value.
pub const PFC_LEN: usize = 6;
/// The fixed part of an Application Priority TLV's value.
pub const APP_FIXED_LEN: usize = 5;
/// The length of one application priority entry.
pub const APP_ENTRY_LEN: usize = 3;

/// An ETS Configuration or Recommendation TLV, as on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EtsTlv {
    /// The Willing bit (always false in a Recommendation).
    pub willing: bool,
    /// The Credit-Based Shaper bit (always false in a Recommendation).
    pub cbs: bool,
    /// MaxTCs as sent (0 means 8).
    pub max_tcs: u8,
    /// Priority -> TC, the raw nibbles (0-15).
    pub prio_tc: [u8; 8],
    /// TC -> percent.
    pub tc_bw: [u8; 8],
    /// TC -> TSA (0 strict, 1 CBS, 2 ETS, 255 vendor).
    pub tsa: [u8; 8],
}

impl EtsTlv {
    fn parse(value: &[u8], recommendation: bool) -> Option<Self> {
        let v: &[u8; ETS_LEN] = value.try_into().ok()?;
        let [_, _, _, _, flags, p01, p23, p45, p67, rest @ ..] = *v;
        let (tc_bw, tsa) = rest.split_at(8);
        let mut prio_tc = [0u8; 8];
        for (pair, byte) in prio_tc.chunks_exact_mut(2).zip([p01, p23, p45, p67]) {
            if let [hi, lo] = pair {
                *hi = byte >> 4;
                *lo = byte & 0x0F;
            }
        }
        let (willing, cbs, max_tcs) = if recommendation {
            (false, false, 0)
        } else {
            (flags & 0x80 != 0, flags & 0x40 != 0, flags & 0x07)
        };
        Some(Self {
            willing,
            cbs,
            max_tcs,
            prio_tc,
            tc_bw: tc_bw.try_into().ok()?,
            tsa: tsa.try_into().ok()?,
        })
    }

    /// The TLV value (OUI, subtype, body) of a Configuration (`recommendation` false) or a
    /// Recommendation.
    #[must_use]
    pub fn emit(&self, recommendation: bool) -> [u8; ETS_LEN] {
        let mut v = [0u8; ETS_LEN];
        let first = if recommendation {
            0
        } else {
            (u8::from(self.willing) << 7) | (u8::from(self.cbs) << 6) | (self.max_tcs & 0x07)
        };
        let sub = if recommendation {
            subtype::ETS_RECOMMENDATION
        } else {
            subtype::ETS_CONFIGURATION
        };
        let mut pairs = [0u8; 4];
        for (byte, pair) in pairs.iter_mut().zip(self.prio_tc.chunks_exact(2)) {
            if let [hi, lo] = pair {
                *byte = ((hi & 0x0F) << 4) | (lo & 0x0F);
            }
        }
        for (dst, src) in v.iter_mut().zip(
            OUI_8021
                .iter()
                .chain(&[sub, first])
                .chain(&pairs)
                .chain(&self.tc_bw)
                .chain(&self.tsa),
        ) {
            *dst = *src;
        }
        v
    }

    /// The ETS group this TLV describes in NDIS terms, or `None` when it names a TC above 7 or a
    /// TSA NDIS has no value for.
    #[must_use]
    pub fn to_group(&self) -> Option<EtsGroup> {
        let tcs_ok = self.prio_tc.iter().all(|&t| usize::from(t) < MAX_TCS);
        let tsa_ok = self
            .tsa
            .iter()
            .all(|&t| matches!(t, ndis_tsa::STRICT | ndis_tsa::CBS | ndis_tsa::ETS));
        (tcs_ok && tsa_ok).then(|| EtsGroup {
            num_tcs: if self.max_tcs == 0 {
                8
            } else {
                u32::from(self.max_tcs)
            },
            prio_tc: self.prio_tc,
            tc_bw: self.tc_bw,
            tsa: self.tsa,
        })
    }
}

/// A PFC Configuration TLV.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PfcTlv {
    /// The Willing bit.
    pub willing: bool,
    /// MACsec Bypass Capability.
    pub mbc: bool,
    /// PFC capability: how many priorities may have PFC enabled at once.
    pub cap: u8,
    /// Bit p: PFC on priority p.
    pub enable: u8,
}

impl PfcTlv {
    fn parse(value: &[u8]) -> Option<Self> {
        let [_, _, _, _, flags, enable] = *<&[u8; PFC_LEN]>::try_from(value).ok()?;
        Some(Self {
            willing: flags & 0x80 != 0,
            mbc: flags & 0x40 != 0,
            cap: flags & 0x0F,
            enable,
        })
    }

    /// The TLV value.
    #[must_use]
    pub fn emit(&self) -> [u8; PFC_LEN] {
        let [a, b, c] = OUI_8021;
        let flags = (u8::from(self.willing) << 7) | (u8::from(self.mbc) << 6) | (self.cap & 0x0F);
        [a, b, c, subtype::PFC_CONFIGURATION, flags, self.enable]
    }
}

/// One Application Priority entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AppEntry {
    /// The 802.1p priority (0-7).
    pub priority: u8,
    /// The selector (1-5 defined).
    pub selector: u8,
    /// EtherType, port or DSCP value.
    pub protocol: u16,
}

/// An Application Priority TLV: its entries, borrowed from the PDU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AppTlv<'a> {
    entries: &'a [u8],
}

impl<'a> AppTlv<'a> {
    fn parse(value: &'a [u8]) -> Option<Self> {
        let entries = value.get(APP_FIXED_LEN..)?;
        (entries.len() % APP_ENTRY_LEN == 0).then_some(Self { entries })
    }

    /// The entries.
    pub fn entries(&self) -> impl Iterator<Item = AppEntry> + 'a {
        self.entries.chunks_exact(APP_ENTRY_LEN).map(|e| match *e {
            [ps, hi, lo] => AppEntry {
                priority: ps >> 5,
                selector: ps & 0x07,
                protocol: u16::from_be_bytes([hi, lo]),
            },
            _ => AppEntry::default(),
        })
    }

    /// Writes the TLV value for `entries` into `out`; returns its length, or `None` if it does
    /// not fit in `out` or in a TLV (511 bytes: 168 entries).
    #[must_use]
    pub fn emit(entries: &[AppEntry], out: &mut [u8]) -> Option<usize> {
        let len = entries
            .len()
            .checked_mul(APP_ENTRY_LEN)?
            .checked_add(APP_FIXED_LEN)?;
        if len > 0x1FF {
            return None;
        }
        let dst = out.get_mut(..len)?;
        let (head, body) = dst.split_at_mut(APP_FIXED_LEN);
        let [a, b, c] = OUI_8021;
        head.copy_from_slice(&[a, b, c, subtype::APPLICATION_PRIORITY, 0]);
        for (slot, e) in body.chunks_exact_mut(APP_ENTRY_LEN).zip(entries) {
            let [hi, lo] = e.protocol.to_be_bytes();
            slot.copy_from_slice(&[((e.priority & 0x07) << 5) | (e.selector & 0x07), hi, lo]);
        }
        Some(len)
    }
}

/// The 802.1Qaz TLVs of one LLDPDU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DcbxTlvs<'a> {
    /// ETS Configuration.
    pub ets: Option<EtsTlv>,
    /// ETS Recommendation.
    pub recommendation: Option<EtsTlv>,
    /// PFC Configuration.
    pub pfc: Option<PfcTlv>,
    /// Application Priority.
    pub app: Option<AppTlv<'a>>,
}

/// The remote parameter set an LLDPDU's DCBX TLVs give, and what could not be carried over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Remote {
    /// The peer's parameters: `_CONFIGURED` flags for the groups it sent, `WILLING` from its
    /// ETS Configuration (or PFC) willing bit.
    pub params: QosParameters,
    /// Its ETS Recommendation, when sent and expressible.
    pub recommendation: Option<EtsGroup>,
    /// ETS TLVs left out (a TC above 7 or an unknown TSA).
    pub ets_dropped: u8,
    /// Application entries skipped (no NDIS condition, or past 64).
    pub apps_skipped: usize,
}

impl<'a> DcbxTlvs<'a> {
    /// Takes one organizationally specific TLV value: an 802.1Qaz one is parsed (and must have
    /// its subtype's length), any other is ignored.
    ///
    /// # Errors
    /// [`Error::BadDcbxLength`] for an 802.1Qaz TLV of the wrong length.
    pub fn take(&mut self, value: &'a [u8]) -> Result<(), Error> {
        let (Some(oui), Some(&sub)) = (value.get(..3), value.get(3)) else {
            return Ok(());
        };
        if oui != OUI_8021 {
            return Ok(());
        }
        let bad = Error::BadDcbxLength {
            subtype: sub,
            len: value.len(),
        };
        match sub {
            subtype::ETS_CONFIGURATION => self.ets = Some(EtsTlv::parse(value, false).ok_or(bad)?),
            subtype::ETS_RECOMMENDATION => {
                self.recommendation = Some(EtsTlv::parse(value, true).ok_or(bad)?);
            }
            subtype::PFC_CONFIGURATION => self.pfc = Some(PfcTlv::parse(value).ok_or(bad)?),
            subtype::APPLICATION_PRIORITY => self.app = Some(AppTlv::parse(value).ok_or(bad)?),
            _ => {}
        }
        Ok(())
    }

    /// Whether the PDU carried any 802.1Qaz TLV.
    #[must_use]
    pub const fn any(&self) -> bool {
        self.ets.is_some()
            || self.recommendation.is_some()
            || self.pfc.is_some()
            || self.app.is_some()
    }

    /// The remote parameter set these TLVs describe (see the module's conversion decisions),
    /// and what could not be carried over. (A convenience for tests and tools: the agent
    /// hands the set to the QoS state with [`DcbxTlvs::write_remote`], in place.)
    #[must_use]
    pub fn to_remote(&self) -> Remote {
        let mut r = Remote::default();
        let (ets_dropped, apps_skipped) = self.convert(&mut r.params);
        r.recommendation = self.recommendation_group();
        r.ets_dropped = ets_dropped;
        r.apps_skipped = apps_skipped;
        r
    }

    /// Writes the remote parameter set these TLVs describe into `params` (all of it: the
    /// groups not sent are zero-filled), and returns its ETS Recommendation (when sent and
    /// expressible): [`DcbxTlvs::to_remote`]'s `params` and `recommendation`, in place.
    pub fn write_remote(&self, params: &mut QosParameters) -> Option<EtsGroup> {
        let _lost = self.convert(params);
        self.recommendation_group()
    }

    /// What the conversion leaves out: ETS TLVs dropped and application entries skipped
    /// ([`Remote::ets_dropped`], [`Remote::apps_skipped`]), counted without building the set.
    #[must_use]
    pub fn unconvertible(&self) -> (u8, usize) {
        let mut ets_dropped = 0u8;
        for ets in [&self.ets, &self.recommendation].into_iter().flatten() {
            if ets.to_group().is_none() {
                ets_dropped = ets_dropped.saturating_add(1);
            }
        }
        let mut apps_skipped = 0usize;
        let mut kept = 0usize;
        if let Some(app) = &self.app {
            for e in app.entries() {
                // An entry is kept when it has an NDIS condition and the set has room.
                if app_condition(e.selector).is_some() && kept < MAX_CLASSIFICATIONS {
                    kept = kept.saturating_add(1);
                } else {
                    apps_skipped = apps_skipped.saturating_add(1);
                }
            }
        }
        (ets_dropped, apps_skipped)
    }

    /// The ETS Recommendation as an NDIS group, when sent and expressible. The Recommendation
    /// TLV carries no TC count (its MaxTCs byte is reserved): its tables are over the peer's
    /// traffic classes, so the count is the MaxTCs of the same LLDPDU's ETS Configuration, 8
    /// without one.
    fn recommendation_group(&self) -> Option<EtsGroup> {
        let max_tcs = self.ets.map_or(0, |e| e.max_tcs);
        self.recommendation
            .map(|r| EtsTlv { max_tcs, ..r })
            .as_ref()
            .and_then(EtsTlv::to_group)
    }

    /// Writes the parameter set into `p` (zero-filled first); the ETS TLVs dropped and the
    /// application entries skipped.
    fn convert(&self, p: &mut QosParameters) -> (u8, usize) {
        *p = QosParameters::ZERO;
        let mut ets_dropped = 0u8;
        let mut apps_skipped = 0usize;
        if let Some(ets) = &self.ets {
            if ets.willing {
                p.flags |= flags::WILLING;
            }
            match ets.to_group() {
                Some(g) => {
                    p.flags |= flags::ETS_CONFIGURED;
                    p.num_tcs = g.num_tcs;
                    p.prio_tc = g.prio_tc;
                    p.tc_bw = g.tc_bw;
                    p.tsa = g.tsa;
                }
                None => ets_dropped = ets_dropped.saturating_add(1),
            }
        }
        if self.recommendation.is_some() && self.recommendation_group().is_none() {
            ets_dropped = ets_dropped.saturating_add(1);
        }
        if let Some(pfc) = &self.pfc {
            if pfc.willing {
                p.flags |= flags::WILLING;
            }
            p.flags |= flags::PFC_CONFIGURED;
            p.pfc_enable = u32::from(pfc.enable);
        }
        if let Some(app) = &self.app {
            p.flags |= flags::CLASSIFICATION_CONFIGURED;
            for e in app.entries() {
                let Some(selector) = app_condition(e.selector) else {
                    apps_skipped = apps_skipped.saturating_add(1);
                    continue;
                };
                let pushed = p.classifications.push(Classification {
                    selector,
                    field: e.protocol,
                    priority: e.priority,
                });
                if !pushed {
                    apps_skipped = apps_skipped.saturating_add(1);
                }
            }
        }
        (ets_dropped, apps_skipped)
    }
}

/// The NDIS condition of an application selector, if it has one (see the module's conversion
/// decisions).
fn app_condition(selector: u8) -> Option<u16> {
    match selector {
        1 => Some(condition::ETHERTYPE),
        2 => Some(condition::TCP_PORT),
        3 => Some(condition::UDP_PORT),
        4 => Some(condition::TCP_OR_UDP_PORT),
        _ => None,
    }
}
