//! lldpad with the fakedcbnl shim, and lldptool.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::netns::{Namespaces, PEER_IF};
use super::parse::{App, NeighborView, ShimSet, parse_lldptool, parse_shim_log, tsa_name};
use super::{run, unique, wait_for};

/// The shim's source, embedded so that the library can build it wherever it runs.
const SHIM_SOURCE: &str = include_str!("../../interop/fakedcbnl.c");

/// The LD_PRELOAD shim `tests/interop/fakedcbnl.c`.
pub struct Shim;

impl Shim {
    /// `target/interop` of this workspace (or of `CARGO_TARGET_DIR`).
    #[must_use]
    pub fn default_dir() -> PathBuf {
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/interop"),
            |t| PathBuf::from(t).join("interop"),
        )
    }

    /// Compiles the shim with gcc into `out_dir/fakedcbnl.so` (created if needed) and returns
    /// its absolute path. Safe to call concurrently: each call compiles to a file of its own and
    /// renames it into place.
    ///
    /// # Errors
    /// Writing the source or gcc failing (with gcc's diagnostics).
    pub fn build(out_dir: &Path) -> io::Result<PathBuf> {
        fs::create_dir_all(out_dir)
            .map_err(|e| io::Error::new(e.kind(), format!("create {}: {e}", out_dir.display())))?;
        let out_dir = out_dir.canonicalize()?;
        let tag = format!("{}-{}", std::process::id(), unique());
        let src = out_dir.join(format!("fakedcbnl-{tag}.c"));
        let tmp = out_dir.join(format!("fakedcbnl-{tag}.so"));
        let so = out_dir.join("fakedcbnl.so");
        fs::write(&src, SHIM_SOURCE)
            .map_err(|e| io::Error::new(e.kind(), format!("write {}: {e}", src.display())))?;
        let built = run(Command::new("gcc")
            .args(["-shared", "-fPIC", "-O2", "-Wall", "-o"])
            .arg(&tmp)
            .arg(&src)
            .arg("-ldl"));
        let _ = fs::remove_file(&src);
        if let Err(e) = built {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        fs::rename(&tmp, &so).map_err(|e| {
            let _ = fs::remove_file(&tmp);
            io::Error::new(e.kind(), format!("rename to {}: {e}", so.display()))
        })?;
        Ok(so)
    }
}

/// An ETS table set as lldptool takes it (`up2tc`, `tcbw`, `tsa`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PeerEts {
    /// Priority -> TC.
    pub prio_tc: [u8; 8],
    /// TC -> percent.
    pub tc_bw: [u8; 8],
    /// TC -> TSA (`TSA_*`).
    pub tsa: [u8; 8],
}

impl PeerEts {
    fn args(&self) -> [String; 3] {
        let join = |f: &dyn Fn(usize) -> String| (0..8).map(f).collect::<Vec<_>>().join(",");
        [
            format!(
                "tsa={}",
                join(&|i| format!("{i}:{}", tsa_name(self.tsa.get(i).copied().unwrap_or(0))))
            ),
            format!(
                "up2tc={}",
                join(&|i| format!("{i}:{}", self.prio_tc.get(i).copied().unwrap_or(0)))
            ),
            format!(
                "tcbw={}",
                join(&|i| self.tc_bw.get(i).copied().unwrap_or(0).to_string())
            ),
        ]
    }
}

/// lldpad's 802.1Qaz configuration (what [`Lldpad::configure`] sets).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PeerConfig {
    /// The ETS Configuration Willing bit.
    pub ets_willing: bool,
    /// ETS Configuration.
    pub ets: PeerEts,
    /// ETS Recommendation (`None`: not transmitted).
    pub ets_rec: Option<PeerEts>,
    /// The PFC Willing bit.
    pub pfc_willing: bool,
    /// Bit p: PFC on priority p.
    pub pfc_enabled: u8,
    /// APP entries to add (lldpad advertises them once "pending" clears, dcbx-peer.md §9).
    pub apps: Vec<App>,
}

