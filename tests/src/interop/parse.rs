//! Typed views of lldptool's TLV output and of the shim's log lines.

use std::collections::BTreeSet;

use super::{TSA_CBS, TSA_ETS, TSA_STRICT, TSA_VENDOR};

/// An ETS Configuration or Recommendation TLV as lldptool shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EtsView {
    /// Willing (always false for a Recommendation).
    pub willing: bool,
    /// Credit-based shaper supported.
    pub cbs: bool,
    /// MaxTCs as lldptool prints it (8 for a wire value of 0; 0 for a Recommendation).
    pub max_tcs: u8,
    /// Priority -> TC.
    pub prio_tc: [u8; 8],
    /// TC -> percent.
    pub tc_bw: [u8; 8],
    /// TC -> TSA (`TSA_*`: 0 strict, 1 CBS, 2 ETS, 255 vendor).
    pub tsa: [u8; 8],
}

/// A PFC Configuration TLV as lldptool shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PfcView {
    /// Willing.
    pub willing: bool,
    /// MACsec bypass capable.
    pub mbc: bool,
    /// PFC-capable traffic classes.
    pub cap: u8,
    /// Bit p set: PFC enabled on priority p.
    pub enabled: u8,
}

/// One Application Priority entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct App {
    /// The 802.1p priority.
    pub priority: u8,
    /// The selector (1 EtherType, 2 TCP, 3 UDP, 4 TCP or UDP, 5 DSCP).
    pub selector: u8,
    /// The protocol ID (EtherType, port or DSCP).
    pub protocol: u16,
}

impl App {
    /// `App { priority, selector, protocol }`.
    #[must_use]
    pub const fn new(priority: u8, selector: u8, protocol: u16) -> Self {
        Self {
            priority,
            selector,
            protocol,
        }
    }
}

/// The TLVs of one LLDPDU as `lldptool -t [-n] -i IF` prints them (the neighbour's with `-n`,
/// lldpad's own without). A TLV absent from the output is `None`; with no neighbour at all
/// everything is `None`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NeighborView {
    /// The Chassis ID as printed (e.g. `MAC: 02:00:00:00:00:02`).
    pub chassis_id: Option<String>,
    /// The Port ID as printed (e.g. `MAC: 02:00:00:00:00:02` or `Ifname: sim0`).
    pub port_id: Option<String>,
    /// The TTL.
    pub ttl: Option<u16>,
    /// ETS Configuration.
    pub ets: Option<EtsView>,
    /// ETS Recommendation.
    pub ets_rec: Option<EtsView>,
    /// PFC Configuration.
    pub pfc: Option<PfcView>,
    /// Application Priority entries (a set: lldpad's order varies); `Some(empty)` for an
    /// APP TLV without entries.
    pub app: Option<BTreeSet<App>>,
}

impl NeighborView {
    /// No TLV at all (lldptool prints nothing while there is no neighbour).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// The lldptool name of a TSA value (`tsa=TC:NAME`).
#[must_use]
pub fn tsa_name(tsa: u8) -> &'static str {
    match tsa {
        TSA_STRICT => "strict",
        TSA_CBS => "cb_shaper",
        TSA_ETS => "ets",
        TSA_VENDOR => "vendor",
        _ => "strict",
    }
}

fn tsa_value(name: &str) -> Option<u8> {
    match name {
        "strict" => Some(TSA_STRICT),
        "cb_shaper" | "cbs" | "credit-based" => Some(TSA_CBS),
        "ets" => Some(TSA_ETS),
        "vendor" => Some(TSA_VENDOR),
        other => other.parse().ok(),
    }
}

fn yes_no(v: &str, line: &str) -> Result<bool, String> {
    match v {
        "yes" | "supported" => Ok(true),
        "no" | "not supported" => Ok(false),
        _ => Err(format!("lldptool: expected yes/no in {line:?}")),
    }
}

fn number<T: TryFrom<u64>>(v: &str, line: &str) -> Result<T, String> {
    let v = v.trim().trim_end_matches('%');
    let n = if let Some(hex) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()
    } else {
        v.parse::<u64>().ok()
    };
    n.and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| format!("lldptool: bad number {v:?} in {line:?}"))
}

