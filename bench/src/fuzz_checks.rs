//! The properties the fuzz targets check, one `pub fn` per target over the raw input bytes.
//!
//! fuzz/fuzz_targets/<target>.rs calls the function of the same name on every input libFuzzer
//! makes; tests/fuzz_corpus.rs calls it on every file of fuzz/corpus/<target>/ under plain
//! `cargo test`. Both see the same bytes and decode them the same way (with `arbitrary`'s
//! [`Unstructured`]), so a corpus file replays exactly the case libFuzzer ran. A property that
//! does not hold panics, which libFuzzer reports as a crash and the test harness as a failure.

use arbitrary::{Result, Unstructured};
use dcbndk_core::adapter::config::{AdapterConfig, KeywordRead, Warnings};
use dcbndk_core::adapter::state::AdapterState;
use dcbndk_core::adapter::stats::{Destination, DirectionSnapshot};
use dcbndk_core::adapter::{Adapter, Settings};
use dcbndk_core::keywords::{KEYWORDS, Keyword, KeywordType};
use dcbndk_core::oid::{self, OIDS, Outcome, Request, RequestKind};
use dcbndk_core::status::Status;
use dcbndk_core::wire::{Error, ObjectHeader, ObjectHeaderRepr};

/// The fuzz target names, which are also the corpus folder names.
pub const TARGETS: &[&str] = &[
    "lldp",
    "object_header",
    "oid_request",
    "qos_parameters",
    "classify",
];

/// Runs the check of `target` on one input.
///
/// # Panics
/// When a property does not hold, or `target` is not one of [`TARGETS`].
pub fn run(target: &str, data: &[u8]) {
    match target {
        "object_header" => object_header(data),
        "oid_request" => oid_request(data),
        "qos_parameters" => qos_parameters(data),
        "lldp" => lldp(data),
        "classify" => classify(data),
        other => panic!("no fuzz target named {other:?}"),
    }
}

/// An LLDPDU (the bytes after the EtherType, as received from the wire) over arbitrary bytes:
/// parsing never panics, nor does the DCBX agent receiving it in a frame; the TLV walk ends within `len / 2 + 1` steps; a parsed PDU's 802.1Qaz
/// TLVs emit back to TLVs that parse to the same values; the conversion to a remote parameter set
/// never panics, keeps at most 64 classifications and accounts for every application entry.
///
/// # Panics
/// When a property does not hold.
pub fn lldp(data: &[u8]) {
    use dcbndk_core::lldp::agent::{Agent, Receive};
    use dcbndk_core::lldp::dcbx::{AppEntry, AppTlv, DcbxTlvs};
    use dcbndk_core::lldp::{ETHERTYPE, Lldpdu, NEAREST_BRIDGE, Tlvs};

    assert!(Tlvs::new(data).count() <= data.len() / 2 + 1);
    // The DCBX agent takes the same bytes as a received frame without panicking, and a frame it
    // accepts leaves it with at most one peer to expire.
    let mut agent = Agent::new([2, 0, 0, 0, 0, 2]);
    agent.start(0);
    let mut frame = Vec::with_capacity(14 + data.len());
    frame.extend_from_slice(&NEAREST_BRIDGE);
    frame.extend_from_slice(&[2, 0, 0, 0, 0, 1]);
    frame.extend_from_slice(&ETHERTYPE.to_be_bytes());
    frame.extend_from_slice(data);
    let outcome = agent.receive(&frame, 1_000);
    assert!(!matches!(outcome, Receive::NotLldp));
    let mut due = 0;
    while agent.poll(u64::MAX).is_some() && due < 3 {
        due += 1;
    }
    let Ok(pdu) = Lldpdu::parse(data) else {
        return;
    };
    let d = pdu.dcbx;
    let apps: Vec<AppEntry> = d.app.map(|a| a.entries().collect()).unwrap_or_default();
    let mut again = DcbxTlvs::default();
    let (ets, rec, pfc) = (
        d.ets.map(|e| e.emit(false)),
        d.recommendation.map(|e| e.emit(true)),
        d.pfc.map(|p| p.emit()),
    );
    let mut app = [0u8; 512];
    let app_len = d
        .app
        .map(|_| AppTlv::emit(&apps, &mut app).expect("a parsed APP TLV fits"));
    for v in [
        ets.as_ref().map(|v| &v[..]),
        rec.as_ref().map(|v| &v[..]),
        pfc.as_ref().map(|v| &v[..]),
    ]
    .into_iter()
    .flatten()
    .chain(app_len.map(|n| &app[..n]))
    {
        again.take(v).expect("emitted TLVs parse");
    }
    assert_eq!(again.ets, d.ets);
    assert_eq!(again.recommendation, d.recommendation);
    assert_eq!(again.pfc, d.pfc);
    let again_apps: Vec<AppEntry> = again.app.map(|a| a.entries().collect()).unwrap_or_default();
    assert_eq!(again_apps, apps);
    let r = d.to_remote();
    assert!(r.params.classifications.len() <= 64);
    assert!(r.params.classifications.len() + r.apps_skipped == apps.len());
    // The agent counts what the conversion leaves out without converting, and the QoS state
    // converts in place: both agree with the set built on the stack.
    assert_eq!(d.unconvertible(), (r.ets_dropped, r.apps_skipped));
    let mut in_place = dcbndk_core::qos::params::QosParameters {
        pfc_enable: u32::MAX,
        ..Default::default()
    };
    assert_eq!(d.write_remote(&mut in_place), r.recommendation);
    assert_eq!(in_place, r.params);
}

