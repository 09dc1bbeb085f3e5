//! Live interoperation with a real IEEE 802.1Qaz DCBX peer: Debian's `lldpad` on a veth.
//!
//! The design and its pitfalls are in `/work/shared/spec/dcbx-peer.md`. In short: two network
//! namespaces joined by a veth; `lldpad` runs on `veth-peer` in one of them with our LD_PRELOAD
//! shim `tests/interop/fakedcbnl.c` (which makes lldpad believe the veth has dcbnl support and
//! logs what lldpad programs into the "NIC"); the simulated adapter sends and receives whole
//! Ethernet frames on `veth-sim` in the other through an `AF_PACKET` socket.
//!
//! ```text
//!  netns dcbx-sim-<pid>-<n>                    netns dcbx-peer-<pid>-<n>
//!  PacketSocket ── veth-sim 02:00:00:00:00:02 ═══ veth-peer 02:00:00:00:00:01 ── lldpad+shim
//! ```
//!
//! # API
//!
//! - `Environment::check` `-> Result<(), String>`: whether the live harness can run here (root,
//!   `ip`, `unshare`, `stdbuf`, `lldpad`, `lldptool`, `gcc`); the error is the reason to print.
//!   `Environment::gate` applies the house policy: skip (print `SKIPPED: reason`) when the
//!   environment lacks them, except under `CI=true`, where a missing tool is an error.
//! - `Namespaces::create` `-> io::Result<Namespaces>`: the two namespaces and the veth; dropped
//!   (or `Namespaces::teardown`, idempotent) they are deleted. `Namespaces::reap_stale`
//!   removes what a crashed earlier run (panic = abort, SIGKILL) left behind.
//! - `PacketSocket::open` `(&Namespaces) -> io::Result<PacketSocket>`: raw frames on `veth-sim`:
//!   `PacketSocket::send` `(&[u8])`, `PacketSocket::recv` `(Duration) -> Option<Vec<u8>>`
//!   (incoming frames only), `PacketSocket::recv_lldpdu`; `ethernet_frame` and
//!   `lldpdu_payload` wrap and unwrap an LLDPDU.
//! - `Shim::build` `(out_dir: &Path) -> io::Result<PathBuf>`: compiles the shim (its source is
//!   embedded in this library, so the `hlk` binary works anywhere gcc does);
//!   `Shim::default_dir` is `target/interop`.
//! - `Lldpad::start` `(&Namespaces, shim: &Path) -> io::Result<Lldpad>`: lldpad on `veth-peer`,
//!   ready when it returns (its control socket answered). Dropped (or `Lldpad::stop`): SIGTERM
//!   to its own pid, at most 3 s, then SIGKILL; its temporary directory is removed (kept when
//!   `DCBNDK_INTEROP_KEEP=1`). Drop the `Lldpad` before its `Namespaces` (declare it after them):
//!   a namespace lives on while lldpad runs in it.
//!   - `Lldpad::lldptool` `(&[&str]) -> io::Result<String>`: `ip netns exec <peer> lldptool …`.
//!   - `Lldpad::configure` `(&PeerConfig)`: the lldptool commands of dcbx-peer.md §5
//!     (`PeerConfig::spec_example` is that section's configuration).
//!   - `Lldpad::neighbor` `-> io::Result<NeighborView>`: what lldpad decoded from the sim's
//!     frames (`lldptool -t -n`); `Lldpad::local`: the TLVs lldpad last built for its own
//!     LLDPDU (`lldptool -t`); `Lldpad::shim_sets` `-> io::Result<Vec<ShimSet>>`: the
//!     IEEE_SET/IEEE_DEL calls lldpad made, in order (its operational configuration after the
//!     DCBX state machines ran; lldpad repeats the ETS and PFC sets at every transmission, so
//!     look at the last ones: `last_ets`, `last_pfc`, `app_table`).
//! - `wait_for` `(deadline, poll, FnMut() -> Option<T>) -> Result<T, String>`: every wait of the
//!   harness is bounded.
//!
//! Nothing panics: every failure is an error naming the command, its exit status and its output.
//!
//! # lldpad facts a test must know (besides dcbx-peer.md §9)
//!
//! - `lldptool -t -n` prints nothing and exits 0 while there is no neighbour; the view is then
//!   empty (`NeighborView::is_empty`), not an error.
//! - lldpad's own TLVs (`Lldpad::local`) are rebuilt at each transmission: right after a
//!   `configure` they may still show the previous values.
//! - lldpad's `IEEE_SET` of ETS carries `ets_cap=0`; PFC `pfc_cap=0`.
//! - lldpad programs the NIC (`IEEE_SET`) only once its "pending" state clears: 15 s after start,
//!   or at once when it receives a DCBX LLDPDU. Send a frame first rather than wait.
//! - Every lldptool invocation, even `-v`/`-h`, first connects to lldpad and fails without it:
//!   `Environment` only looks lldptool up on `PATH`.
//! - lldpad stops within about 40 ms of SIGTERM here, and sends the TTL 0 shutdown LLDPDU.
//! - With the local side willing and the sim not, lldpad adopts the sim's ETS *Recommendation*
//!   (not its Configuration) and the sim's PFC, and programs the sim's APP entries as "peer"
//!   entries next to its own.

