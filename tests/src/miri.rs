//! The kit cases Miri runs (`.ci/miri`, README "Undefined behaviour: Miri"): the driver's
//! unsafe shell, driven by the simulated ndis.sys in one process, through kit cases chosen to reach every kind of unsafe code it has
//! (the NDIS imports and the trampolines NDIS calls, pool memory and in-place construction, spin
//! locks, `Published`, the hub's ports, the link's transmit slots, NBL and MDL walks, timers, work
//! items, the per-CPU counter blocks) in a time CI can afford. Each case runs exactly as in the
//! kit, so a case that passes natively and fails here failed on undefined behaviour (or on
//! something Miri cannot run, which it names).
//!
//! `miri::ci_` is what CI runs (a case costs Miri 30-60 s of CPU); `miri::more_` are the rest
//! (`DCBNDK_MIRI_FULL=1 .ci/miri` runs both). Natively, `cargo test` runs them all, as the kit does.
//!
//! The lock-free structures also have their own tests, which Miri runs in the same command:
//! `shell::published` (sync::Published) here, and `percpu` in dcbndk-core; so does the
//! shell's MDL access over the simulator's MDLs (`shell::mdl`).

use crate::kit::{self, Status};

/// Runs the kit case named `name` (in whichever group has it) and fails with its reason unless
/// it passes.
fn run(name: &str) {
    // The kit runs its cases with the driver loaded (its first case loads it): a case run alone
    // starts the same way.
    if let Err(e) = crate::sim::Sim::dcbndk() {
        panic!("the dcbndk driver does not load: {e}");
    }
    let groups = kit::groups();
    let found = groups.iter().find_map(|group| {
        (group.cases)()
            .into_iter()
            .find(|case| case.name == name)
            .map(|case| (group.name, case))
    });
    let Some((group, case)) = found else {
        panic!("no kit case is named {name:?} (renamed? update tests/src/miri.rs)");
    };
    let report = kit::run_case(group, &case);
    assert_eq!(
        report.status,
        Status::Pass,
        "{group}: {name}: {}",
        report.reason
    );
}

/// One test per kit case.
macro_rules! cases {
    ($($test:ident => $name:literal,)*) => {
        $(
            #[test]
            fn $test() {
                run($name);
            }
        )*
    };
}

