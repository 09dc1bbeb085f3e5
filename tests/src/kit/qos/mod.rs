//! Groups "QosCapabilities", "QosOids" and "QosRemoteSettings": the HLK checks of spec §8 and the
//! §10 list (items 1-5), against the driver in the simulated NDIS. The kit builds its own
//! `NDIS_QOS_PARAMETERS` bytes (from spec §1.3/§1.4), independently of the driver's code.

pub mod link;
pub mod validate_dcb;

use ndis_sys::ntddndis::{
    OID_QOS_CURRENT_CAPABILITIES, OID_QOS_HARDWARE_CAPABILITIES, OID_QOS_OPERATIONAL_PARAMETERS,
    OID_QOS_PARAMETERS, OID_QOS_REMOTE_PARAMETERS,
};
use ndis_sys::status::{
    NDIS_STATUS_INVALID_LENGTH, NDIS_STATUS_INVALID_PARAMETER, NDIS_STATUS_NOT_SUPPORTED,
    NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE, NDIS_STATUS_QOS_REMOTE_PARAMETERS_CHANGE,
    NDIS_STATUS_SUCCESS,
};
use ndis_sys::types::NDIS_STATUS;

use crate::kit::dcbx::switch_port::{Ets, Lldpdu, Pfc, SwitchPort};
use crate::kit::{Case, CaseResult, Group, ensure, expect_eq, finish, registry_with, started, sz};
use crate::sim::{Adapter, Registry, adapter::OidResult, clock};

const ETS_CONFIGURED: u32 = 0x2;
const PFC_CONFIGURED: u32 = 0x200;
const CLASSIFICATION_CONFIGURED: u32 = 0x2_0000;
pub(crate) const ALL_CONFIGURED: u32 = ETS_CONFIGURED | PFC_CONFIGURED | CLASSIFICATION_CONFIGURED;
const ALL_CHANGED: u32 = 0x1_0101;
const WILLING: u32 = 0x8000_0000;
const OPERATIONAL: u32 = NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE as u32;
const REMOTE: u32 = NDIS_STATUS_QOS_REMOTE_PARAMETERS_CHANGE as u32;

/// The groups.
#[must_use]
pub fn groups() -> Vec<Group> {
    vec![
        Group {
            name: "QosCapabilities",
            description: "HLK QosCapabilities: capabilities for every *QOS value (spec §2.2, §8, §10.1-2)",
            cases: capability_cases,
        },
        Group {
            name: "QosOids",
            description: "HLK QosOids: OID_QOS_PARAMETERS validation, byte counts, echo and indications (spec §3.5, §5, §10.3-4)",
            cases: oid_cases,
        },
        Group {
            name: "QosRemoteSettings",
            description: "HLK QosRemoteSettings: remote parameters, Willing and resolution (spec §4.2, §5.2, §10.5)",
            cases: remote_cases,
        },
    ]
}

// ---------------------------------------------------------------------------------------------
// Request bytes, built from the spec

/// An `NDIS_QOS_PARAMETERS` request: fixed part + elements `(selector, field, priority)`.
/// (Also what the simulated DCB component sends, `scenario::dcb::request`.)
#[derive(Clone)]
pub(crate) struct Request {
    pub(crate) flags: u32,
    pub(crate) num_tcs: u32,
    pub(crate) prio_tc: [u8; 8],
    pub(crate) bw: [u8; 8],
    pub(crate) tsa: [u8; 8],
    pub(crate) pfc: u32,
    pub(crate) elements: Vec<(u16, u16, u16)>,
}

impl Request {
    /// The SMB Direct setting of spec §7.2: SMB (NetDirect 445) on priority 3 with 50% ETS and PFC
    /// on 3, the default class on the rest.
    fn smb_direct() -> Self {
        Self {
            flags: ALL_CONFIGURED,
            num_tcs: 2,
            prio_tc: [0, 0, 0, 1, 0, 0, 0, 0],
            bw: [50, 50, 0, 0, 0, 0, 0, 0],
            tsa: [2, 2, 0, 0, 0, 0, 0, 0],
            pfc: 1 << 3,
            elements: vec![(1, 0, 0), (6, 445, 3)],
        }
    }

