//! The two network namespaces and the veth between them.

use std::io;
use std::process::Command;

use super::{run, unique};

/// The peer's (lldpad's) end of the veth.
pub const PEER_IF: &str = "veth-peer";
/// The simulated adapter's end of the veth.
pub const SIM_IF: &str = "veth-sim";
/// `veth-peer`'s MAC address (the lower one: it wins the 802.1Qaz willing tie-break).
pub const PEER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
/// `veth-sim`'s MAC address.
pub const SIM_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];

/// The prefixes of the namespace names (`<prefix><pid>-<n>`).
const PEER_PREFIX: &str = "dcbx-peer-";
const SIM_PREFIX: &str = "dcbx-sim-";

fn mac_string(mac: [u8; 6]) -> String {
    mac.map(|b| format!("{b:02x}")).join(":")
}

/// Two network namespaces joined by a veth: `veth-peer` (MAC 02:00:00:00:00:01) in
/// [`Namespaces::peer`] and `veth-sim` (02:00:00:00:00:02) in [`Namespaces::sim`]; loopback and
/// both ends up, IPv6 off (no neighbour discovery noise on the wire). Dropping it deletes both.
#[derive(Debug)]
pub struct Namespaces {
    peer: String,
    sim: String,
    live: bool,
}

impl Namespaces {
    /// Creates the namespaces (names unique to this process and call) and the veth.
    ///
    /// # Errors
    /// The `ip` command that failed; whatever was created is deleted again.
    pub fn create() -> io::Result<Self> {
        let n = unique();
        let pid = std::process::id();
        let ns = Self {
            peer: format!("{PEER_PREFIX}{pid}-{n}"),
            sim: format!("{SIM_PREFIX}{pid}-{n}"),
            live: true,
        };
        // On error `ns` is dropped, which deletes what exists.
        run(Command::new("ip").args(["netns", "add", &ns.peer]))?;
        run(Command::new("ip").args(["netns", "add", &ns.sim]))?;
        run(Command::new("ip").args([
            "link",
            "add",
            PEER_IF,
            "netns",
            &ns.peer,
            "address",
            &mac_string(PEER_MAC),
            "type",
            "veth",
            "peer",
            "name",
            SIM_IF,
            "netns",
            &ns.sim,
            "address",
            &mac_string(SIM_MAC),
        ]))?;
        for (name, ifname) in [(&ns.peer, PEER_IF), (&ns.sim, SIM_IF)] {
            // IPv6 off before the links come up: no router/neighbour solicitations on the veth.
            run(Command::new("ip").args([
                "netns",
                "exec",
                name,
                "sysctl",
                "-qw",
                "net.ipv6.conf.all.disable_ipv6=1",
                "net.ipv6.conf.default.disable_ipv6=1",
            ]))?;
            run(Command::new("ip").args(["-n", name, "link", "set", "lo", "up"]))?;
            run(Command::new("ip").args(["-n", name, "link", "set", ifname, "up"]))?;
        }
        Ok(ns)
    }

    /// The namespace of lldpad and `veth-peer`.
    #[must_use]
    pub fn peer(&self) -> &str {
        &self.peer
    }

    /// The namespace of the simulated adapter's `veth-sim`.
    #[must_use]
    pub fn sim(&self) -> &str {
        &self.sim
    }

    /// Deletes both namespaces (and with them the veth). Idempotent. A namespace in which a
    /// process still runs (lldpad) lives on until that process ends.
    ///
    /// # Errors
    /// The `ip netns del` that failed (a namespace already gone is not an error).
    pub fn teardown(&mut self) -> io::Result<()> {
        if !self.live {
            return Ok(());
        }
        self.live = false;
        let mut first_err = None;
        for name in [&self.peer, &self.sim] {
            if let Err(e) = delete_netns(name) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Deletes the harness namespaces whose creating process is gone (a run that aborted
    /// before its teardown), after killing what still runs in them (its lldpad). Returns the
    /// names deleted.
    ///
    /// # Errors
    /// `ip netns list` failing.
    pub fn reap_stale() -> io::Result<Vec<String>> {
        let out = run(Command::new("ip").args(["netns", "list"]))?;
        let mut reaped = Vec::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let Some(name) = line.split_whitespace().next() else {
                continue;
            };
            let Some(rest) = name
                .strip_prefix(PEER_PREFIX)
                .or_else(|| name.strip_prefix(SIM_PREFIX))
            else {
                continue;
            };
            let Some(pid) = rest
                .split('-')
                .next()
                .and_then(|p| p.parse::<libc::pid_t>().ok())
            else {
                continue;
            };
            if process_alive(pid) {
                continue;
            }
            if let Ok(pids) = run(Command::new("ip").args(["netns", "pids", name])) {
                for p in String::from_utf8_lossy(&pids.stdout).split_whitespace() {
                    if let Ok(p) = p.parse::<libc::pid_t>() {
                        // SAFETY: kill has no memory preconditions; `p` runs in a namespace of
                        // this harness whose creator is dead, i.e. a leftover of ours.
                        unsafe { libc::kill(p, libc::SIGKILL) };
                    }
                }
            }
            if delete_netns(name).is_ok() {
                reaped.push(name.to_owned());
            }
        }
        Ok(reaped)
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            eprintln!("interop: namespace teardown: {e}");
        }
    }
}

fn process_alive(pid: libc::pid_t) -> bool {
    // SAFETY: kill with signal 0 only checks for the process; no memory is involved.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

fn delete_netns(name: &str) -> io::Result<()> {
    if !std::path::Path::new("/run/netns").join(name).exists() {
        return Ok(());
    }
    run(Command::new("ip").args(["netns", "del", name])).map(|_| ())
}