/// `K:V K:V …` (index 0-7 -> value) into a table.
fn pairs(
    v: &str,
    line: &str,
    mut value: impl FnMut(&str) -> Option<u8>,
) -> Result<[u8; 8], String> {
    let mut t = [0u8; 8];
    for tok in v.split([' ', ',']).filter(|s| !s.is_empty()) {
        let (k, val) = tok
            .split_once(':')
            .ok_or_else(|| format!("lldptool: expected K:V, got {tok:?} in {line:?}"))?;
        let k: usize = number(k, line)?;
        let slot = t
            .get_mut(k)
            .ok_or_else(|| format!("lldptool: index {k} out of range in {line:?}"))?;
        *slot = value(val).ok_or_else(|| format!("lldptool: bad value {val:?} in {line:?}"))?;
    }
    Ok(t)
}

fn ets_field(ets: &mut EtsView, key: &str, v: &str, line: &str) -> Result<(), String> {
    match key {
        "Willing" => ets.willing = yes_no(v, line)?,
        "CBS" => ets.cbs = yes_no(v, line)?,
        "MAX_TCS" => ets.max_tcs = number(v, line)?,
        "PRIO_MAP" => ets.prio_tc = pairs(v, line, |s| s.parse().ok())?,
        "TC Bandwidth" => {
            let mut bw = [0u8; 8];
            let vals: Vec<&str> = v.split_whitespace().collect();
            if vals.len() != 8 {
                return Err(format!("lldptool: expected 8 bandwidths in {line:?}"));
            }
            for (slot, s) in bw.iter_mut().zip(vals) {
                *slot = number(s, line)?;
            }
            ets.tc_bw = bw;
        }
        "TSA_MAP" => ets.tsa = pairs(v, line, tsa_value)?,
        _ => {}
    }
    Ok(())
}

fn pfc_field(pfc: &mut PfcView, key: &str, v: &str, line: &str) -> Result<(), String> {
    match key {
        "Willing" => pfc.willing = yes_no(v, line)?,
        "MACsec Bypass Capable" => pfc.mbc = yes_no(v, line)?,
        "PFC capable traffic classes" => pfc.cap = number(v, line)?,
        "PFC enabled" => {
            let mut bits = 0u8;
            for tok in v
                .split([' ', ','])
                .filter(|s| !s.is_empty() && *s != "none")
            {
                let p: u8 = number(tok, line)?;
                bits |= 1u8
                    .checked_shl(u32::from(p))
                    .filter(|_| p < 8)
                    .ok_or_else(|| format!("lldptool: priority {p} in {line:?}"))?;
            }
            pfc.enabled = bits;
        }
        _ => {}
    }
    Ok(())
}

/// One line of the APP TLV: `App#   0 \t Prio 3 \t Sel 1 \t P-ID\t Ethertype: 0x8915`, or the
/// DSCP form `Prio:3 \t dscp:  26, 46,\x08 `.
fn app_line(apps: &mut BTreeSet<App>, line: &str) -> Result<(), String> {
    let clean: String = line.chars().filter(|&c| c != '\u{8}').collect();
    let fields: Vec<&str> = clean.split('\t').map(str::trim).collect();
    if let Some(prio) = fields.iter().find_map(|f| f.strip_prefix("Prio:")) {
        let priority: u8 = number(prio, line)?;
        let dscps = fields
            .iter()
            .find_map(|f| f.strip_prefix("dscp:"))
            .ok_or_else(|| format!("lldptool: APP line {line:?}"))?;
        for d in dscps.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            apps.insert(App::new(priority, 5, number(d, line)?));
        }
        return Ok(());
    }
    let field = |name: &str| fields.iter().find_map(|f| f.strip_prefix(name));
    let (Some(prio), Some(sel), Some(last)) = (field("Prio "), field("Sel "), fields.last()) else {
        return Err(format!("lldptool: APP line {line:?}"));
    };
    let proto = last.rsplit(':').next().unwrap_or(last);
    apps.insert(App::new(
        number(prio, line)?,
        number(sel, line)?,
        number(proto, line)?,
    ));
    Ok(())
}

