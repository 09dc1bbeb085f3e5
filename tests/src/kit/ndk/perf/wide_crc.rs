//! NdkPerf's cases of the ICRC's wide fold (`dcbndk::resources::crc::Wide`, YMM or ZMM
//! registers under a batch's save of the AVX state, and of the AVX-512 state for ZMM,
//! `resources::xstate`): taken where the CPU has AVX2 and VPCLMULQDQ and the OS enabled AVX, and
//! not where the simulated kernel says the OS did not (`DCBNDK_SIM_AVX=off`,
//! `sim::exports::avx_enabled`); on ZMM where the CPU has AVX-512F besides and the OS enabled
//! that state, on YMM where it did not (`DCBNDK_SIM_AVX512=off`); and with every save failing,
//! the batches fold on XMM registers and the bytes and ICRCs are still right.
//!
//! How the wide path is seen: the simulated kernel counts the successful saves of the AVX state
//! (`sim::exports::avx_saves`), and the driver saves only in a batch's CRC for a frame long
//! enough for the wide fold, which then folds that frame on YMM registers under the save
//! (`BatchSave::crc`). The count is the process's, so only its growth is read, never an exact
//! figure. That the wide fold computes the right CRC is the conformance tests' (`fast_crc`);
//! here every frame's ICRC is checked by its receiver, and a wrong one would drop the packet
//! and fail the transfer's bytes. Only the simulated kernel's count is read, not the driver's
//! own state: under Wine the driver is the image, which the kit sees through its calls alone.

use super::jumbo::{packets_at, write_read};
use crate::kit::ndk::ping::on_pair_with;
use crate::kit::{Case, CaseResult, ensure, expect_eq, note};
use crate::sim::exports::{
    AVX_SWITCH, AVX512_SWITCH, avx_enabled, avx_saves, avx512_enabled, avx512_saves,
};
use crate::sim::faults::{Export, Mode, Scope};

/// The cases.
pub fn cases() -> Vec<Case> {
    vec![
        Case::new(
            "Wide CRC: a 1 MiB WRITE and READ at *JumboPacket 9014 saves the AVX state for its batches (KeSaveExtendedProcessorState counted by the simulated kernel) where the CPU has AVX2 + VPCLMULQDQ and the OS enabled AVX, and never where the OS did not (DCBNDK_SIM_AVX=off); bytes exact either way",
            wide_taken,
        ),
        Case::new(
            "Wide CRC on ZMM: where the CPU has AVX-512F + VPCLMULQDQ and the OS enabled the AVX-512 state, the batches' saves name it besides the AVX state (KeSaveExtendedProcessorState's mask, counted by the simulated kernel) and the ICRCs fold on ZMM registers; without either (or DCBNDK_SIM_AVX512=off, or the unoptimized image) no save names it; bytes exact either way",
            zmm_taken,
        ),
        Case::new(
            "Wide CRC: every KeSaveExtendedProcessorState failing (STATUS_INSUFFICIENT_RESOURCES, fault injection): each batch falls back to the XMM fold; the 1 MiB WRITE and READ at *JumboPacket 9014 exact, every ICRC right, no violation and no leak",
            failed_saves_fall_back,
        ),
    ]
}

/// Whether this CPU has what the wide fold needs (std's detection).
fn cpu_has_wide() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("vpclmulqdq")
            && std::is_x86_feature_detected!("pclmulqdq")
            && std::is_x86_feature_detected!("sse4.1")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

fn wide_taken() -> CaseResult {
    if !cpu_has_wide() {
        return Ok(Some(
            "this CPU has no AVX2 + VPCLMULQDQ: the XMM fold is the only path".into(),
        ));
    }
    let expected = avx_enabled();
    let before = avx_saves();
    on_pair_with((9014, 9014), |a, b| {
        let run = write_read(a, b)?;
        packets_at("9014 and 9014", &run, 4096)?;
        let saves = avx_saves() - before;
        if expected {
            ensure(saves > 0, || {
                "no save of the AVX state in a 1 MiB WRITE and READ: the wide fold was not taken"
                    .into()
            })?;
            note(format!(
                "wide fold on: the saves of the AVX state grew by {saves} over the run (one per batch of packets, not one per packet: 256 packets each way); WRITE {:.0} MB/s, READ {:.0} MB/s",
                run.write_mb_s, run.read_mb_s
            ));
        } else {
            expect_eq("saves of the AVX state with AVX off", saves, 0)?;
            note(format!(
                "wide fold off ({AVX_SWITCH}=off): no save; WRITE {:.0} MB/s, READ {:.0} MB/s on the XMM fold",
                run.write_mb_s, run.read_mb_s
            ));
        }
        Ok(())
    })
}