/// `NDIS_OBJECT_HEADER` over arbitrary bytes: viewing, parsing and emitting never panic; a view
/// and a parse succeed exactly when the buffer holds 4 bytes; what is parsed emits back to the
/// same 4 bytes; [`ObjectHeaderRepr::expect`] agrees with a plain comparison of the members.
///
/// # Panics
/// When a property does not hold.
pub fn object_header(data: &[u8]) {
    let long_enough = data.len() >= ObjectHeader::<&[u8]>::LEN;

    let checked = ObjectHeader::new_checked(data);
    assert_eq!(
        checked.is_ok(),
        long_enough,
        "new_checked on {} bytes",
        data.len()
    );
    if let Err(e) = checked {
        assert_eq!(e, Error::Truncated { needed: 4 });
    }

    // The unchecked view of any buffer reads (zeros past the end) without panicking.
    let view = ObjectHeader::new_unchecked(data);
    let (object_type, revision, size) = (view.object_type(), view.revision(), view.size());
    let parsed = ObjectHeaderRepr::parse(&view);
    assert_eq!(parsed.is_ok(), long_enough, "parse on {} bytes", data.len());

    // Setters on a short (or empty) mutable buffer must not panic either, nor grow it.
    let mut scratch = data.get(..data.len().min(8)).unwrap_or_default().to_vec();
    let scratch_len = scratch.len();
    let mut short = ObjectHeader::new_unchecked(&mut scratch[..]);
    short.set_object_type(object_type);
    short.set_revision(revision);
    short.set_size(size);
    assert_eq!(scratch.len(), scratch_len);

    let Ok(repr) = parsed else {
        return;
    };
    let head = data.get(..4).unwrap_or_default();
    assert_eq!(
        (repr.object_type, repr.revision, repr.size),
        (object_type, revision, size)
    );
    assert_eq!(repr.buffer_len(), 4);
    assert_eq!(&repr.to_bytes()[..], head, "to_bytes(parse(x)) != x[..4]");
    let mut out = [0u8; 4];
    repr.emit(&mut ObjectHeader::new_unchecked(&mut out[..]));
    assert_eq!(&out[..], head, "emit(parse(x)) != x[..4]");
    // Emitting into the whole buffer rewrites the same header and leaves the rest alone.
    let mut whole = data.to_vec();
    repr.emit(&mut ObjectHeader::new_unchecked(&mut whole[..]));
    assert_eq!(whole, data, "emit(parse(x)) into x changed x");
    // A round trip through the value is the identity.
    let again = ObjectHeaderRepr::parse(&ObjectHeader::new_unchecked(&out[..]));
    assert_eq!(again, Ok(repr));

    // `expect` against the next bytes of the input as (type, minimum revision, minimum size).
    let [t, r, s0, s1] = match data.get(4..8) {
        Some(&[a, b, c, d]) => [a, b, c, d],
        _ => [repr.object_type, repr.revision, 0, 0],
    };
    let minimum_size = u16::from_le_bytes([s0, s1]);
    let accepted = repr.expect(t, r, minimum_size).is_ok();
    assert_eq!(
        accepted,
        repr.object_type == t && repr.revision >= r && repr.size >= minimum_size,
        "expect({t:#x}, {r}, {minimum_size}) on {repr:?}"
    );
}