    /// The request's bytes: array right after the fixed part, element size 16, offset 52.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        let mut b = vec![0u8; 52 + 16 * self.elements.len()];
        b[..4].copy_from_slice(&[0xB6, 1, 52, 0]);
        b[4..8].copy_from_slice(&self.flags.to_le_bytes());
        b[8..12].copy_from_slice(&self.num_tcs.to_le_bytes());
        b[12..20].copy_from_slice(&self.prio_tc);
        b[20..28].copy_from_slice(&self.bw);
        b[28..36].copy_from_slice(&self.tsa);
        b[36..40].copy_from_slice(&self.pfc.to_le_bytes());
        b[40..44].copy_from_slice(
            &u32::try_from(self.elements.len())
                .unwrap_or(0)
                .to_le_bytes(),
        );
        b[44..48].copy_from_slice(&16u32.to_le_bytes());
        b[48..52].copy_from_slice(&52u32.to_le_bytes());
        for (i, (selector, field, priority)) in self.elements.iter().enumerate() {
            let at = 52 + 16 * i;
            b[at..at + 4].copy_from_slice(&[0xB7, 1, 16, 0]);
            b[at + 8..at + 10].copy_from_slice(&selector.to_le_bytes());
            b[at + 10..at + 12].copy_from_slice(&field.to_le_bytes());
            b[at + 14..at + 16].copy_from_slice(&priority.to_le_bytes());
        }
        b
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .map_or(0, |x| u32::from_le_bytes([x[0], x[1], x[2], x[3]]))
}

fn indications_of(a: &Adapter, code: u32) -> Vec<Vec<u8>> {
    a.indications()
        .into_iter()
        .filter(|i| i.code == code)
        .map(|i| i.payload)
        .collect()
}

fn method(a: &Adapter, bytes: &[u8]) -> OidResult {
    a.method(OID_QOS_PARAMETERS, bytes, bytes.len())
}

/// Sends `bytes` and checks a rejection: the status, `BytesNeeded`, no byte read or written,
/// the buffer unchanged, and no indication.
fn expect_rejected(a: &Adapter, bytes: &[u8], status: NDIS_STATUS, needed: u32) -> CaseResult {
    let before = a.indications().len();
    let r = method(a, bytes);
    expect_eq("status", r.status, status)?;
    expect_eq("BytesNeeded", r.bytes_needed, needed)?;
    expect_eq(
        "BytesRead, BytesWritten",
        (r.bytes_read, r.bytes_written),
        (0, 0),
    )?;
    expect_eq("buffer unchanged", &r.buffer[..bytes.len()], bytes)?;
    expect_eq("indications", a.indications().len(), before)?;
    Ok(None)
}

/// Sends `bytes` and checks an acceptance: SUCCESS, BytesRead = BytesWritten = 52 + 16n, the echo
/// identical but for the ENFORCED bit of each programmed element (all of them, up to the table's 64,
/// when CLASSIFICATION_CONFIGURED is set; none otherwise); returns the operational indication, if
/// any.
fn expect_accepted(a: &Adapter, bytes: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let before = indications_of(a, OPERATIONAL).len();
    let r = method(a, bytes);
    expect_eq("status", r.status, NDIS_STATUS_SUCCESS)?;
    let n = u32_at(bytes, 40) as usize;
    let expected = u32::try_from(52 + 16 * n).unwrap_or(0);
    expect_eq("BytesRead", r.bytes_read, expected)?;
    expect_eq("BytesWritten", r.bytes_written, expected)?;
    let mut echo = r.buffer.clone();
    // Elements are programmed (and marked) only when the classification group is configured.
    let programmed = if u32_at(bytes, 4) & CLASSIFICATION_CONFIGURED != 0 {
        n.min(64)
    } else {
        0
    };
    for i in 0..programmed {
        let at = 52 + 16 * i + 4;
        ensure(u32_at(&echo, at) & 0x0100_0000 != 0, || {
            format!("element {i} is not marked ENFORCED_BY_MINIPORT")
        })?;
        echo[at + 3] &= !0x01;
    }
    expect_eq("echo (apart from ENFORCED)", &echo[..bytes.len()], bytes)?;
    let after = indications_of(a, OPERATIONAL);
    Ok(if after.len() > before {
        after.last().cloned()
    } else {
        None
    })
}

fn qos_on() -> Result<Adapter, String> {
    started(Registry::inf_defaults())
}

// ---------------------------------------------------------------------------------------------
// QosCapabilities

fn capability_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for (label, value) in [
        ("absent", None),
        ("0", sz("0")),
        ("1", sz("1")),
        ("2 (invalid enum)", sz("2")),
        ("not a number", sz("yes")),
    ] {
        cases.push(Case::new(
            format!("*QOS {label}: capability OIDs, attributes and indications"),
            move || capabilities_for(value.clone()),
        ));
    }
    cases.extend([
        Case::new(
            "hardware capabilities: header, STRICT, only known flags, TC counts within HLK bounds",
            hardware_bounds,
        ),
        Case::new(
            "capability queries with a 19-byte buffer: INVALID_LENGTH, BytesNeeded 20",
            short_capability_buffer,
        ),
        Case::new(
            "SimQos* keywords shape the capabilities; CEE DCBX and MACsec bypass are optional",
            keyword_capabilities,
        ),
        Case::new(
            "OID_QOS_PARAMETERS while *QOS is 0: NOT_SUPPORTED",
            parameters_with_qos_off,
        ),
    ]);
    cases
}