/// Whether this CPU has what the ZMM fold needs besides the YMM fold's (std's detection).
fn cpu_has_zmm() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        cpu_has_wide() && std::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether the driver under test has the ZMM fold: every build linked into this process (a
/// Linux one), and an optimized image; not the unoptimized Windows image, which folds on YMM at
/// most (`dcbndk::resources::crc::x64`'s documentation says why).
fn driver_has_zmm() -> bool {
    !cfg!(windows) || crate::sim::host::driver::optimized()
}

fn zmm_taken() -> CaseResult {
    // Where the ZMM fold is to be taken; everywhere else the case checks that it is not.
    let expected = cpu_has_zmm() && avx512_enabled() && driver_has_zmm();
    let wide = cpu_has_wide() && avx_enabled();
    let (before, before_512) = (avx_saves(), avx512_saves());
    on_pair_with((9014, 9014), |a, b| {
        let run = write_read(a, b)?;
        packets_at("9014 and 9014", &run, 4096)?;
        let saves = avx_saves() - before;
        let saves_512 = avx512_saves() - before_512;
        let rates = format!(
            "WRITE {:.0} MB/s, READ {:.0} MB/s",
            run.write_mb_s, run.read_mb_s
        );
        if expected {
            ensure(saves_512 > 0, || {
                format!(
                    "{saves} saves of the AVX state, none of the AVX-512 state: the ZMM fold was not taken"
                )
            })?;
            note(format!(
                "ZMM fold: {saves_512} of the {saves} saves named the AVX-512 state; {rates}"
            ));
        } else {
            expect_eq("saves of the AVX-512 state", saves_512, 0)?;
            let why = if !cpu_has_zmm() {
                "this CPU has no AVX-512F + VPCLMULQDQ".to_owned()
            } else if !avx512_enabled() {
                format!("the AVX-512 state is off ({AVX512_SWITCH}=off, or {AVX_SWITCH}=off)")
            } else {
                "the unoptimized image folds on YMM at most".to_owned()
            };
            let path = if wide { "the YMM fold" } else { "the XMM fold" };
            note(format!(
                "no ZMM fold ({why}): {saves} saves, none of the AVX-512 state, {path}; {rates}"
            ));
        }
        Ok(())
    })
}

fn failed_saves_fall_back() -> CaseResult {
    if !cpu_has_wide() || !avx_enabled() {
        return Ok(Some(format!(
            "no wide fold here (the CPU has no AVX2 + VPCLMULQDQ, or {AVX_SWITCH}=off): no save to fail"
        )));
    }
    on_pair_with((9014, 9014), |a, b| {
        let mut scope = Scope::new(Mode::Every {
            export: Export::SaveExtendedProcessorState,
        });
        scope.cover_thread();
        scope.cover_adapter(a.shared_handle());
        scope.cover_adapter(b.shared_handle());
        let run = write_read(a, b);
        let outcome = scope.outcome();
        scope.leave();
        let run = run?;
        packets_at("9014 and 9014, every save failing", &run, 4096)?;
        ensure(!outcome.injected.is_empty(), || {
            "no save of the AVX state was asked for: nothing fell back".into()
        })?;
        ensure(
            outcome
                .injected
                .iter()
                .all(|(_, e)| *e == Export::SaveExtendedProcessorState),
            || format!("only saves failed: {:?}", outcome.injected),
        )?;
        note(format!(
            "{} saves failed, each batch on the XMM fold; WRITE {:.0} MB/s, READ {:.0} MB/s",
            outcome.injected.len(),
            run.write_mb_s,
            run.read_mb_s
        ));
        Ok(())
    })
}