/// How many requests one `oid_request` input may issue.
pub const MAX_REQUESTS: usize = 16;
/// The largest information buffer an `oid_request` input asks for.
pub const MAX_BUFFER: usize = 1024;

/// Lengths around every boundary of the general OIDs (4- and 8-byte values, a MAC, the
/// statistics structure, the multicast list).
const INTERESTING_LENGTHS: &[usize] = &[
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 16, 24, 27, 28, 29, 42, 43, 60, 151, 152, 153, 186,
    191, 192, 193, 197, 198,
];

/// OID requests with arbitrary kinds, OIDs (mostly from the table), buffers and lengths, in a
/// sequence, on an adapter configured from arbitrary keyword values and in an arbitrary state.
/// For each request: [`oid::dispatch`] does not panic; `BytesWritten` fits the output buffer
/// and `BytesRead` the input (spec §3); `BUFFER_TOO_SHORT` asks for more than the output buffer;
/// a request type the table has no handler for is `NOT_SUPPORTED`, and every request after
/// surprise removal `NOT_ACCEPTED`; a query, or a set or method that fails, changes neither the
/// settings (pending indications included) nor the adapter; a set, or a method that fails,
/// leaves its buffer as it was.
///
/// # Panics
/// When a property does not hold.
pub fn oid_request(data: &[u8]) {
    let mut u = Unstructured::new(data);
    // Running out of input ends the case early; that is not a failure.
    let _end = oid_case(&mut u);
}

fn oid_case(u: &mut Unstructured<'_>) -> Result<()> {
    let adapter = arbitrary_adapter(u)?;
    let mut settings = Settings::new(&adapter.config);
    let mut buffer = [0u8; MAX_BUFFER];
    for _ in 0..MAX_REQUESTS {
        if u.is_empty() {
            break;
        }
        let kind = *u.choose(&[RequestKind::Query, RequestKind::Set, RequestKind::Method])?;
        let oid = if u.ratio(7u8, 8u8)? {
            u.choose(OIDS)?.oid
        } else {
            u.arbitrary::<u32>()?
        };
        let len = if u.ratio(1u8, 2u8)? {
            *u.choose(INTERESTING_LENGTHS)?
        } else {
            u.int_in_range(0..=MAX_BUFFER)?
        };
        let buf = buffer.get_mut(..len).unwrap_or_default();
        // The buffer takes what input is left, then zeros.
        let fill = u.bytes(len.min(u.len()))?;
        buf.fill(0);
        buf.get_mut(..fill.len())
            .unwrap_or_default()
            .copy_from_slice(fill);
        // A method's buffer is as long as the larger of its input and output (as the shell
        // makes it); a query's or a set's lengths are the buffer's.
        let lengths = match kind {
            RequestKind::Method if u.arbitrary::<bool>()? => (len, u.int_in_range(0..=len)?),
            RequestKind::Method => (u.int_in_range(0..=len)?, len),
            RequestKind::Query | RequestKind::Set => (len, len),
        };
        check_one(
            oid::dispatch,
            &adapter,
            &mut settings,
            kind,
            oid,
            buf,
            lengths,
        );
        // The shell makes the indications a request decided once it has released the lock.
        let _indications = settings.take_pending();
    }
    Ok(())
}

/// What an OID request could change on the adapter-wide state.
#[derive(Debug, PartialEq, Eq)]
struct AdapterView {
    config: AdapterConfig,
    state: AdapterState,
    surprise_removed: bool,
    xmit: DirectionSnapshot,
    rcv: DirectionSnapshot,
}

impl AdapterView {
    fn of(a: &Adapter) -> Self {
        Self {
            config: a.config,
            state: a.state.current(),
            surprise_removed: a.state.is_surprise_removed(),
            xmit: a.stats.xmit(),
            rcv: a.stats.rcv(),
        }
    }
}

