//! The LLDPDU this adapter transmits (802.1AB §9.2, 802.1Qaz §D): Chassis ID and Port ID (both
//! the adapter's MAC address), TTL, then the DCBX TLVs of its operational configuration (ETS
//! Configuration, ETS Recommendation, PFC Configuration, Application Priority), then End. A TTL
//! of 0 makes the shutdown LLDPDU, which carries only the three mandatory TLVs (802.1AB §9.1.2:
//! sent at halt and pause so that the peer forgets this adapter at once).
//!
//! Decisions (the contract is silent; tested):
//! - The ETS Configuration carries the operational tables (what the adapter runs); the ETS
//!   Recommendation carries the locally configured ones (what its administrator wants a willing
//!   peer to run). Recommending the operational tables instead would make two willing adapters
//!   swap each other's tables on every exchange, never settling. Without a separate
//!   recommendation the Configuration's tables are sent in both.
//! - MaxTCs is the adapter's ETS-capable TC count (8 is sent as 0, 802.1Q D.2.8.5); PFC cap is its
//!   PFC-capable TC count.
//! - Classifications without an IEEE selector are not advertised: DEFAULT (NDIS' catch-all) and
//!   NETDIRECT_PORT (a port of the NDK connection namespace, not of TCP or UDP). The Application
//!   Priority TLV is left out when nothing remains.

use crate::qos::params::{MAX_CLASSIFICATIONS, QosParameters, condition};
use crate::qos::state::EtsGroup;

use super::dcbx::{APP_ENTRY_LEN, APP_FIXED_LEN, AppEntry, AppTlv, EtsTlv, PfcTlv};
use super::{emit_tlv, tlv_type};

/// Chassis ID subtype "MAC address" (802.1AB Table 8-2).
const CHASSIS_MAC: u8 = 4;
/// Port ID subtype "MAC address" (802.1AB Table 8-3).
const PORT_MAC: u8 = 3;

/// What the adapter advertises.
#[derive(Debug, Clone, Copy)]
pub struct Advertisement<'p> {
    /// The adapter's MAC address (Chassis ID and Port ID).
    pub mac: [u8; 6],
    /// Seconds the peer keeps this information (0: the shutdown LLDPDU).
    pub ttl: u16,
    /// The local DCBX Willing bit.
    pub willing: bool,
    /// ETS-capable traffic classes (1-8).
    pub ets_tcs: u8,
    /// PFC-capable traffic classes (0-8).
    pub pfc_tcs: u8,
    /// MACsec bypass capable.
    pub macsec_bypass: bool,
    /// The operational parameters.
    pub params: &'p QosParameters,
    /// The ETS tables recommended to a willing peer (`None`: those of `params`).
    pub recommendation: Option<EtsGroup>,
}

/// The APP entries of `params`' classifications that have an IEEE selector, in order.
fn app_entries(params: &QosParameters, out: &mut [AppEntry; MAX_CLASSIFICATIONS]) -> usize {
    let mut n = 0usize;
    for c in params.classifications.as_slice() {
        let selector = match c.selector {
            condition::ETHERTYPE => 1,
            condition::TCP_PORT => 2,
            condition::UDP_PORT => 3,
            condition::TCP_OR_UDP_PORT => 4,
            _ => continue,
        };
        if let Some(slot) = out.get_mut(n) {
            *slot = AppEntry {
                priority: c.priority & 0x07,
                selector,
                protocol: c.field,
            };
            n = n.saturating_add(1);
        }
    }
    n
}

/// Writes the LLDPDU (the bytes after the EtherType) into `out`; returns its length, or `None`
/// when `out` is too small (1500 bytes always suffice: at most 64 APP entries).
#[must_use]
pub fn emit_lldpdu(out: &mut [u8], adv: &Advertisement<'_>) -> Option<usize> {
    let [m0, m1, m2, m3, m4, m5] = adv.mac;
    let mut at = emit_tlv(
        out,
        0,
        tlv_type::CHASSIS_ID,
        &[CHASSIS_MAC, m0, m1, m2, m3, m4, m5],
    )?;
    at = emit_tlv(
        out,
        at,
        tlv_type::PORT_ID,
        &[PORT_MAC, m0, m1, m2, m3, m4, m5],
    )?;
    at = emit_tlv(out, at, tlv_type::TTL, &adv.ttl.to_be_bytes())?;
    if adv.ttl != 0 {
        let p = adv.params;
        let ets = EtsTlv {
            willing: adv.willing,
            cbs: false,
            max_tcs: adv.ets_tcs & 0x07,
            prio_tc: p.prio_tc,
            tc_bw: p.tc_bw,
            tsa: p.tsa,
        };
        at = emit_tlv(out, at, tlv_type::ORG_SPECIFIC, &ets.emit(false))?;
        let rec = adv.recommendation.map_or(ets, |r| EtsTlv {
            prio_tc: r.prio_tc,
            tc_bw: r.tc_bw,
            tsa: r.tsa,
            ..ets
        });
        at = emit_tlv(out, at, tlv_type::ORG_SPECIFIC, &rec.emit(true))?;
        let pfc = PfcTlv {
            willing: adv.willing,
            mbc: adv.macsec_bypass,
            cap: adv.pfc_tcs.min(8),
            enable: u8::try_from(p.pfc_enable & 0xFF).unwrap_or(0),
        };
        at = emit_tlv(out, at, tlv_type::ORG_SPECIFIC, &pfc.emit())?;
        let mut entries = [AppEntry::default(); MAX_CLASSIFICATIONS];
        let n = app_entries(p, &mut entries);
        if n > 0 {
            let mut app = [0u8; APP_FIXED_LEN + APP_ENTRY_LEN * MAX_CLASSIFICATIONS];
            let len = AppTlv::emit(entries.get(..n)?, &mut app)?;
            at = emit_tlv(out, at, tlv_type::ORG_SPECIFIC, app.get(..len)?)?;
        }
    }
    emit_tlv(out, at, tlv_type::END, &[])
}
