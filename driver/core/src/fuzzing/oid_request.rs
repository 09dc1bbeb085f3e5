//! The `oid_request` target's properties: sequences of OID requests on arbitrary adapters.

use arbitrary::{Result, Unstructured};
use std::format;
use std::vec::Vec;

use crate::adapter::config::{AdapterConfig, KeywordRead, Warnings};
use crate::adapter::state::AdapterState;
use crate::adapter::stats::{Destination, DirectionSnapshot};
use crate::adapter::{Adapter, Settings};
use crate::keywords::{KEYWORDS, Keyword, KeywordType};
use crate::oid::{self, OIDS, Outcome, Request, RequestKind};
use crate::status::Status;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::running_adapter_with_inf_defaults;

    /// A dispatcher with a bug, standing in for `oid::dispatch`, to show that each property
    /// can fail.
    fn run_buggy(bug: impl FnOnce(&Adapter, &mut Settings, &mut Request<'_>) -> Outcome) {
        let adapter = running_adapter_with_inf_defaults();
        let mut settings = Settings::new(&adapter.config);
        let mut buf = [0u8; 4];
        check_one(
            bug,
            &adapter,
            &mut settings,
            RequestKind::Set,
            ndis_sys::ntddndis::OID_GEN_CURRENT_LOOKAHEAD,
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
        let adapter = running_adapter_with_inf_defaults();
        let mut buf = [0u8; 4];
        let mut settings = Settings::new(&adapter.config);
        check_one(
            |_, _, _| Outcome::written(0),
            &adapter,
            &mut settings,
            RequestKind::Method,
            ndis_sys::ntddndis::OID_GEN_LINK_SPEED,
            &mut buf,
            (0, 4),
        );
    }
}