fn capabilities_for(value: Option<crate::sim::RegValue>) -> CaseResult {
    let a = started(registry_with(&[("*QOS", value.clone())]))?;
    let hw = a.query(OID_QOS_HARDWARE_CAPABILITIES, 20);
    let cur = a.query(OID_QOS_CURRENT_CAPABILITIES, 20);
    let enabled = matches!(value, Some(crate::sim::RegValue::Sz(ref s)) if s == "1");
    match value {
        None => {
            expect_eq(
                "HARDWARE_CAPABILITIES (not registered)",
                hw.status,
                NDIS_STATUS_NOT_SUPPORTED,
            )?;
            expect_eq(
                "CURRENT_CAPABILITIES (not registered)",
                cur.status,
                NDIS_STATUS_NOT_SUPPORTED,
            )?;
        }
        _ => {
            expect_eq("HARDWARE_CAPABILITIES", hw.status, NDIS_STATUS_SUCCESS)?;
            expect_eq("CURRENT_CAPABILITIES", cur.status, NDIS_STATUS_SUCCESS)?;
            expect_eq(
                "current header",
                cur.data()[..4].to_vec(),
                vec![0xB5, 1, 20, 0],
            )?;
            if enabled {
                expect_eq(
                    "current = hardware",
                    cur.data().to_vec(),
                    hw.data().to_vec(),
                )?;
            } else {
                expect_eq(
                    "current members zero",
                    cur.data()[4..].to_vec(),
                    vec![0u8; 16],
                )?;
            }
        }
    }
    expect_eq(
        "operational indications",
        indications_of(&a, OPERATIONAL).len(),
        usize::from(enabled),
    )?;
    expect_eq("remote indications", indications_of(&a, REMOTE).len(), 0)?;
    finish(a)?;
    Ok(None)
}

fn hardware_bounds() -> CaseResult {
    let a = qos_on()?;
    let hw = a.query(OID_QOS_HARDWARE_CAPABILITIES, 64);
    expect_eq("BytesWritten", hw.bytes_written, 20)?;
    let d = hw.data();
    expect_eq("header", d[..4].to_vec(), vec![0xB5, 1, 20, 0])?;
    let (flags, max, ets, pfc) = (u32_at(d, 4), u32_at(d, 8), u32_at(d, 12), u32_at(d, 16));
    ensure(flags & 1 != 0, || {
        "STRICT_TSA_SUPPORTED not advertised".into()
    })?;
    ensure(flags & !0xF == 0, || format!("unknown flags {flags:#x}"))?;
    ensure((3..=8).contains(&max), || {
        format!("MaxNumTrafficClasses {max}")
    })?;
    ensure((2..=max).contains(&ets), || {
        format!("MaxNumEtsCapableTrafficClasses {ets}")
    })?;
    ensure((1..=max).contains(&pfc), || {
        format!("MaxNumPfcEnabledTrafficClasses {pfc}")
    })?;
    finish(a)?;
    Ok(None)
}

fn short_capability_buffer() -> CaseResult {
    let a = qos_on()?;
    for oid in [OID_QOS_HARDWARE_CAPABILITIES, OID_QOS_CURRENT_CAPABILITIES] {
        let r = a.query(oid, 19);
        expect_eq("status", r.status, NDIS_STATUS_INVALID_LENGTH)?;
        expect_eq("BytesNeeded", r.bytes_needed, 20)?;
    }
    finish(a)?;
    Ok(None)
}

fn keyword_capabilities() -> CaseResult {
    let a = started(registry_with(&[
        ("SimQosTrafficClasses", sz("4")),
        ("SimQosEtsTrafficClasses", sz("3")),
        ("SimQosPfcTrafficClasses", sz("2")),
        ("SimCeeDcbx", sz("1")),
        ("SimMacSecBypass", sz("1")),
    ]))?;
    let d = a.query(OID_QOS_HARDWARE_CAPABILITIES, 20).buffer;
    expect_eq(
        "flags, max, ETS, PFC",
        (u32_at(&d, 4), u32_at(&d, 8), u32_at(&d, 12), u32_at(&d, 16)),
        (0xF, 4, 3, 2),
    )?;
    // The factory operational set fits: 3 ETS TCs.
    let op = indications_of(&a, OPERATIONAL)
        .pop()
        .ok_or("no operational indication")?;
    expect_eq("factory NumTrafficClasses", u32_at(&op, 8), 3)?;
    finish(a)?;
    Ok(None)
}

fn parameters_with_qos_off() -> CaseResult {
    let a = started(registry_with(&[("*QOS", sz("0"))]))?;
    expect_rejected(
        &a,
        &Request::smb_direct().bytes(),
        NDIS_STATUS_NOT_SUPPORTED,
        52,
    )?;
    finish(a)?;
    Ok(None)
}

// ---------------------------------------------------------------------------------------------
// QosOids