/// Issues one request through `dispatch` (in the fuzz target always [`oid::dispatch`]) and checks
/// the properties of its outcome.
fn check_one(
    dispatch: impl FnOnce(&Adapter, &mut Settings, &mut Request<'_>) -> Outcome,
    adapter: &Adapter,
    settings: &mut Settings,
    kind: RequestKind,
    oid: u32,
    buf: &mut [u8],
    (input_len, output_len): (usize, usize),
) {
    let len = buf.len();
    let settings_before = *settings;
    let adapter_before = AdapterView::of(adapter);
    let buffer_before = buf.to_vec();
    let outcome = dispatch(
        adapter,
        settings,
        &mut Request {
            kind,
            oid,
            buffer: buf,
            input_len,
            output_len,
        },
    );
    let what = || {
        format!(
            "{kind:?} {oid:#010x} with {len} bytes ({input_len} in, {output_len} out): {outcome:?}"
        )
    };
    assert!(
        usize::try_from(outcome.bytes_written).is_ok_and(|n| n <= output_len),
        "BytesWritten exceeds the output buffer: {}",
        what()
    );
    assert!(
        usize::try_from(outcome.bytes_read).is_ok_and(|n| n <= input_len),
        "BytesRead exceeds the input: {}",
        what()
    );
    if outcome.status == Status::BufferTooShort {
        assert!(
            usize::try_from(outcome.bytes_needed).is_ok_and(|n| n > output_len),
            "BUFFER_TOO_SHORT without asking for more: {}",
            what()
        );
    }
    if adapter_before.surprise_removed {
        assert_eq!(outcome.status, Status::NotAccepted, "{}", what());
    } else {
        let entry = oid::find(oid);
        let handled = entry.is_some_and(|e| match kind {
            RequestKind::Query => e.query.is_some(),
            RequestKind::Set => e.set.is_some(),
            RequestKind::Method => e.method.is_some(),
        });
        if !handled {
            assert_eq!(outcome.status, Status::NotSupported, "{}", what());
        }
    }
    let succeeded = outcome.status == Status::Success;
    let may_change = kind != RequestKind::Query && succeeded;
    if !may_change {
        assert_eq!(*settings, settings_before, "settings changed by {}", what());
        assert_eq!(
            AdapterView::of(adapter),
            adapter_before,
            "adapter changed by {}",
            what()
        );
    }
    if kind == RequestKind::Set || (kind == RequestKind::Method && !succeeded) {
        assert_eq!(
            &buf[..],
            &buffer_before[..],
            "a set, or a failed method, wrote into its buffer: {}",
            what()
        );
    }
}

/// An adapter configured from arbitrary keyword reads and `NetworkAddress`, in an arbitrary
/// state, with arbitrary counters.
fn arbitrary_adapter(u: &mut Unstructured<'_>) -> Result<Adapter> {
    let mut reads = Vec::with_capacity(KEYWORDS.len());
    for k in KEYWORDS {
        reads.push(arbitrary_read(u, k)?);
    }
    let network_address = if u.ratio(1u8, 4u8)? {
        let n = u.int_in_range(0..=8usize)?;
        Some(u.bytes(n.min(u.len()))?.to_vec())
    } else {
        None
    };
    let net_luid = u.arbitrary::<u64>()?;
    let read = |k: &Keyword| {
        KEYWORDS
            .iter()
            .position(|x| x.name == k.name)
            .and_then(|i| reads.get(i).copied())
            .unwrap_or(KeywordRead::Absent)
    };
    let (config, warnings) = AdapterConfig::decide(read, network_address.as_deref(), net_luid);
    assert!(warnings.len() <= Warnings::CAPACITY);
    for w in warnings.iter() {
        // Every warning renders without panicking and names its keyword.
        assert!(w.message().as_str().contains(w.keyword), "{w:?}");
    }
    let adapter = Adapter::new(config);

    // 0 initializing, 1 paused, 2 running, 3 paused again; surprise removal on top, rarely.
    let steps = u.int_in_range(0..=3u8)?;
    let s = &adapter.state;
    let walked = match steps {
        0 => Ok(()),
        1 => s.initialized(),
        2 => s
            .initialized()
            .and_then(|()| s.begin_restart())
            .and_then(|()| s.end_restart(true)),
        _ => s
            .initialized()
            .and_then(|()| s.begin_restart())
            .and_then(|()| s.end_restart(true))
            .and_then(|()| s.begin_pause())
            .and_then(|()| s.end_pause()),
    };
    assert_eq!(walked, Ok(()), "the state machine refused a normal life");
    if u.ratio(1u8, 16u8)? {
        s.mark_surprise_removed();
    }

    let counted = u.int_in_range(0..=4u8)?;
    for _ in 0..counted {
        let to = *u.choose(&[
            Destination::Directed,
            Destination::Multicast,
            Destination::Broadcast,
        ])?;
        let bytes = u.arbitrary::<u64>()?;
        match u.int_in_range(0..=3u8)? {
            0 => adapter.stats.sent(to, bytes),
            1 => adapter.stats.received(to, bytes),
            2 => adapter.stats.send_error(),
            _ => adapter.stats.send_discarded(),
        }
    }
    Ok(adapter)
}

/// What `NdisReadConfiguration` could give for one keyword: absent, not an integer, one of its
/// allowed values, or any integer.
fn arbitrary_read(u: &mut Unstructured<'_>, k: &Keyword) -> Result<KeywordRead> {
    // Mostly allowed values, so that the configurations the OIDs depend on (QoS on, for one)
    // come up often.
    Ok(match u.int_in_range(0..=7u8)? {
        0 => KeywordRead::Absent,
        1 => KeywordRead::NotAnInteger,
        2 => KeywordRead::Integer(u.arbitrary()?),
        _ => KeywordRead::Integer(match k.kind {
            KeywordType::Enum(choices) => u.choose(choices)?.0,
            KeywordType::Int { min, max, .. } => u.int_in_range(min..=max)?,
            KeywordType::Edit { .. } => u.arbitrary()?,
        }),
    })
}

/// `OID_QOS_PARAMETERS` over arbitrary bytes, through the same core entry point the driver's
/// trampoline calls (`oid::dispatch` with a method request). The first byte chooses the output
/// length (the input length, or up to 255 bytes less); the rest is the information buffer.
///
/// Properties: no panic; on SUCCESS, `BytesRead` = `BytesWritten` <= both lengths, the echo differs
/// from the input only in the ENFORCED_BY_MINIPORT bits of element flags, and the echo parses back
/// to exactly the accepted parameters; on failure, neither the settings nor a byte of the buffer
/// changed.
///
/// # Panics
/// When a property does not hold.
pub fn qos_parameters(data: &[u8]) {
    use dcbndk_core::qos::validate;
    let Some((&shorten, input)) = data.split_first() else {
        return;
    };
    let adapter = crate::running_adapter_with_inf_defaults();
    let mut settings = Settings::new(&adapter.config);
    // A first, valid request, so that a failed one has local parameters it must not change.
    let before = settings;
    let mut buffer = input.to_vec();
    let output_len = input.len().saturating_sub(usize::from(shorten));
    let outcome = oid::dispatch(
        &adapter,
        &mut settings,
        &mut Request {
            kind: RequestKind::Method,
            oid: dcbndk_core::ndis::OID_QOS_PARAMETERS,
            buffer: &mut buffer,
            input_len: input.len(),
            output_len,
        },
    );
    if outcome.status == Status::Success {
        let read = outcome.bytes_read as usize;
        assert_eq!(
            outcome.bytes_written, outcome.bytes_read,
            "BytesWritten = BytesRead"
        );
        assert!(
            read <= input.len() && read <= output_len,
            "{read} bytes echoed of {} in, {output_len} out",
            input.len()
        );
        let accepted = validate::parse_request(input, &dcbndk_core::qos::Capabilities::HARDWARE)
            .expect("accepted by the OID, so by the validator");
        for (i, (a, b)) in input.iter().zip(&buffer).enumerate() {
            if a != b {
                let in_element =
                    i >= accepted.first_element && (i - accepted.first_element) % 16 == 7;
                assert!(
                    in_element && (a ^ b) == 0x01,
                    "byte {i} changed from {a:#04x} to {b:#04x}: only the ENFORCED bit may change"
                );
            }
        }
        let echoed = validate::parse_request(&buffer, &dcbndk_core::qos::Capabilities::HARDWARE)
            .expect("the echo parses");
        assert_eq!(
            echoed.params, accepted.params,
            "the echo parses back to the accepted parameters"
        );
    } else {
        assert_eq!(settings, before, "a failed request changed the settings");
        assert_eq!(buffer, input, "a failed request changed the buffer");
        assert_eq!((outcome.bytes_read, outcome.bytes_written), (0, 0));
    }
}

/// The egress classifier and the frame views (issue 9) over an arbitrary table and frame. The
/// input decodes (with [`Unstructured`]) into a parameter set (or `*QOS` off), `*PriorityVLANTag`
/// and NetworkDirect technology, the NBL's out-of-band info, and a prefix length; the rest is the
/// frame's leading bytes.
///
/// Properties: nothing panics; a prefix of the bytes never parses to fields that disagree with
/// the whole (and a complete prefix parse is the whole parse); priority <= 7, TC < 8 and below
/// `NumTrafficClasses` (0 with `*QOS` off); the data path's one-pass classifier
/// (`classify_header`, `scan`) agrees with the reference parse and classifier on every input,
/// and declines only frames the reference calls truncated; an OS-supplied priority always wins; RoCE and RoCEv2
/// frames count as RDMA; a tag is inserted only into an untagged frame and rewritten only in a
/// tagged one, with PCP <= 7 and VID <= 4095; `apply_tag` of the decision succeeds with the
/// length it promises, its output parses with the tag it meant to write, and stripping an
/// inserted tag gives the input back; `tag_in_place` in a transmit buffer gives what
/// `apply_tag` writes for every action, or fails where it fails; a parsed PFC frame emits and
/// parses back to itself.
///
/// # Panics
/// When a property does not hold.
pub fn classify(data: &[u8]) {
    let _ = classify_case(Unstructured::new(data));
}

fn classify_case(mut u: Unstructured<'_>) -> Result<()> {
    use dcbndk_core::datapath::classify::{
        Compiled, Meta, NetDirect, Rule, TAG_ROOM, TagAction, TagPolicy, apply_tag, tag_in_place,
    };
    use dcbndk_core::datapath::frame::{
        ETHERTYPE_ROCE, Frame, Malformed, PfcFrame, ROCEV2_UDP_PORT, Status, Transport, VlanTag,
    };
    use dcbndk_core::qos::params::{
        Classification, Classifications, MAX_CLASSIFICATIONS, QosParameters,
    };

    let qos = u.arbitrary::<bool>()?;
    let pvt = if u.ratio(7, 8)? {
        u.int_in_range(0..=3)?
    } else {
        u.arbitrary()?
    };
    let network_direct = u.arbitrary::<bool>()?;
    let technology = *u.choose(&[1u32, 4, 0, 7])?;
    let mut p = QosParameters {
        num_tcs: if u.ratio(7, 8)? {
            u.int_in_range(0..=8)?
        } else {
            u.arbitrary()?
        },
        ..QosParameters::default()
    };
    for slot in &mut p.prio_tc {
        *slot = u.int_in_range(0..=9)?;
    }
    let n = u.int_in_range(0..=MAX_CLASSIFICATIONS)?;
    let mut classifications = Classifications::default();
    for _ in 0..n {
        let selector = u.int_in_range(0..=7)?;
        let field = match u.int_in_range(0..=3)? {
            0 => *u.choose(&[0x0800u16, 0x86DD, 0x8906, 0x8915, 445, 3260, 4791, 53])?,
            _ => u.arbitrary()?,
        };
        let priority = u.int_in_range(0..=8)?;
        let _ = classifications.push(Classification {
            selector,
            field,
            priority,
        });
    }
    p.classifications = classifications;
    let meta = Meta {
        os_priority: u.arbitrary()?,
        vlan_id: u.arbitrary()?,
        nd_port: u.arbitrary()?,
    };
    let prefix: u16 = u.arbitrary()?;
    let bytes = u.take_rest();

    // Prefixes agree with the whole.
    let full = Frame::parse(bytes);
    let part = Frame::parse(
        bytes
            .get(..usize::from(prefix).min(bytes.len()))
            .unwrap_or(&[]),
    );
    for (a, b) in [(part.dst, full.dst), (part.src, full.src)] {
        assert!(a.is_none() || a == b, "prefix MAC {a:?} vs {b:?}");
    }
    assert!(part.tag.is_none() || part.tag == full.tag);
    assert!(part.ethertype.is_none() || part.ethertype == full.ethertype);
    assert!(part.ip.is_none() || part.ip.map(|i| i.version) == full.ip.map(|i| i.version));
    assert!(part.ports.is_none() || part.ports == full.ports);
    if part.status == Status::Complete {
        assert_eq!(part, full, "a complete prefix parse is the whole parse");
    }

    let table = Compiled::new(
        qos.then_some(&p),
        TagPolicy::from_keywords(qos, pvt),
        NetDirect::from_keywords(network_direct, technology),
    );
    let d = table.classify(&full, &meta);
    // The data path's one-pass classifier gives the reference's answer on every input.
    assert_eq!(table.classify_header(bytes, &meta), d, "fast vs reference");
    match dcbndk_core::datapath::scan::scan(bytes) {
        Some(facts) => assert_eq!(facts, full.facts(), "scan vs reference"),
        None => assert!(
            matches!(
                full.status,
                Status::Truncated(_) | Status::Malformed(Malformed::IpVersion)
            ),
            "scan declined a {:?} frame",
            full.status
        ),
    }
    assert!(d.priority <= 7, "{d:?}");
    assert!(d.tc < 8, "{d:?}");
    if qos {
        assert!(u32::from(d.tc) < p.num_tcs.max(1), "{d:?}");
    } else {
        assert_eq!(d.tc, 0);
    }
    if let Some(os) = meta.os_priority {
        assert_eq!((d.rule, d.priority), (Rule::OsSupplied, os & 7));
    }
    let roce = full.ethertype == Some(ETHERTYPE_ROCE)
        || full
            .ports
            .is_some_and(|q| q.transport == Transport::Udp && q.dst == ROCEV2_UDP_PORT);
    if roce || meta.nd_port.is_some() {
        assert!(d.is_rdma, "{d:?}");
    }

    let mut out = vec![0u8; bytes.len() + 4];
    let written = apply_tag(bytes, d.tag, &mut out);
    match d.tag {
        TagAction::Leave => assert_eq!(written, Some(bytes.len())),
        TagAction::Insert { pcp, vid } => {
            assert!(full.tag.is_none() && pcp <= 7 && vid <= 0x0FFF, "{d:?}");
            assert_eq!(written, Some(bytes.len() + 4));
            let tagged = &out[..bytes.len() + 4];
            let again = Frame::parse(tagged);
            assert_eq!(
                again.tag,
                Some(VlanTag {
                    pcp,
                    dei: false,
                    vid
                })
            );
            let mut back = vec![0u8; bytes.len()];
            assert_eq!(
                apply_tag(tagged, TagAction::Strip, &mut back),
                Some(bytes.len())
            );
            assert_eq!(&back[..], bytes, "strip(insert(x)) != x");
        }
        TagAction::Rewrite { pcp } => {
            assert!(full.tag.is_some() && pcp <= 7, "{d:?}");
            assert_eq!(written, Some(bytes.len()));
            let again = Frame::parse(&out[..bytes.len()]);
            assert_eq!(again.tag.map(|t| t.pcp), Some(pcp));
            assert_eq!(
                again.tag.map(|t| (t.dei, t.vid)),
                full.tag.map(|t| (t.dei, t.vid))
            );
        }
        TagAction::Strip => panic!("an egress decision never strips"),
    }
    match table.receive(&full) {
        TagAction::Strip => {
            assert!(full.tag.is_some());
            assert_eq!(
                apply_tag(bytes, TagAction::Strip, &mut out),
                Some(bytes.len() - 4)
            );
        }
        other => assert_eq!(other, TagAction::Leave),
    }

    // Tagging in place in a transmit buffer gives what `apply_tag` writes, for every action
    // (the decision's and the others, on frames they do not fit too), or fails where it fails.
    let room = usize::from(u8::try_from(prefix % 8).unwrap_or(0));
    for action in [
        d.tag,
        TagAction::Leave,
        TagAction::Insert {
            pcp: (prefix & 7) as u8,
            vid: prefix >> 4,
        },
        TagAction::Rewrite {
            pcp: (prefix >> 8 & 7) as u8,
        },
        TagAction::Strip,
    ] {
        let mut copy = vec![0u8; bytes.len() + 4];
        let expect = apply_tag(bytes, action, &mut copy).map(|n| copy[..n].to_vec());
        // The buffer is exactly the frame and its room, or a few bytes more.
        let mut buf = vec![0xEEu8; TAG_ROOM + bytes.len() + room];
        buf[TAG_ROOM..TAG_ROOM + bytes.len()].copy_from_slice(bytes);
        let got =
            tag_in_place(&mut buf, bytes.len(), action).map(|(at, n)| buf[at..at + n].to_vec());
        assert_eq!(got, expect, "in place vs apply_tag, {action:?}");
    }
    let mut short = vec![0u8; bytes.len() + TAG_ROOM];
    short.truncate(TAG_ROOM + bytes.len().saturating_sub(1));
    if !bytes.is_empty() {
        assert_eq!(
            tag_in_place(&mut short, bytes.len(), TagAction::Leave),
            None
        );
    }

    if let Ok(pfc) = PfcFrame::parse(bytes) {
        assert_eq!(PfcFrame::parse(&pfc.to_bytes()), Ok(pfc));
        assert_eq!(&pfc.to_bytes()[..16], &bytes[..16]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checks_accept_ordinary_inputs() {
        object_header(&[]);
        object_header(&[0xB6, 1, 52, 0]);
        object_header(&[0xB6, 1, 52, 0, 0xB6, 1, 52, 0, 9]);
        oid_request(&[]);
        oid_request(&[0x55; 512]);
        oid_request(&(0..=255).collect::<Vec<u8>>());
    }

    #[test]
    #[should_panic(expected = "no fuzz target named")]
    fn an_unknown_target_is_refused() {
        run("nope", &[]);
    }

    /// A dispatcher with a bug, standing in for `oid::dispatch`, to show that each property
    /// can fail.
    fn run_buggy(bug: impl FnOnce(&Adapter, &mut Settings, &mut Request<'_>) -> Outcome) {
        let adapter = crate::running_adapter_with_inf_defaults();
        let mut settings = Settings::new(&adapter.config);
        let mut buf = [0u8; 4];
        check_one(
            bug,
            &adapter,
            &mut settings,
            RequestKind::Set,
            dcbndk_core::ndis::OID_GEN_CURRENT_LOOKAHEAD,
            &mut buf,
            (4, 4),
        );
    }

    #[test]
    fn the_real_dispatcher_passes_where_the_buggy_ones_fail() {
        run_buggy(oid::dispatch);
    }

    #[test]
    #[should_panic(expected = "BytesWritten exceeds the output buffer")]
    fn writing_past_the_buffer_is_caught() {
        run_buggy(|_, _, _| Outcome::written(5));
    }

    #[test]
    #[should_panic(expected = "BytesRead exceeds the input")]
    fn reading_past_the_input_is_caught() {
        run_buggy(|_, _, _| Outcome::read(5));
    }

    #[test]
    #[should_panic(expected = "BUFFER_TOO_SHORT without asking for more")]
    fn buffer_too_short_that_needs_less_is_caught() {
        run_buggy(|_, _, _| Outcome::needs(Status::BufferTooShort, 4));
    }

    #[test]
    #[should_panic(expected = "settings changed by")]
    fn a_rejected_set_that_changes_settings_is_caught() {
        run_buggy(|_, s, _| {
            s.lookahead = 1;
            Outcome::fail(Status::InvalidData)
        });
    }

    #[test]
    #[should_panic(expected = "adapter changed by")]
    fn a_rejected_set_that_changes_the_adapter_is_caught() {
        run_buggy(|a, _, _| {
            a.stats.send_error();
            Outcome::fail(Status::InvalidData)
        });
    }

    #[test]
    #[should_panic(expected = "a set, or a failed method, wrote into its buffer")]
    fn a_set_that_writes_its_buffer_is_caught() {
        run_buggy(|_, _, r| {
            r.buffer.fill(9);
            Outcome::read(4)
        });
    }

    #[test]
    #[should_panic(expected = "NotSupported")]
    fn an_unlisted_request_type_that_succeeds_is_caught() {
        let adapter = crate::running_adapter_with_inf_defaults();
        let mut buf = [0u8; 4];
        let mut settings = Settings::new(&adapter.config);
        check_one(
            |_, _, _| Outcome::written(0),
            &adapter,
            &mut settings,
            RequestKind::Method,
            dcbndk_core::ndis::OID_GEN_LINK_SPEED,
            &mut buf,
            (0, 4),
        );
    }
}