mod lldpad;
mod netns;
mod packet;
mod parse;

#[cfg(test)]
mod tests;

pub use lldpad::{Lldpad, PeerConfig, PeerEts, Shim};
pub use netns::{Namespaces, PEER_IF, PEER_MAC, SIM_IF, SIM_MAC};
pub use packet::{PacketSocket, ethernet_frame, lldpdu_payload};
pub use parse::{
    App, EtsView, NeighborView, PfcView, ShimEts, ShimSet, app_table, last_ets, last_pfc,
    parse_lldptool, parse_shim_log, tsa_name,
};

use std::io;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// TSA strict priority (802.1Q Table 8-6), as in `EtsTlv::tsa`.
pub const TSA_STRICT: u8 = 0;
/// TSA credit-based shaper.
pub const TSA_CBS: u8 = 1;
/// TSA enhanced transmission selection.
pub const TSA_ETS: u8 = 2;
/// TSA vendor specific.
pub const TSA_VENDOR: u8 = 255;

/// The host tools the live harness runs, the arguments that make them print their version
/// (`None`: only looked up on `PATH`; lldptool fails whenever lldpad is not running), and the
/// Debian packages that provide them.
const TOOLS: &[(&str, Option<&[&str]>, &str)] = &[
    ("ip", Some(&["-V"]), "iproute2"),
    ("unshare", Some(&["--version"]), "util-linux"),
    ("stdbuf", Some(&["--version"]), "coreutils"),
    ("lldpad", Some(&["-v"]), "lldpad"),
    ("lldptool", None, "lldpad"),
    ("gcc", Some(&["--version"]), "gcc libc6-dev"),
];

/// Whether `program` is an executable file in a `PATH` directory.
fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(program))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// Whether the live interop harness can run on this machine.
pub struct Environment;

impl Environment {
    /// `Ok` when the harness can run; otherwise the reason (the caller prints it and skips).
    ///
    /// # Errors
    /// The reason: not root, or a tool missing (and the package that provides it).
    pub fn check() -> Result<(), String> {
        Self::diagnose().map_err(|(reason, _)| reason)
    }

    /// `Environment::check` with the house policy: `Ok(true)` run; `Ok(false)` skip (this
    /// prints `SKIPPED: <what>: <reason>`); `Err` when `CI=true` and a tool is missing (CI
    /// installs them, so their absence is a failure).
    ///
    /// # Errors
    /// Under `CI=true`, the missing tool.
    pub fn gate(what: &str) -> Result<bool, String> {
        match Self::diagnose() {
            Ok(()) => Ok(true),
            Err((reason, true)) if std::env::var("CI").as_deref() == Ok("true") => Err(format!(
                "{what}: {reason} (CI=true: .ci/run installs the interop tools)"
            )),
            Err((reason, _)) => {
                println!("SKIPPED: {what}: {reason}");
                Ok(false)
            }
        }
    }

    /// The reason and whether it is a missing tool.
    fn diagnose() -> Result<(), (String, bool)> {
        let mut missing = Vec::new();
        for &(program, args, package) in TOOLS {
            let ok = match args {
                Some(args) => Command::new(program)
                    .args(args)
                    .output()
                    .is_ok_and(|o| o.status.success()),
                None => on_path(program),
            };
            if !ok {
                missing.push(format!("{program} (Debian: {package})"));
            }
        }
        if !missing.is_empty() {
            return Err((format!("missing {}", missing.join(", ")), true));
        }
        // SAFETY: geteuid has no preconditions and cannot fail.
        let euid = unsafe { libc::geteuid() };
        if euid != 0 {
            return Err((
                format!(
                    "not root (euid {euid}): `ip netns` and lldptool (which accepts only uid 0) \
                     need root"
                ),
                false,
            ));
        }
        if !std::path::Path::new("/proc/self/ns/net").exists() {
            return Err(("no network namespaces (/proc/self/ns/net)".into(), false));
        }
        Ok(())
    }
}

/// Polls `f` every `poll` until it returns `Some`, for at most `deadline`.
///
/// # Errors
/// A message naming the deadline when `f` never returned `Some`.
pub fn wait_for<T>(
    deadline: Duration,
    poll: Duration,
    mut f: impl FnMut() -> Option<T>,
) -> Result<T, String> {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return Ok(v);
        }
        let elapsed = start.elapsed();
        if elapsed >= deadline {
            return Err(format!("condition not met within {deadline:?}"));
        }
        std::thread::sleep(poll.min(deadline.saturating_sub(elapsed)));
    }
}

/// A number unique in this process (namespace and file names).
fn unique() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// `program args…` as one line, for error messages.
fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// Runs `cmd` to completion; an error names the command, its status and its output.
fn run(cmd: &mut Command) -> io::Result<Output> {
    let what = describe(cmd);
    let out = cmd
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| io::Error::new(e.kind(), format!("{what}: cannot run: {e}")))?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(io::Error::other(format!(
            "{what}: {}; stdout: {:?}; stderr: {:?}",
            out.status,
            String::from_utf8_lossy(&out.stdout).trim_end(),
            String::from_utf8_lossy(&out.stderr).trim_end()
        )))
    }
}