fn oid_cases() -> Vec<Case> {
    type Edit = fn(&mut Request);
    let mut cases = vec![
        Case::new("buffer of 0 bytes: INVALID_LENGTH, BytesNeeded 52", || {
            rejected_len(0)
        }),
        Case::new("buffer of 51 bytes: INVALID_LENGTH, BytesNeeded 52", || {
            rejected_len(51)
        }),
        Case::new("buffer of 52 bytes (no elements): accepted", accepted_52),
        Case::new(
            "element array truncated by the buffer: INVALID_LENGTH, BytesNeeded = the array's end",
            truncated_array,
        ),
        Case::new(
            "NumClassificationElements large enough to overflow 32-bit arithmetic: INVALID_LENGTH",
            count_overflow,
        ),
        Case::new(
            "FirstClassificationElementOffset inside the fixed part: INVALID_PARAMETER",
            offset_inside,
        ),
        Case::new(
            "offset + array past the buffer: INVALID_LENGTH, BytesNeeded = the array's end",
            offset_past,
        ),
        Case::new(
            "header type, revision and size are checked: INVALID_PARAMETER",
            bad_headers,
        ),
    ];
    for size in [15u32, 17] {
        cases.push(Case::new(
            format!("ClassificationElementSize {size}: INVALID_PARAMETER"),
            move || element_size(size),
        ));
    }
    cases.push(Case::new(
        "ClassificationElementSize 16: accepted",
        accepted_smb_direct,
    ));
    let invalid: [(&str, Edit); 9] = [
        ("DEFAULT at index 1", |r| {
            r.elements = vec![(6, 445, 3), (1, 0, 0)]
        }),
        ("ActionField 8", |r| r.elements[1].2 = 8),
        ("a priority mapped to a TC >= NumTrafficClasses", |r| {
            r.prio_tc[7] = 2
        }),
        ("bandwidth sum 99", |r| r.bw[0] = 49),
        ("bandwidth sum 101", |r| r.bw[0] = 51),
        ("a strict TC with bandwidth", |r| r.tsa[1] = 0),
        ("reserved PFC bits", |r| r.pfc |= 0x100),
        ("TSA CBS (not implemented by this adapter)", |r| {
            r.tsa[1] = 1
        }),
        ("two elements with the same condition", |r| {
            r.elements.push((6, 445, 4))
        }),
    ];
    for (name, edit) in invalid {
        cases.push(Case::new(
            format!("{name}: INVALID_PARAMETER, nothing changes"),
            move || {
                let a = qos_on()?;
                let mut r = Request::smb_direct();
                edit(&mut r);
                expect_rejected(&a, &r.bytes(), NDIS_STATUS_INVALID_PARAMETER, 52)?;
                finish(a)?;
                Ok(None)
            },
        ));
    }
    cases.extend([
        Case::new("bandwidth sum 100 over 8 ETS TCs: accepted", bandwidth_100),
        Case::new("too many PFC priorities for the adapter: INVALID_PARAMETER", too_many_pfc),
        Case::new("ETS_CONFIGURED without PFC_CONFIGURED: NOT_SUPPORTED (the sample's status)", configured_mismatch),
        Case::new("accepted request: operational indication with {0xB6,1,52}, CONFIGURED and CHANGED bits, no ENFORCED", operational_indication),
        Case::new("the same request again: no indication; a PFC change: PFC_CHANGED only", no_duplicate_indication),
        Case::new("OID_QOS_OPERATIONAL_PARAMETERS returns the last operational indication", operational_query),
        Case::new("Willing off: unconfigured groups take factory ETS, PFC off, no classification", willing_off_overrides),
        Case::new("Willing on without a remote set: local parameters are operational", willing_on_without_remote),
    ]);
    cases
}

fn rejected_len(len: usize) -> CaseResult {
    let a = qos_on()?;
    expect_rejected(
        &a,
        &Request::smb_direct().bytes()[..len],
        NDIS_STATUS_INVALID_LENGTH,
        52,
    )?;
    finish(a)?;
    Ok(None)
}

fn accepted_52() -> CaseResult {
    let a = qos_on()?;
    let mut r = Request::smb_direct();
    r.elements.clear();
    r.flags &= !CLASSIFICATION_CONFIGURED;
    expect_accepted(&a, &r.bytes())?;
    finish(a)?;
    Ok(None)
}

fn truncated_array() -> CaseResult {
    let a = qos_on()?;
    let b = Request::smb_direct().bytes();
    expect_rejected(&a, &b[..b.len() - 1], NDIS_STATUS_INVALID_LENGTH, 84)?;
    finish(a)?;
    Ok(None)
}

fn count_overflow() -> CaseResult {
    let a = qos_on()?;
    let mut b = Request::smb_direct().bytes();
    b[40..44].copy_from_slice(&0x1000_0000u32.to_le_bytes()); // x 16 = 2^32
    expect_rejected(&a, &b, NDIS_STATUS_INVALID_LENGTH, 52)?;
    finish(a)?;
    Ok(None)
}