impl PeerConfig {
    /// The configuration of dcbx-peer.md §5: not willing; ETS TC p for priority p, TCs 0-4 ETS
    /// 10/10/20/30/30, 5-7 strict; Recommendation 20/10/10/30/30; PFC on 3 and 4; APP iSCSI
    /// (4,TCP 3260), SMB (3,TCP 445), RoCE (3,EtherType 0x8915), RoCEv2 (3,UDP 4791), DSCP 26->3.
    #[must_use]
    pub fn spec_example() -> Self {
        let tsa = [2, 2, 2, 2, 2, 0, 0, 0];
        let prio_tc = [0, 1, 2, 3, 4, 5, 6, 7];
        Self {
            ets_willing: false,
            ets: PeerEts {
                prio_tc,
                tc_bw: [10, 10, 20, 30, 30, 0, 0, 0],
                tsa,
            },
            ets_rec: Some(PeerEts {
                prio_tc,
                tc_bw: [20, 10, 10, 30, 30, 0, 0, 0],
                tsa,
            }),
            pfc_willing: false,
            pfc_enabled: 0x18,
            apps: vec![
                App::new(4, 2, 3260),
                App::new(3, 2, 445),
                App::new(3, 1, 0x8915),
                App::new(3, 3, 4791),
                App::new(3, 5, 26),
            ],
        }
    }
}

/// lldpad running on `veth-peer` with the shim, in a private `/dev/shm` and IPC namespace.
#[derive(Debug)]
pub struct Lldpad {
    child: Option<Child>,
    peer_ns: String,
    dir: PathBuf,
    log: PathBuf,
}

/// How long lldpad gets to open its control socket.
const READY_TIMEOUT: Duration = Duration::from_secs(5);
/// How long lldpad gets to exit after SIGTERM before SIGKILL.
const STOP_TIMEOUT: Duration = Duration::from_secs(3);

impl Lldpad {
    /// Starts lldpad in `ns.peer()` (dcbx-peer.md §4) with `shim` (from [`Shim::build`])
    /// preloaded for `veth-peer`, a private config file and its log in a temporary directory;
    /// returns once its control socket answers.
    ///
    /// # Errors
    /// Spawning failed, lldpad exited, or its control socket did not answer within 5 s (with
    /// the end of its log).
    pub fn start(ns: &Namespaces, shim: &Path) -> io::Result<Self> {
        let dir = std::env::temp_dir().join(format!(
            "dcbndk-interop-{}-{}",
            std::process::id(),
            unique()
        ));
        fs::create_dir_all(&dir)
            .map_err(|e| io::Error::new(e.kind(), format!("create {}: {e}", dir.display())))?;
        let log = dir.join("lldpad.log");
        let mut me = Self {
            child: None,
            peer_ns: ns.peer().to_owned(),
            dir,
            log,
        };
        let shim = shim
            .canonicalize()
            .map_err(|e| io::Error::new(e.kind(), format!("shim {}: {e}", shim.display())))?;
        let logfile = fs::File::create(&me.log)?;
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", ns.peer()])
            .args(["unshare", "--mount", "--propagation", "private", "--ipc"])
            .args([
                "sh",
                "-c",
                "mount -t tmpfs -o size=1m lldpad-shm /dev/shm && exec \"$@\"",
                "sh",
                "env",
            ])
            .arg(format!("LD_PRELOAD={}", shim.display()))
            .arg(format!("FAKEDCBNL_IFACES={PEER_IF}"))
            .arg("FAKEDCBNL_DEBUG=1")
            .args(["stdbuf", "-oL", "-eL", "lldpad", "-V", "7", "-p", "-f"])
            .arg(me.dir.join("lldpad.conf"))
            .stdin(Stdio::null())
            .stdout(logfile.try_clone()?)
            .stderr(logfile);
        let what = super::describe(&cmd);
        // Every wrapper exec()s: the child's pid is lldpad's.
        let child = cmd
            .spawn()
            .map_err(|e| io::Error::new(e.kind(), format!("{what}: cannot run: {e}")))?;
        me.child = Some(child);
        me.wait_ready()?;
        Ok(me)
    }

