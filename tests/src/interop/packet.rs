//! Raw Ethernet frames on `veth-sim`: what the simulated adapter puts on and takes off the wire.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use super::netns::{Namespaces, SIM_IF};

/// The LLDP EtherType.
const ETHERTYPE_LLDP: u16 = 0x88CC;
/// The LLDP nearest-bridge group address.
const NEAREST_BRIDGE: [u8; 6] = [0x01, 0x80, 0xC2, 0x00, 0x00, 0x0E];

/// `dst | src | ethertype | payload`.
#[must_use]
pub fn ethernet_frame(dst: [u8; 6], src: [u8; 6], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(payload.len().saturating_add(14));
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// The LLDPDU of an LLDP frame (the bytes after the 14-byte header; an untagged frame with
/// EtherType 0x88CC), or `None`.
#[must_use]
pub fn lldpdu_payload(frame: &[u8]) -> Option<&[u8]> {
    let ethertype = frame.get(12..14)?;
    if ethertype != ETHERTYPE_LLDP.to_be_bytes() {
        return None;
    }
    frame.get(14..)
}

/// An `AF_PACKET`/`SOCK_RAW`/`ETH_P_ALL` socket bound to `veth-sim` in the sim namespace.
#[derive(Debug)]
pub struct PacketSocket {
    fd: OwnedFd,
    ifindex: i32,
}

fn os_err(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

fn socklen<T>() -> libc::socklen_t {
    libc::socklen_t::try_from(size_of::<T>()).unwrap_or(libc::socklen_t::MAX)
}

impl PacketSocket {
    /// Opens the socket inside `ns.sim()` (a socket keeps the namespace it was created in, so a
    /// short-lived thread enters the namespace to create it), bound to `veth-sim` and member of
    /// the LLDP group 01:80:c2:00:00:0e.
    ///
    /// # Errors
    /// The system call that failed.
    pub fn open(ns: &Namespaces) -> io::Result<Self> {
        let path = std::path::Path::new("/run/netns").join(ns.sim());
        std::thread::scope(|s| {
            s.spawn(|| Self::open_here(&path))
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("packet socket thread panicked")))
        })
    }

    /// Enters the namespace at `path` (this thread only) and opens the socket there.
    fn open_here(path: &std::path::Path) -> io::Result<Self> {
        let nsfile = std::fs::File::open(path)
            .map_err(|e| io::Error::new(e.kind(), format!("open {}: {e}", path.display())))?;
        // SAFETY: setns on a valid namespace fd; it changes only this (scoped, short-lived)
        // thread's network namespace.
        let r = unsafe { libc::setns(nsfile.as_raw_fd(), libc::CLONE_NEWNET) };
        if r != 0 {
            return Err(os_err(&format!("setns {}", path.display())));
        }
        let proto = i32::from((libc::ETH_P_ALL as u16).to_be());
        // SAFETY: socket has no memory preconditions.
        let raw =
            unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, proto) };
        if raw < 0 {
            return Err(os_err("socket(AF_PACKET, SOCK_RAW, ETH_P_ALL)"));
        }
        // SAFETY: `raw` is a fresh descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let name = std::ffi::CString::new(SIM_IF).map_err(io::Error::other)?;
        // SAFETY: `name` is a NUL-terminated string that outlives the call.
        let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
        let ifindex = i32::try_from(ifindex)
            .ok()
            .filter(|&i| i > 0)
            .ok_or_else(|| os_err(&format!("if_nametoindex({SIM_IF})")))?;
        // SAFETY: sockaddr_ll is plain data; all-zero is a valid value.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        sll.sll_ifindex = ifindex;
        // SAFETY: `sll` is a valid sockaddr_ll of the length passed.
        let r = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                std::ptr::from_ref(&sll).cast(),
                socklen::<libc::sockaddr_ll>(),
            )
        };
        if r != 0 {
            return Err(os_err(&format!("bind AF_PACKET to {SIM_IF}")));
        }
        // SAFETY: packet_mreq is plain data; all-zero is a valid value.
        let mut mreq: libc::packet_mreq = unsafe { std::mem::zeroed() };
        mreq.mr_ifindex = ifindex;
        mreq.mr_type = libc::PACKET_MR_MULTICAST as u16;
        mreq.mr_alen = 6;
        if let Some(a) = mreq.mr_address.get_mut(..6) {
            a.copy_from_slice(&NEAREST_BRIDGE);
        }
        // SAFETY: `mreq` is a valid packet_mreq of the length passed.
        let r = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_ADD_MEMBERSHIP,
                std::ptr::from_ref(&mreq).cast(),
                socklen::<libc::packet_mreq>(),
            )
        };
        if r != 0 {
            return Err(os_err("PACKET_ADD_MEMBERSHIP 01:80:c2:00:00:0e"));
        }
        Ok(Self { fd, ifindex })
    }

    /// Sends one whole Ethernet frame (destination, source, EtherType, payload) on `veth-sim`.
    ///
    /// # Errors
    /// The `send` that failed or sent less than the frame.
    pub fn send(&self, frame: &[u8]) -> io::Result<()> {
        // SAFETY: `frame` is valid for reads of its length during the call.
        let n = unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
        if n < 0 {
            return Err(os_err(&format!("send {} bytes on {SIM_IF}", frame.len())));
        }
        if usize::try_from(n).ok() != Some(frame.len()) {
            return Err(io::Error::other(format!(
                "send on {SIM_IF}: {n} of {} bytes",
                frame.len()
            )));
        }
        Ok(())
    }

    /// The next frame that arrived on `veth-sim` (frames this socket or anything else in the
    /// sim namespace sent are skipped), waiting at most `timeout`.
    #[must_use]
    pub fn recv(&self, timeout: Duration) -> Option<Vec<u8>> {
        self.recv_matching(timeout, |_| true)
    }

    /// The next incoming LLDP frame (whole, with its Ethernet header), waiting at most
    /// `timeout`; use [`lldpdu_payload`] for the LLDPDU.
    #[must_use]
    pub fn recv_lldpdu(&self, timeout: Duration) -> Option<Vec<u8>> {
        self.recv_matching(timeout, |f| lldpdu_payload(f).is_some())
    }

    /// The next incoming frame for which `accept` holds, waiting at most `timeout`.
    pub fn recv_matching(
        &self,
        timeout: Duration,
        mut accept: impl FnMut(&[u8]) -> bool,
    ) -> Option<Vec<u8>> {
        let deadline = Instant::now().checked_add(timeout)?;
        let mut buf = vec![0u8; 65536];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let ms = i32::try_from(left.as_millis()).unwrap_or(i32::MAX);
            let mut pfd = libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: `pfd` is one valid pollfd.
            let r = unsafe { libc::poll(&mut pfd, 1, ms) };
            if r < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            if r <= 0 {
                return None;
            }
            // SAFETY: sockaddr_ll is plain data; all-zero is a valid value.
            let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut fromlen = socklen::<libc::sockaddr_ll>();
            // SAFETY: `buf` is writable for its length, `from`/`fromlen` describe a valid
            // sockaddr_ll buffer.
            let n = unsafe {
                libc::recvfrom(
                    self.fd.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    libc::MSG_DONTWAIT,
                    std::ptr::from_mut(&mut from).cast(),
                    &mut fromlen,
                )
            };
            let Ok(n) = usize::try_from(n) else {
                if Instant::now() >= deadline {
                    return None;
                }
                continue;
            };
            let frame = buf.get(..n)?;
            if from.sll_pkttype != libc::PACKET_OUTGOING
                && from.sll_ifindex == self.ifindex
                && accept(frame)
            {
                return Some(frame.to_vec());
            }
            if Instant::now() >= deadline {
                return None;
            }
        }
    }

    /// Discards every frame already queued.
    pub fn drain(&self) {
        let mut buf = [0u8; 2048];
        loop {
            // SAFETY: `buf` is writable for its length.
            let n = unsafe {
                libc::recv(
                    self.fd.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    libc::MSG_DONTWAIT | libc::MSG_TRUNC,
                )
            };
            if n < 0 {
                return;
            }
        }
    }
}