fn offset_inside() -> CaseResult {
    let a = qos_on()?;
    let mut b = Request::smb_direct().bytes();
    b[48..52].copy_from_slice(&36u32.to_le_bytes());
    expect_rejected(&a, &b, NDIS_STATUS_INVALID_PARAMETER, 52)?;
    finish(a)?;
    Ok(None)
}

fn offset_past() -> CaseResult {
    let a = qos_on()?;
    let mut b = Request::smb_direct().bytes();
    b[48..52].copy_from_slice(&64u32.to_le_bytes());
    expect_rejected(&a, &b, NDIS_STATUS_INVALID_LENGTH, 96)?;
    finish(a)?;
    Ok(None)
}

fn bad_headers() -> CaseResult {
    let a = qos_on()?;
    for (at, value) in [(0usize, 0xB5u8), (1, 0), (2, 51)] {
        let mut b = Request::smb_direct().bytes();
        b[at] = value;
        expect_rejected(&a, &b, NDIS_STATUS_INVALID_PARAMETER, 52)?;
    }
    let mut b = Request::smb_direct().bytes();
    b[52] = 0xB6; // an element with the wrong type
    expect_rejected(&a, &b, NDIS_STATUS_INVALID_PARAMETER, 52)?;
    finish(a)?;
    Ok(None)
}

fn element_size(size: u32) -> CaseResult {
    let a = qos_on()?;
    let mut b = Request::smb_direct().bytes();
    b[44..48].copy_from_slice(&size.to_le_bytes());
    b.resize(52 + 2 * size as usize, 0);
    expect_rejected(&a, &b, NDIS_STATUS_INVALID_PARAMETER, 52)?;
    finish(a)?;
    Ok(None)
}

fn accepted_smb_direct() -> CaseResult {
    let a = qos_on()?;
    expect_accepted(&a, &Request::smb_direct().bytes())?;
    finish(a)?;
    Ok(None)
}

fn bandwidth_100() -> CaseResult {
    let a = qos_on()?;
    let r = Request {
        num_tcs: 8,
        prio_tc: [0, 1, 2, 3, 4, 5, 6, 7],
        bw: [10, 10, 10, 10, 10, 10, 20, 20],
        tsa: [2; 8],
        ..Request::smb_direct()
    };
    expect_accepted(&a, &r.bytes())?;
    finish(a)?;
    Ok(None)
}

fn too_many_pfc() -> CaseResult {
    let a = started(registry_with(&[("SimQosPfcTrafficClasses", sz("2"))]))?;
    let r = Request {
        pfc: 0b0000_1110,
        ..Request::smb_direct()
    };
    expect_rejected(&a, &r.bytes(), NDIS_STATUS_INVALID_PARAMETER, 52)?;
    let r = Request {
        pfc: 0b0000_0110,
        ..Request::smb_direct()
    };
    expect_accepted(&a, &r.bytes())?;
    finish(a)?;
    Ok(None)
}

fn configured_mismatch() -> CaseResult {
    let a = qos_on()?;
    for flags in [ETS_CONFIGURED | CLASSIFICATION_CONFIGURED, PFC_CONFIGURED] {
        let r = Request {
            flags,
            ..Request::smb_direct()
        };
        expect_rejected(&a, &r.bytes(), NDIS_STATUS_NOT_SUPPORTED, 52)?;
    }
    finish(a)?;
    Ok(None)
}

fn operational_indication() -> CaseResult {
    let a = qos_on()?;
    let op =
        expect_accepted(&a, &Request::smb_direct().bytes())?.ok_or("no operational indication")?;
    expect_eq("header", op[..4].to_vec(), vec![0xB6, 1, 52, 0])?;
    expect_eq("flags", u32_at(&op, 4), ALL_CONFIGURED | ALL_CHANGED)?;
    expect_eq(
        "NumTrafficClasses, PfcEnable",
        (u32_at(&op, 8), u32_at(&op, 36)),
        (2, 8),
    )?;
    expect_eq(
        "priority table",
        op[12..20].to_vec(),
        vec![0, 0, 0, 1, 0, 0, 0, 0],
    )?;
    expect_eq(
        "elements, size, offset",
        (u32_at(&op, 40), u32_at(&op, 44), u32_at(&op, 48)),
        (2, 16, 52),
    )?;
    expect_eq("StatusBufferSize", op.len(), 84)?;
    expect_eq(
        "element 1 (NetDirect 445 -> 3)",
        op[68..84].to_vec(),
        vec![0xB7, 1, 16, 0, 0, 0, 0, 0, 6, 0, 0xBD, 0x01, 0, 0, 3, 0],
    )?;
    finish(a)?;
    Ok(None)
}