    fn wait_ready(&mut self) -> io::Result<()> {
        let start = Instant::now();
        loop {
            if let Some(child) = self.child.as_mut()
                && let Some(status) = child.try_wait()?
            {
                self.child = None;
                return Err(io::Error::other(format!(
                    "lldpad exited ({status}) before its control socket answered; log tail:\n{}",
                    self.log_tail(30)
                )));
            }
            if self.lldptool(&["-p"]).is_ok() {
                return Ok(());
            }
            if start.elapsed() >= READY_TIMEOUT {
                return Err(io::Error::other(format!(
                    "lldpad's control socket did not answer within {READY_TIMEOUT:?}; log \
                     tail:\n{}",
                    self.log_tail(30)
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// lldpad's pid (`None` once stopped).
    #[must_use]
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// lldpad's log (its stdout and stderr: `-V 7` messages and the shim's lines).
    #[must_use]
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// The log's text.
    ///
    /// # Errors
    /// Reading the file.
    pub fn log(&self) -> io::Result<String> {
        fs::read(&self.log)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| io::Error::new(e.kind(), format!("read {}: {e}", self.log.display())))
    }

    fn log_tail(&self, lines: usize) -> String {
        let log = self.log().unwrap_or_default();
        let all: Vec<&str> = log.lines().collect();
        all.get(all.len().saturating_sub(lines)..)
            .unwrap_or_default()
            .join("\n")
    }

    /// Runs `ip netns exec <peer> lldptool ARGS…` (the control socket belongs to the network
    /// namespace) and returns its stdout.
    ///
    /// # Errors
    /// lldptool failing (the command, its status and its output).
    pub fn lldptool(&self, args: &[&str]) -> io::Result<String> {
        let out = run(Command::new("ip")
            .args(["netns", "exec", &self.peer_ns, "lldptool"])
            .args(args))?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Configures lldpad with the lldptool commands of dcbx-peer.md §5: adminStatus rxtx,
    /// ETS-CFG, ETS-REC, PFC, the APP entries (added to any already there) and enableTx=yes
    /// for each.
    ///
    /// # Errors
    /// The first lldptool command that failed.
    pub fn configure(&self, cfg: &PeerConfig) -> io::Result<()> {
        let yes_no = |b: bool| if b { "yes" } else { "no" };
        self.lldptool(&["-L", "-i", PEER_IF, "adminStatus=rxtx"])?;
        let [tsa, up2tc, tcbw] = cfg.ets.args();
        let willing = format!("willing={}", yes_no(cfg.ets_willing));
        self.lldptool(&[
            "-T",
            "-i",
            PEER_IF,
            "-V",
            "ETS-CFG",
            "enableTx=yes",
            &willing,
            &tsa,
            &up2tc,
            &tcbw,
        ])?;
        if let Some(rec) = &cfg.ets_rec {
            let [tsa, up2tc, tcbw] = rec.args();
            self.lldptool(&[
                "-T",
                "-i",
                PEER_IF,
                "-V",
                "ETS-REC",
                "enableTx=yes",
                &tsa,
                &up2tc,
                &tcbw,
            ])?;
        } else {
            self.lldptool(&["-T", "-i", PEER_IF, "-V", "ETS-REC", "enableTx=no"])?;
        }
        let prios: Vec<String> = (0..8u8)
            .filter(|p| cfg.pfc_enabled & (1 << p) != 0)
            .map(|p| p.to_string())
            .collect();
        let enabled = if prios.is_empty() {
            "enabled=none".to_owned()
        } else {
            format!("enabled={}", prios.join(","))
        };
        let willing = format!("willing={}", yes_no(cfg.pfc_willing));
        self.lldptool(&[
            "-T",
            "-i",
            PEER_IF,
            "-V",
            "PFC",
            "enableTx=yes",
            &willing,
            &enabled,
        ])?;
        for a in &cfg.apps {
            let app = format!("app={},{},{}", a.priority, a.selector, a.protocol);
            self.lldptool(&["-T", "-i", PEER_IF, "-V", "APP", &app])?;
        }
        self.lldptool(&["-T", "-i", PEER_IF, "-V", "APP", "enableTx=yes"])?;
        Ok(())
    }

    /// What lldpad holds about its neighbour on `veth-peer` (`lldptool -t -n -i veth-peer`):
    /// the TLVs of the sim's last LLDPDU. Empty while there is none.
    ///
    /// # Errors
    /// lldptool failing or printing something that does not parse.
    pub fn neighbor(&self) -> io::Result<NeighborView> {
        let text = self.lldptool(&["-t", "-n", "-i", PEER_IF])?;
        parse_lldptool(&text).map_err(io::Error::other)
    }

    /// The TLVs lldpad built for its own LLDPDU (`lldptool -t -i veth-peer`), as of its last
    /// transmission.
    ///
    /// # Errors
    /// lldptool failing or printing something that does not parse.
    pub fn local(&self) -> io::Result<NeighborView> {
        let text = self.lldptool(&["-t", "-i", PEER_IF])?;
        parse_lldptool(&text).map_err(io::Error::other)
    }

    /// Polls [`Lldpad::neighbor`] every 20 ms until `accept` holds, for at most `deadline`.
    ///
    /// # Errors
    /// The deadline passed (with the last view or error).
    pub fn wait_neighbor(
        &self,
        deadline: Duration,
        mut accept: impl FnMut(&NeighborView) -> bool,
    ) -> io::Result<NeighborView> {
        let mut last = String::from("nothing read");
        wait_for(deadline, Duration::from_millis(20), || {
            match self.neighbor() {
                Ok(v) if accept(&v) => return Some(v),
                Ok(v) => last = format!("{v:?}"),
                Err(e) => last = e.to_string(),
            }
            None
        })
        .map_err(|e| io::Error::other(format!("lldpad neighbour: {e}; last: {last}")))
    }

    /// The dcbnl sets lldpad made on the fake NIC, in order, from the shim's log lines.
    ///
    /// # Errors
    /// Reading the log, or a shim line that does not parse.
    pub fn shim_sets(&self) -> io::Result<Vec<ShimSet>> {
        parse_shim_log(&self.log()?, PEER_IF).map_err(io::Error::other)
    }

    /// Polls [`Lldpad::shim_sets`] every 50 ms until `accept` holds, for at most `deadline`.
    ///
    /// # Errors
    /// The deadline passed.
    pub fn wait_shim(
        &self,
        deadline: Duration,
        mut accept: impl FnMut(&[ShimSet]) -> bool,
    ) -> io::Result<Vec<ShimSet>> {
        wait_for(deadline, Duration::from_millis(50), || {
            self.shim_sets().ok().filter(|s| accept(s))
        })
        .map_err(|e| io::Error::other(format!("shim sets: {e}; log tail:\n{}", self.log_tail(20))))
    }

    /// Stops lldpad: SIGTERM to its pid, at most 3 s, then SIGKILL. Idempotent.
    ///
    /// # Errors
    /// Waiting for the process failed.
    pub fn stop(&mut self) -> io::Result<()> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        if child.try_wait()?.is_some() {
            return Ok(());
        }
        if let Ok(pid) = libc::pid_t::try_from(child.id()) {
            // SAFETY: kill has no memory preconditions; `pid` is our own unreaped child, so it
            // cannot have been reused.
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
        let start = Instant::now();
        while start.elapsed() < STOP_TIMEOUT {
            if child.try_wait()?.is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        child.kill()?;
        child.wait().map(|_| ())
    }
}

impl Drop for Lldpad {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            eprintln!("interop: stopping lldpad: {e}");
        }
        if std::env::var("DCBNDK_INTEROP_KEEP").as_deref() == Ok("1") {
            eprintln!("interop: kept {}", self.dir.display());
        } else {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}