cases! {
    // Lifecycle: DriverEntry, initialize (pool memory, in-place construction, the keyword reads,
    // the attributes NDIS copies), OIDs through the trampolines, sends over MDL chains, pause,
    // reset, surprise removal, halt and unload.
    ci_lifecycle_load => "load: DriverEntry registers NDIS 6.30 characteristics with every handler",
    more_lifecycle_initialize_defaults => "initialize: INF defaults give the documented adapter",
    more_lifecycle_initialize_qos_1 => "initialize: *QOS 1",
    more_lifecycle_statistics_oid => "OID_GEN_STATISTICS: right-sized, short and zero-length buffers",
    more_lifecycle_multicast_list => "OID_802_3_MULTICAST_LIST: set, query, clear; a unicast entry, a ragged length, a full list",
    more_lifecycle_send_mdl_chains => "send: frames are counted and completed; a header split across MDLs is read",
    more_lifecycle_send_short_frame => "send: a frame shorter than an Ethernet header fails alone",
    more_lifecycle_send_paused => "send: a send that reaches a paused miniport completes with NDIS_STATUS_PAUSED",
    more_lifecycle_restart_link_state => "restart: indicates NDIS_STATUS_LINK_STATE each time",
    ci_lifecycle_reset => "reset: completes, keeps the addressing, OIDs still work",
    more_lifecycle_surprise_removal => "PnP: surprise removal refuses OIDs and sends until halt",
    more_lifecycle_cancel => "cancel: cancel handlers with nothing pending change nothing",
    more_lifecycle_return_foreign_nbls => "return: NBLs the miniport never indicated are left alone",
    ci_lifecycle_unload => "unload: MiniportDriverUnload deregisters, and the driver loads again",
    more_lifecycle_pause_restart_cycles => "pause/restart: 40 cycles with sends in flight on another thread",
    more_lifecycle_concurrent_adapters => "concurrency: 4 adapters initialize, work and halt at once",
    more_lifecycle_halt_cycles => "halt: 20 initialize/halt cycles leave no pool allocation behind",
    more_lifecycle_send_mdl_cuts => "send: frames cut into MDLs inside the header and the payload reach the wire byte for byte, tagged and untagged",

    // QoS OIDs: OID_QOS_PARAMETERS read from NDIS's buffer, published to the data path, the
    // operational indication; refusals that change nothing.
    more_qos_empty_parameters => "buffer of 52 bytes (no elements): accepted",
    more_qos_truncated_array => "element array truncated by the buffer: INVALID_LENGTH, BytesNeeded = the array's end",
    more_qos_default_at_index_1 => "DEFAULT at index 1: INVALID_PARAMETER, nothing changes",
    more_qos_eight_ets_tcs => "bandwidth sum 100 over 8 ETS TCs: accepted",
    ci_qos_operational_indication => "accepted request: operational indication with {0xB6,1,52}, CONFIGURED and CHANGED bits, no ENFORCED",
    more_qos_operational_query => "OID_QOS_OPERATIONAL_PARAMETERS returns the last operational indication",
    // Two adapters on one virtual wire: the hub's ports, posted frames, the DCBX timer.
    more_qos_first_dcbx_from_a_peer => "first DCBX from a peer: remote indication, even before any OID_QOS_PARAMETERS",
    more_qos_willing_adopts_peer => "Willing on: the peer's recommendation, PFC and applications become operational",

    // NDK: attributes, OID_NDK_SET_STATE and its work item, statistics on both paths (the
    // direct path's per-CPU sums), connections and endpoints, the per-CPU blocks.
    more_ndk_attributes => "attributes: *NetworkDirect 0, 1, absent and invalid; caps always present (§10.6)",
    ci_ndk_set_state_events => "OID_NDK_SET_STATE: each change raises NetEventNDKDisable/Enable once, in order, from a work item",
    more_ndk_halt_waits_for_work_item => "OID_NDK_SET_STATE: halt right after a change waits for the work item",
    ci_ndk_statistics => "OID_NDK_STATISTICS: 247/248 bytes, header, Reserved01-20 zero, regular and direct path (§10.8)",
    more_ndk_connections_endpoints => "OID_NDK_CONNECTIONS / LOCAL_ENDPOINTS: 16 bytes when empty, 16+64n / 16+36n, BUFFER_TOO_SHORT, IPv4 and IPv6 (§10.9)",
    more_ndk_per_cpu_blocks => "per-CPU counters: one 128-byte block per processor NDIS reports, freed at halt",
    more_ndk_concurrency => "concurrency: consumers on all CPUs connect, SEND, WRITE, READ and disconnect at once while the direct path queries: exact sums, monotonic queries",
    more_ndk_disable_with_connections => "disable with live connections: lists drain, ActiveConnection 0, counters stay monotonic across disable/enable",

    // The NDKPI provider: objects in pool blocks, the core's model over 'static
    // slices of pool arrays, the provider built in place, the adapter close tearing down.
    ci_ndk_provider_close_frees_all => "CloseNDKAdapterHandler with a QP, MR, PD, CQs, an SRQ holding a receive and a QP on it still open frees them all: nothing left under any NDK pool tag",
    ci_ndk_provider_close_with_successors => "rules 8-10 (§1.3): PD and CQ closed while a QP uses them -> PENDING, each completed exactly once when the QP closes; no notification after",
    more_ndk_srq_close_with_successors => "rules 8-10 (§1.3): NdkCloseSrq with a QP on it and NdkClosePd with the SRQ -> PENDING, each completed exactly once when the QP closes; an SRQ alone pends its PD's close until it closes; the SRQ's receives never complete",

    // DCBX between two adapters (timers on the wire's clock, LLDPDUs through the link's slots).
    ci_dcbx_willing_adopts => "willing adapter adopts a non-willing peer",
    more_dcbx_shutdown_lldpdu => "shutdown LLDPDU at pause forgets the adapter",
}