fn no_duplicate_indication() -> CaseResult {
    let a = qos_on()?;
    expect_accepted(&a, &Request::smb_direct().bytes())?.ok_or("no first indication")?;
    ensure(
        expect_accepted(&a, &Request::smb_direct().bytes())?.is_none(),
        || "a duplicate indication".into(),
    )?;
    let op = expect_accepted(
        &a,
        &Request {
            pfc: 0x18,
            ..Request::smb_direct()
        }
        .bytes(),
    )?
    .ok_or("no indication for a PFC change")?;
    expect_eq("flags", u32_at(&op, 4), ALL_CONFIGURED | 0x100)?;
    finish(a)?;
    Ok(None)
}

fn operational_query() -> CaseResult {
    let a = qos_on()?;
    let op = expect_accepted(&a, &Request::smb_direct().bytes())?.ok_or("no indication")?;
    let short = a.query(OID_QOS_OPERATIONAL_PARAMETERS, 51);
    expect_eq(
        "51-byte query",
        (short.status, short.bytes_needed),
        (NDIS_STATUS_INVALID_LENGTH, 84),
    )?;
    let q = a.query(OID_QOS_OPERATIONAL_PARAMETERS, 256);
    expect_eq("query", q.data().to_vec(), op)?;
    let remote = a.query(OID_QOS_REMOTE_PARAMETERS, 256);
    expect_eq(
        "remote before any peer: header and zeros",
        remote.data().to_vec(),
        [vec![0xB6, 1, 52, 0], vec![0u8; 48]].concat(),
    )?;
    finish(a)?;
    Ok(None)
}

fn willing_off_overrides() -> CaseResult {
    let a = qos_on()?;
    let mut r = Request {
        flags: ETS_CONFIGURED | PFC_CONFIGURED,
        ..Request::smb_direct()
    };
    let op = expect_accepted(&a, &r.bytes())?.ok_or("no indication")?;
    expect_eq("no classification (not configured)", u32_at(&op, 40), 0)?;
    r.flags = 0;
    r.elements.clear();
    let op = expect_accepted(&a, &r.bytes())?.ok_or("no indication")?;
    expect_eq(
        "factory ETS, PFC off",
        (u32_at(&op, 8), u32_at(&op, 36)),
        (8, 0),
    )?;
    finish(a)?;
    Ok(None)
}

fn willing_on_without_remote() -> CaseResult {
    let a = qos_on()?;
    let r = Request {
        flags: ALL_CONFIGURED | WILLING,
        ..Request::smb_direct()
    };
    let op = expect_accepted(&a, &r.bytes())?.ok_or("no indication")?;
    expect_eq(
        "local ETS and PFC",
        (u32_at(&op, 8), u32_at(&op, 36)),
        (2, 8),
    )?;
    expect_eq(
        "WILLING is not echoed into the operational set",
        u32_at(&op, 4) & WILLING,
        0,
    )?;
    finish(a)?;
    Ok(None)
}

// ---------------------------------------------------------------------------------------------
// QosRemoteSettings

fn remote_cases() -> Vec<Case> {
    vec![
        Case::new(
            "first DCBX from a peer: remote indication, even before any OID_QOS_PARAMETERS",
            first_remote,
        ),
        Case::new(
            "identical refresh: no indication; a change: only the changed groups' CHANGED bits",
            refresh_and_change,
        ),
        Case::new(
            "conflict with local, Willing off: remote indicated, local stays operational",
            conflict_not_willing,
        ),
        Case::new(
            "Willing on: the peer's recommendation, PFC and applications become operational",
            willing_adopts,
        ),
        Case::new(
            "TTL expiry: zero-filled 52-byte remote indication, operational falls back to local",
            ttl_expiry,
        ),
        Case::new(
            "a second peer: zero-filled remote until every TTL expired",
            second_peer,
        ),
        Case::new(
            "Willing toggled off and on with a peer present",
            willing_toggled,
        ),
        Case::new(
            "*QOS 0: DCBX off, remote parameters ignored",
            remote_with_qos_off,
        ),
    ]
}

/// The peer's Ethernet address (its LLDPDUs' source, which the adapter tells peers by) and
/// chassis ID.
const PEER: [u8; 6] = [0x02, 0x00, 0x5E, 0x10, 0x00, 0x01];
/// Another switch's port on the same wire.
const SECOND_PEER: [u8; 6] = [0x02, 0x00, 0x5E, 0x10, 0x00, 0x02];
/// The TTL the peers send, seconds (802.1AB's default: msgTxHold 4 x msgTxInterval 30, + 1).
const TTL_S: u16 = 121;

/// A running adapter (of `registry`, moved onto a fresh wire with a manual clock) and the switch
/// port of [`PEER`] on the same wire: the wire, the adapter, the port.
fn on_switch(mut registry: Registry) -> Result<(u32, Adapter, SwitchPort), String> {
    let wire = clock::fresh_manual_wire();
    registry.on_wire(wire);
    let a = started(registry)?;
    let port = SwitchPort::on(wire, PEER)?;
    Ok((wire, a, port))
}