/// Parses `lldptool -t [-n] -i IF [-V TLV]` output.
///
/// # Errors
/// A field lldptool printed that does not parse (the message quotes the line).
pub fn parse_lldptool(text: &str) -> Result<NeighborView, String> {
    #[derive(PartialEq)]
    enum Section {
        Other,
        Chassis,
        Port,
        Ttl,
        Ets,
        EtsRec,
        Pfc,
        App,
    }
    let mut view = NeighborView::default();
    let mut section = Section::Other;
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        if !line.starts_with([' ', '\t']) {
            section = match line.trim() {
                "Chassis ID TLV" => Section::Chassis,
                "Port ID TLV" => Section::Port,
                "Time to Live TLV" => Section::Ttl,
                "IEEE 8021QAZ ETS Configuration TLV" => {
                    view.ets = Some(EtsView::default());
                    Section::Ets
                }
                "IEEE 8021QAZ ETS Recommendation TLV" => {
                    view.ets_rec = Some(EtsView::default());
                    Section::EtsRec
                }
                "IEEE 8021QAZ PFC TLV" => {
                    view.pfc = Some(PfcView::default());
                    Section::Pfc
                }
                "IEEE 8021QAZ APP TLV" => {
                    view.app = Some(BTreeSet::new());
                    Section::App
                }
                _ => Section::Other,
            };
            continue;
        }
        let body = line.trim();
        let kv = body.split_once(':').map(|(k, v)| (k.trim(), v.trim()));
        match section {
            Section::Chassis => view.chassis_id = Some(body.to_owned()),
            Section::Port => view.port_id = Some(body.to_owned()),
            Section::Ttl => view.ttl = Some(number(body, line)?),
            Section::Ets | Section::EtsRec => {
                let slot = if section == Section::Ets {
                    &mut view.ets
                } else {
                    &mut view.ets_rec
                };
                if let (Some(ets), Some((k, v))) = (slot.as_mut(), kv) {
                    ets_field(ets, k, v, line)?;
                }
            }
            Section::Pfc => {
                if let (Some(pfc), Some((k, v))) = (view.pfc.as_mut(), kv) {
                    pfc_field(pfc, k, v, line)?;
                }
            }
            Section::App => {
                if let Some(apps) = view.app.as_mut() {
                    app_line(apps, line)?;
                }
            }
            Section::Other => {}
        }
    }
    Ok(view)
}

/// What lldpad programmed into the ETS of the fake NIC (an `IEEE_SET ETS` of the shim).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ShimEts {
    /// `willing`.
    pub willing: bool,
    /// `prio_tc`: priority -> TC.
    pub prio_tc: [u8; 8],
    /// `tc_tx_bw`: TC -> percent.
    pub tc_tx_bw: [u8; 8],
    /// `tc_tsa`: TC -> TSA.
    pub tc_tsa: [u8; 8],
    /// `reco_prio_tc`.
    pub reco_prio_tc: [u8; 8],
    /// `tc_reco_bw`.
    pub tc_reco_bw: [u8; 8],
    /// `tc_reco_tsa`.
    pub tc_reco_tsa: [u8; 8],
}

/// One dcbnl set lldpad made on the fake NIC, from the shim's log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShimSet {
    /// `IEEE_SET ETS`.
    Ets(ShimEts),
    /// `IEEE_SET PFC`.
    Pfc {
        /// Bit p: PFC on priority p.
        pfc_en: u8,
        /// MACsec bypass capable.
        mbc: bool,
        /// The delay allowance.
        delay: u16,
    },
    /// `IEEE_SET APP add`.
    AppAdd(App),
    /// `IEEE_DEL APP del`.
    AppDel(App),
}

fn shim_fields(rest: &str) -> impl Iterator<Item = (&str, &str)> {
    rest.split_whitespace().filter_map(|t| t.split_once('='))
}