/// A non-willing switch's LLDPDU: 3 TCs (priority 3 on TC 1, 4 on TC 2, the rest on TC 0) at
/// 40/30/30 % ETS, PFC on `pfc`, FCoE (EtherType 0x8906) on priority 3 and iSCSI (TCP 3260) on 4.
fn peer_lldpdu(pfc: u8) -> Lldpdu {
    Lldpdu {
        chassis: PEER,
        port: "Ethernet1/1",
        ttl: TTL_S,
        ets: Some(Ets {
            willing: false,
            max_tcs: 3,
            prio_tc: [0, 0, 0, 1, 2, 0, 0, 0],
            bw: [40, 30, 30, 0, 0, 0, 0, 0],
            tsa: [2, 2, 2, 0, 0, 0, 0, 0],
        }),
        recommendation: None,
        pfc: Some(Pfc {
            willing: false,
            cap: 8,
            enable: pfc,
        }),
        apps: Some(vec![(3, 1, 0x8906), (4, 2, 3260)]),
    }
}

/// Finishes the port, then the adapter.
fn finish_both(a: Adapter, port: SwitchPort) -> Result<(), String> {
    port.finish()?;
    finish(a)
}

fn first_remote() -> CaseResult {
    let (_, a, port) = on_switch(Registry::inf_defaults())?;
    port.send(&peer_lldpdu(0x18))?;
    let remote = indications_of(&a, REMOTE);
    expect_eq("remote indications", remote.len(), 1)?;
    let r = &remote[0];
    expect_eq("header", r[..4].to_vec(), vec![0xB6, 1, 52, 0])?;
    expect_eq("flags", u32_at(r, 4), ALL_CONFIGURED | ALL_CHANGED)?;
    expect_eq(
        "NumTrafficClasses, PfcEnable, elements",
        (u32_at(r, 8), u32_at(r, 36), u32_at(r, 40)),
        (3, 0x18, 2),
    )?;
    expect_eq(
        "OID_QOS_REMOTE_PARAMETERS",
        a.query(OID_QOS_REMOTE_PARAMETERS, 256).data().to_vec(),
        r.clone(),
    )?;
    finish_both(a, port)?;
    Ok(None)
}

fn refresh_and_change() -> CaseResult {
    let (_, a, port) = on_switch(Registry::inf_defaults())?;
    port.send(&peer_lldpdu(0x18))?;
    port.send(&peer_lldpdu(0x18))?;
    expect_eq(
        "remote indications after a refresh",
        indications_of(&a, REMOTE).len(),
        1,
    )?;
    port.send(&peer_lldpdu(0x08))?;
    let remote = indications_of(&a, REMOTE);
    expect_eq("remote indications after a change", remote.len(), 2)?;
    expect_eq("flags", u32_at(&remote[1], 4), ALL_CONFIGURED | 0x100)?;
    finish_both(a, port)?;
    Ok(None)
}

fn conflict_not_willing() -> CaseResult {
    let (_, a, port) = on_switch(Registry::inf_defaults())?;
    expect_accepted(&a, &Request::smb_direct().bytes())?;
    let operational_before = indications_of(&a, OPERATIONAL).len();
    port.send(&peer_lldpdu(0x18))?;
    expect_eq("remote indicated", indications_of(&a, REMOTE).len(), 1)?;
    expect_eq(
        "operational unchanged (no new indication)",
        indications_of(&a, OPERATIONAL).len(),
        operational_before,
    )?;
    let op = a.query(OID_QOS_OPERATIONAL_PARAMETERS, 256);
    expect_eq("operational PFC is local", u32_at(op.data(), 36), 8)?;
    finish_both(a, port)?;
    Ok(None)
}

fn willing_adopts() -> CaseResult {
    let (_, a, port) = on_switch(Registry::inf_defaults())?;
    expect_accepted(
        &a,
        &Request {
            flags: ALL_CONFIGURED | WILLING,
            ..Request::smb_direct()
        }
        .bytes(),
    )?;
    let mut pdu = peer_lldpdu(0x18);
    pdu.recommendation = Some(Ets {
        bw: [20, 40, 40, 0, 0, 0, 0, 0],
        ..pdu.ets.ok_or("the peer's ETS Configuration")?
    });
    port.send(&pdu)?;
    let op = indications_of(&a, OPERATIONAL)
        .pop()
        .ok_or("no operational indication")?;
    expect_eq(
        "NumTrafficClasses, bandwidth of TC0, PfcEnable",
        (u32_at(&op, 8), op[20], u32_at(&op, 36)),
        (3, 20, 0x18),
    )?;
    expect_eq("classifications from the peer", u32_at(&op, 40), 2)?;
    expect_eq("CHANGED", u32_at(&op, 4) & ALL_CHANGED, ALL_CHANGED)?;
    finish_both(a, port)?;
    Ok(None)
}

fn ttl_expiry() -> CaseResult {
    let (wire, a, port) = on_switch(Registry::inf_defaults())?;
    expect_accepted(
        &a,
        &Request {
            flags: ALL_CONFIGURED | WILLING,
            ..Request::smb_direct()
        }
        .bytes(),
    )?;
    port.send(&peer_lldpdu(0x18))?;
    let heard = indications_of(&a, REMOTE).len();
    clock::advance(wire, u64::from(TTL_S) * 1000 - 1000);
    expect_eq(
        "no remote indication while the TTL runs",
        indications_of(&a, REMOTE).len(),
        heard,
    )?;
    clock::advance(wire, 2000);
    let remote = indications_of(&a, REMOTE);
    expect_eq(
        "one remote indication at the TTL's end",
        remote.len(),
        heard + 1,
    )?;
    let zero = remote.last().ok_or("no remote indication")?;
    expect_eq("StatusBufferSize", zero.len(), 52)?;
    expect_eq("header", zero[..4].to_vec(), vec![0xB6, 1, 52, 0])?;
    expect_eq(
        "flags: the groups that changed",
        u32_at(zero, 4),
        ALL_CHANGED,
    )?;
    expect_eq("members zero", zero[8..].to_vec(), vec![0u8; 44])?;
    let op = indications_of(&a, OPERATIONAL)
        .pop()
        .ok_or("no operational indication")?;
    expect_eq(
        "operational back to local",
        (u32_at(&op, 8), u32_at(&op, 36)),
        (2, 8),
    )?;
    // The peer is gone: another TTL's time, and its shutdown LLDPDU, are nothing to it.
    clock::advance(wire, u64::from(TTL_S) * 1000);
    port.send(&peer_lldpdu(0x18).shutdown())?;
    expect_eq(
        "no second zero-filled indication",
        indications_of(&a, REMOTE).len(),
        remote.len(),
    )?;
    finish_both(a, port)?;
    Ok(None)
}

fn second_peer() -> CaseResult {
    let (wire, a, port) = on_switch(Registry::inf_defaults())?;
    let second = SwitchPort::on(wire, SECOND_PEER)?;
    port.send(&peer_lldpdu(0x18))?;
    // The second switch's TTL is shorter: it expires while the first peer's still runs.
    second.send(&Lldpdu {
        chassis: SECOND_PEER,
        port: "Ethernet1/2",
        ttl: 10,
        ..peer_lldpdu(0x08)
    })?;
    let remote = indications_of(&a, REMOTE);
    expect_eq(
        "zero-filled after the second peer",
        remote.last().map(Vec::len),
        Some(52),
    )?;
    clock::advance(wire, 11_000);
    port.send(&peer_lldpdu(0x18))?;
    expect_eq(
        "still invalid while the first peer's TTL runs",
        indications_of(&a, REMOTE).len(),
        remote.len(),
    )?;
    clock::advance(wire, u64::from(TTL_S) * 1000 + 1000);
    port.send(&peer_lldpdu(0x18))?;
    let after = indications_of(&a, REMOTE);
    expect_eq(
        "valid again once every TTL expired",
        after.last().map(|r| u32_at(r, 36)),
        Some(0x18),
    )?;
    second.finish()?;
    finish_both(a, port)?;
    Ok(None)
}

fn willing_toggled() -> CaseResult {
    let (_, a, port) = on_switch(Registry::inf_defaults())?;
    expect_accepted(&a, &Request::smb_direct().bytes())?;
    port.send(&peer_lldpdu(0x18))?;
    let op = expect_accepted(
        &a,
        &Request {
            flags: ALL_CONFIGURED | WILLING,
            ..Request::smb_direct()
        }
        .bytes(),
    )?
    .ok_or("Willing 0 -> 1 with a differing remote set must change the operational set")?;
    expect_eq("operational from the peer", u32_at(&op, 36), 0x18)?;
    let op = expect_accepted(&a, &Request::smb_direct().bytes())?
        .ok_or("Willing 1 -> 0 must change it back")?;
    expect_eq("operational from local", u32_at(&op, 36), 0x08)?;
    finish_both(a, port)?;
    Ok(None)
}

fn remote_with_qos_off() -> CaseResult {
    let (_, a, port) = on_switch(registry_with(&[("*QOS", sz("0"))]))?;
    port.send(&peer_lldpdu(0x18))?;
    expect_eq(
        "indications",
        a.indications()
            .iter()
            .filter(|i| i.code == REMOTE || i.code == OPERATIONAL)
            .count(),
        0,
    )?;
    finish_both(a, port)?;
    Ok(None)
}

#[cfg(test)]
mod tests {
    use crate::kit::{Status, run_group};

    #[test]
    fn qos_groups_pass() {
        for group in super::groups() {
            let reports = run_group(&group, |_| {});
            let failed: Vec<_> = reports
                .iter()
                .filter(|r| r.status != Status::Pass)
                .map(|r| format!("{} / {}: {}", r.group, r.name, r.reason))
                .collect();
            assert!(failed.is_empty(), "{}", failed.join("\n"));
        }
    }
}