fn table8(v: &str, line: &str) -> Result<[u8; 8], String> {
    let mut t = [0u8; 8];
    let vals: Vec<&str> = v.split(',').collect();
    if vals.len() != 8 {
        return Err(format!("shim log: expected 8 values in {line:?}"));
    }
    for (slot, s) in t.iter_mut().zip(vals) {
        *slot = number(s, line)?;
    }
    Ok(t)
}

fn shim_app(rest: &str, line: &str) -> Result<App, String> {
    let mut app = App::new(0, 0, 0);
    for (k, v) in shim_fields(rest) {
        match k {
            "priority" => app.priority = number(v, line)?,
            "selector" => app.selector = number(v, line)?,
            "protocol" => app.protocol = number(v, line)?,
            _ => {}
        }
    }
    Ok(app)
}

/// The shim's `IEEE_SET`/`IEEE_DEL` lines for interface `ifname` in `log` (lldpad's log), in
/// order. Other lines are ignored.
///
/// # Errors
/// A shim line that does not parse.
pub fn parse_shim_log(log: &str, ifname: &str) -> Result<Vec<ShimSet>, String> {
    let prefix = format!("fakedcbnl: {ifname}: ");
    let mut sets = Vec::new();
    for line in log.lines() {
        let Some(rest) = line.strip_prefix(&prefix) else {
            continue;
        };
        if let Some(rest) = rest.strip_prefix("IEEE_SET ETS ") {
            let mut e = ShimEts::default();
            for (k, v) in shim_fields(rest) {
                match k {
                    "willing" => e.willing = v != "0",
                    "prio_tc" => e.prio_tc = table8(v, line)?,
                    "tc_tx_bw" => e.tc_tx_bw = table8(v, line)?,
                    "tc_tsa" => e.tc_tsa = table8(v, line)?,
                    "reco_prio_tc" => e.reco_prio_tc = table8(v, line)?,
                    "tc_reco_bw" => e.tc_reco_bw = table8(v, line)?,
                    "tc_reco_tsa" => e.tc_reco_tsa = table8(v, line)?,
                    _ => {}
                }
            }
            sets.push(ShimSet::Ets(e));
        } else if let Some(rest) = rest.strip_prefix("IEEE_SET PFC ") {
            let (mut pfc_en, mut mbc, mut delay) = (0, false, 0);
            for (k, v) in shim_fields(rest) {
                match k {
                    "pfc_en" => pfc_en = number(v, line)?,
                    "mbc" => mbc = v != "0",
                    "delay" => delay = number(v, line)?,
                    _ => {}
                }
            }
            sets.push(ShimSet::Pfc { pfc_en, mbc, delay });
        } else if let Some(rest) = rest.strip_prefix("IEEE_SET APP add ") {
            sets.push(ShimSet::AppAdd(shim_app(rest, line)?));
        } else if let Some(rest) = rest.strip_prefix("IEEE_DEL APP del ") {
            sets.push(ShimSet::AppDel(shim_app(rest, line)?));
        }
    }
    Ok(sets)
}

/// The last ETS lldpad programmed.
#[must_use]
pub fn last_ets(sets: &[ShimSet]) -> Option<ShimEts> {
    sets.iter().rev().find_map(|s| match s {
        ShimSet::Ets(e) => Some(*e),
        _ => None,
    })
}

/// The last PFC enable bitmap lldpad programmed.
#[must_use]
pub fn last_pfc(sets: &[ShimSet]) -> Option<u8> {
    sets.iter().rev().find_map(|s| match s {
        ShimSet::Pfc { pfc_en, .. } => Some(*pfc_en),
        _ => None,
    })
}

/// The fake NIC's APP table after replaying every add and delete.
#[must_use]
pub fn app_table(sets: &[ShimSet]) -> BTreeSet<App> {
    let mut t = BTreeSet::new();
    for s in sets {
        match s {
            ShimSet::AppAdd(a) => {
                t.insert(*a);
            }
            ShimSet::AppDel(a) => {
                t.remove(a);
            }
            _ => {}
        }
    }
    t
}
