//! The egress classifier (issue 9): from a parsed frame and the NBL's out-of-band 802.1Q info to an
//! 802.1p priority, a traffic class and what to do with the frame's 802.1Q tag.
//!
//! A [`Compiled`] table is built once from the operational parameter set (spec §4.1: what the
//! NIC applies to egress) whenever that set changes, and is immutable afterwards; the per-packet
//! [`Compiled::classify_header`] reads the frame's facts in one pass (`super::scan`) and does at
//! most a few lookups in small hash tables. [`Compiled::classify`] gives the same answer from the
//! reference parse (`Frame::parse`); the tests and the fuzz target hold the two equal.
//!
//! ## Decisions (the spec leaves these open)
//!
//! **Priority precedence** — spec §1.4 defines each condition but gives no order between them,
//! only that DEFAULT applies to "every egress packet that matches no other element". The order
//! is issue 9's (EtherType, TCP, UDP, TCP-or-UDP port, NetDirect port, then DEFAULT), after the
//! OS's own choice; first match wins:
//!
//! 1. [`Rule::OsSupplied`]: the priority in the NBL's `Ieee8021QNetBufferListInfo`. The OS (the
//!    QoS packet scheduler, `New-NetQosPolicy`) set it for this very packet; classifications are
//!    meant for traffic the miniport originates or manages itself (spec §1.4, last rule).
//! 2. [`Rule::EtherType`]: the Ethernet II type or the SNAP protocol id (spec §1.4: "account for
//!    Ethernet II vs 802.3 framing"), after any 802.1Q tag. In practice these name non-IP
//!    protocols (FCoE 0x8906, RoCE 0x8915), which no port rule can match; an "IPv4 → p" element
//!    would take all IPv4 traffic, ports included, as the order says.
//! 3. [`Rule::Tcp`] / [`Rule::Udp`], then [`Rule::TcpOrUdp`]: destination port (spec §1.4).
//!    A protocol-specific element beats the TCP-or-UDP element of the same port.
//! 4. [`Rule::NetDirect`]: a NETDIRECT_PORT element.
//! 5. [`Rule::FrameTag`]: the PCP of an 802.1Q tag already in the frame data: the sender's own
//!    per-packet choice, above the catch-all DEFAULT, below configured classifications.
//! 6. [`Rule::Default`]: the first DEFAULT element.
//! 7. [`Rule::None`]: priority 0.
//!
//! Within one kind, the element that comes first in the array wins (a later element with the
//! same condition is shadowed). Elements with a priority above 7 or an unknown selector are
//! skipped (validation refuses them before they reach an operational set).
//!
//! **Which parameters count** — the operational set from `qos::state` already carries the §4.3
//! overrides (an unconfigured classification group is empty), and its flags are cleared, so the
//! table reads the groups as they are and ignores `flags`. With `*QOS` off (spec §4.4: DCB
//! disabled on the adapter) there is no set: no classification, every packet in TC 0, only the
//! OS-supplied priority or an in-frame tag give a priority.
//!
//! **NETDIRECT_PORT on the wire** — spec §1.4: the port is the *source* port on connections the
//! miniport accepted and the *destination* port on connections it initiated. The NDK engine
//! knows which; when it hands a frame of one of its connections it passes that port
//! ([`Meta::nd_port`]), and the element matches exactly that. Without it, the frame itself has to
//! say: with iWARP (`*NetworkDirectTechnology` 1) an ND connection is a TCP connection, so a TCP
//! frame matches when its source *or* destination port is the element's (a frame does not say
//! which side initiated; the other side's port is ephemeral); with RoCEv2 (4) the UDP header is
//! always 4791 and carries no ND port, so every RoCEv2 or RoCE frame takes the *first*
//! NETDIRECT_PORT element (the usual configuration has one: SMB Direct, 445).
//!
//! **RDMA counting** — [`Decision::is_rdma`] holds for RoCEv2 (UDP destination 4791), RoCE
//! (EtherType 0x8915), a frame the NDK engine marked, and an iWARP frame matching a
//! NETDIRECT_PORT element, whatever rule set the priority.
//!
//! **Traffic class** — the operational `PriorityAssignmentTable` (spec §1.3); a TC id at or above
//! `NumTrafficClasses` (which validation refuses) falls back to TC 0.
//!
//! **Tagging** — spec §6.2's table gives, from `*QOS` and `*PriorityVLANTag`, whether priority
//! and VLAN tagging are on ([`TagPolicy::from_keywords`]). Then, for an egress frame:
//! - MAC Control (0x8808) and LLDP (0x88CC) frames are never tagged (802.1Q: a bridge never
//!   tags them; the PFC and DCBX frames the adapter sends must reach the peer's MAC untagged).
//! - With no tag in the frame: [`TagAction::Insert`] when priority tagging is on and a rule gave
//!   a priority (so DCB traffic reaches the peer priority-tagged, even with priority 0), or when
//!   VLAN tagging is on and the NBL has a VLAN id. PCP is the priority when priority tagging is on,
//!   else 0; VID is the NBL's when VLAN tagging is on, else 0. Otherwise [`TagAction::Leave`].
//! - With a tag in the frame: never a second tag. [`TagAction::Rewrite`] of the PCP when priority
//!   tagging is on and a rule above [`Rule::FrameTag`] chose another priority; the frame's VID
//!   is the sender's and stays. Otherwise leave it.
//! - On receive ([`Compiled::receive`]): with priority or VLAN tagging on, the tag is stripped
//!   (its values go to the NBL's out-of-band info, NDIS 6's rule that 802.1Q info travels out of
//!   band, [INFER] from the MacOptions of spec §4.4); with both off it is left in the data.

use super::frame::{
    ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_MAC_CONTROL, ETHERTYPE_VLAN, Frame, Status, VlanTag,
};
use super::scan::{self, Facts};
use crate::qos::params::{MAX_CLASSIFICATIONS, MAX_TCS, QosParameters, condition};
use crate::wire::bytes::array_at;

/// Which 802.1Q tagging the adapter does (spec §6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct TagPolicy {
    /// 802.1p priority tagging.
    pub priority: bool,
    /// VLAN tagging.
    pub vlan: bool,
}

impl TagPolicy {
    /// The effective tagging for `*QOS` and `*PriorityVLANTag` (spec §6.2's table): with QoS on
    /// priority tagging is always on. A `*PriorityVLANTag` outside 0..3 is taken as its default
    /// 3 (the keyword's documented default; the config layer warns about it).
    #[must_use]
    pub const fn from_keywords(qos_enabled: bool, priority_vlan_tag: u32) -> Self {
        let (priority, vlan) = match priority_vlan_tag {
            0 => (false, false),
            1 => (true, false),
            2 => (false, true),
            _ => (true, true),
        };
        Self {
            priority: priority || qos_enabled,
            vlan,
        }
    }
}

/// How NetworkDirect traffic looks on this adapter's wire (`*NetworkDirect`,
/// `*NetworkDirectTechnology`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum NetDirect {
    /// NDK disabled: only frames the NDK engine marks can match NETDIRECT_PORT.
    #[default]
    Disabled,
    /// iWARP: ND connections are TCP connections.
    Iwarp,
    /// RoCEv2: ND traffic is UDP to 4791.
    RoceV2,
}

impl NetDirect {
    /// From `*NetworkDirect` and the `NDK_RDMA_TECHNOLOGY` of `*NetworkDirectTechnology`
    /// (1 iWARP; anything else is the adapter's default, RoCEv2).
    #[must_use]
    pub const fn from_keywords(network_direct: bool, technology: u32) -> Self {
        match (network_direct, technology) {
            (false, _) => Self::Disabled,
            (true, 1) => Self::Iwarp,
            (true, _) => Self::RoceV2,
        }
    }
}

/// The per-packet facts that are not in the frame bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Meta {
    /// The 802.1p priority of the NBL's `Ieee8021QNetBufferListInfo`, when the OS set one.
    pub os_priority: Option<u8>,
    /// The VLAN id of the NBL's `Ieee8021QNetBufferListInfo` (0: none).
    pub vlan_id: u16,
    /// For a frame of an NDK connection: its NetworkDirect port (source port if the adapter
    /// accepted the connection, destination port if it initiated it; spec §1.4).
    pub nd_port: Option<u16>,
}

/// Which rule gave the priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Rule {
    /// The NBL's out-of-band priority.
    OsSupplied,
    /// A NETDIRECT_PORT element.
    NetDirect,
    /// A TCP_PORT element.
    Tcp,
    /// A UDP_PORT element.
    Udp,
    /// A TCP_OR_UDP_PORT element.
    TcpOrUdp,
    /// An ETHERTYPE element.
    EtherType,
    /// The PCP of the tag already in the frame.
    FrameTag,
    /// The DEFAULT element.
    Default,
    /// Nothing: priority 0.
    #[default]
    None,
}

/// What to do with the frame's 802.1Q tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum TagAction {
    /// Send (or indicate) the frame's bytes as they are.
    #[default]
    Leave,
    /// Insert a tag (TPID 0x8100, DEI 0) after the MAC addresses.
    Insert {
        /// Priority code point.
        pcp: u8,
        /// VLAN id.
        vid: u16,
    },
    /// Set the PCP of the tag the frame already has.
    Rewrite {
        /// Priority code point.
        pcp: u8,
    },
    /// Remove the frame's tag (receive side).
    Strip,
}

/// The classifier's answer for one egress frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Decision {
    /// The 802.1p priority, 0..7.
    pub priority: u8,
    /// The traffic class, 0..7 (below `NumTrafficClasses`).
    pub tc: u8,
    /// The rule that gave the priority.
    pub rule: Rule,
    /// What to do with the tag.
    pub tag: TagAction,
    /// RDMA traffic, for the RDMA counters.
    pub is_rdma: bool,
    /// How far the frame's headers could be read: anything but `Complete` is counted as a bad
    /// header (the frame is still sent, classified by what was read).
    pub frame: Status,
}

/// What an element gives a matching frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
struct Entry {
    priority: u8,
    /// The priority's traffic class, looked up when the table is compiled.
    tc: u8,
    rule: Rule,
}

/// The kinds of key in the one table of configured elements: a TCP or UDP destination port
/// under its IP protocol number (6, 17), an EtherType under 1 (ICMP's number: never a port
/// key), which makes it [`Facts::ethertype_key`]. Key 0 (kind 0) is never inserted: it stands
/// for a frame with neither ports nor an EtherType.
mod key {
    use super::super::frame::ip_protocol;

    /// `kind << 16 | value`.
    #[inline(always)]
    pub(super) const fn of(kind: u32, value: u16) -> u32 {
        kind << 16 | value as u32
    }

    pub(super) const TCP: u32 = ip_protocol::TCP as u32;
    pub(super) const UDP: u32 = ip_protocol::UDP as u32;
    pub(super) const ETHERTYPE: u32 = 1;
}

/// Keys a [`Table`] holds at most: every element of an operational set, a TCP_OR_UDP_PORT
/// element counting twice (a TCP and a UDP key).
const MAX_KEYS: usize = 2 * MAX_CLASSIFICATIONS;

/// Slots of a [`Table`]: twice the most keys it can hold, so that a lookup probes about once.
const SLOTS: usize = 2 * MAX_KEYS;

/// An open-addressing hash table from a key ([`key`]) to its first element: one or two probes
/// per packet where a binary search over 128 keys takes seven dependent steps. Keys are never
/// removed (the table is rebuilt with each operational set), so a probe sequence ends at the
/// first empty slot. Keys and entries are apart so that a probe reads one entry and compares
/// one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Table {
    keys: [u32; SLOTS],
    entries: [Option<Entry>; SLOTS],
    len: usize,
}

impl Default for Table {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl Table {
    /// A table without keys.
    const EMPTY: Self = Self {
        keys: [0; SLOTS],
        entries: [None; SLOTS],
        len: 0,
    };

    /// Empties the table where it is (no table-sized value on the stack).
    fn clear(&mut self) {
        self.keys.fill(0);
        self.entries.fill(None);
        self.len = 0;
    }

    /// The first slot of `key`'s probe sequence (Fibonacci hashing to 8 bits).
    #[inline(always)]
    fn home(key: u32) -> usize {
        let h = key.wrapping_mul(0x9E37_79B1) >> 24;
        usize::try_from(h).unwrap_or(0)
    }

    /// Adds `key` unless it is there already (an earlier element keeps it) or the table holds
    /// [`MAX_KEYS`] keys (it cannot: the operational set holds at most [`MAX_CLASSIFICATIONS`]
    /// elements in all, each at most two keys).
    fn insert(&mut self, key: u32, entry: Entry) {
        if self.len >= MAX_KEYS {
            return;
        }
        let home = Self::home(key);
        for i in 0..SLOTS {
            let at = home.wrapping_add(i) % SLOTS;
            let (Some(k), Some(slot)) = (self.keys.get_mut(at), self.entries.get_mut(at)) else {
                return;
            };
            match slot {
                Some(_) if *k == key => return,
                Some(_) => {}
                None => {
                    *k = key;
                    *slot = Some(entry);
                    self.len = self.len.saturating_add(1);
                    return;
                }
            }
        }
    }

    /// The entry of `key`. An empty table answers from its first probe, like a miss: no test
    /// of its length on the way.
    #[inline(always)]
    fn get(&self, key: u32) -> Option<Entry> {
        let mut at = Self::home(key);
        // At most half the slots are used, so the walk meets an empty slot long before SLOTS.
        for _ in 0..SLOTS {
            let entry = self.entries.get(at % SLOTS).copied().flatten()?;
            if self.keys.get(at % SLOTS).copied() == Some(key) {
                return Some(entry);
            }
            at = at.wrapping_add(1);
        }
        None
    }
}

/// The classification table compiled from one operational parameter set, immutable until the
/// next set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Compiled {
    qos: bool,
    tagging: TagPolicy,
    /// 7 with priority tagging, else 0: the PCP of an inserted tag is `priority & pcp_mask`.
    pcp_mask: u8,
    /// 0x0FFF with VLAN tagging, else 0: the VID of an inserted tag is `vlan_id & vid_mask`.
    vid_mask: u16,
    netdirect_mode: NetDirect,
    /// Priority -> TC; all zeros without QoS.
    prio_tc: [u8; MAX_TCS],
    /// The first DEFAULT element, or priority 0 by no rule.
    fallback: Entry,
    /// The ETHERTYPE, TCP_PORT, UDP_PORT and TCP_OR_UDP_PORT elements, by [`key`]: a frame
    /// with ports is looked up by its ports, any other by its EtherType (one probe sequence per
    /// packet).
    configured: Table,
    /// The ETHERTYPE elements for IPv4 and IPv6. They take every frame of their type, ports or
    /// not, so they come before the ports; in the usual configuration there are none, and
    /// `ip_by_type` (either is there) is the one test a packet pays for them.
    ipv4: Option<Entry>,
    ipv6: Option<Entry>,
    ip_by_type: bool,
    /// NETDIRECT_PORT elements by port.
    netdirect: Table,
    /// The first NETDIRECT_PORT element (for RoCE frames, which carry no ND port).
    first_netdirect: Option<Entry>,
}

impl Compiled {
    /// A table compiled from nothing: QoS off, no tagging, NDK disabled. The starting value of
    /// a table built in place with [`Compiled::rebuild`] (the shell copies it from the image into
    /// pool memory: a table is too large to build on a kernel stack).
    pub const EMPTY: Self = Self {
        qos: false,
        tagging: TagPolicy {
            priority: false,
            vlan: false,
        },
        pcp_mask: 0,
        vid_mask: 0,
        netdirect_mode: NetDirect::Disabled,
        prio_tc: [0; MAX_TCS],
        fallback: Entry {
            priority: 0,
            tc: 0,
            rule: Rule::None,
        },
        configured: Table::EMPTY,
        ipv4: None,
        ipv6: None,
        ip_by_type: false,
        netdirect: Table::EMPTY,
        first_netdirect: None,
    };

    /// Compiles `params` (the operational set; `None` when `*QOS` is off) with the adapter's
    /// tagging and NetworkDirect technology. See the module documentation for every rule.
    #[must_use]
    pub fn new(params: Option<&QosParameters>, tagging: TagPolicy, netdirect: NetDirect) -> Self {
        let mut c = Self::EMPTY;
        c.rebuild(params, tagging, netdirect);
        c
    }

    /// [`Compiled::new`] in place: every field of `self` is replaced, whatever it held, and no
    /// table-sized value is made on the stack.
    pub fn rebuild(
        &mut self,
        params: Option<&QosParameters>,
        tagging: TagPolicy,
        netdirect: NetDirect,
    ) {
        let c = self;
        c.qos = params.is_some();
        c.tagging = tagging;
        c.pcp_mask = if tagging.priority { 7 } else { 0 };
        c.vid_mask = if tagging.vlan { 0x0FFF } else { 0 };
        c.netdirect_mode = netdirect;
        c.prio_tc = [0; MAX_TCS];
        c.fallback = Entry {
            priority: 0,
            tc: 0,
            rule: Rule::None,
        };
        c.configured.clear();
        c.ipv4 = None;
        c.ipv6 = None;
        c.ip_by_type = false;
        c.netdirect.clear();
        c.first_netdirect = None;
        let Some(p) = params else {
            return;
        };
        for (slot, &tc) in c.prio_tc.iter_mut().zip(p.prio_tc.iter()) {
            // Spec §1.3: a priority maps to a TC id below NumTrafficClasses.
            *slot = if u32::from(tc) < p.num_tcs.min(8) {
                tc
            } else {
                0
            };
        }
        // A copy of the map: the entries are made while `c` is filled in.
        let prio_tc = c.prio_tc;
        let entry = |priority: u8, rule| Entry {
            priority,
            tc: prio_tc.get(usize::from(priority & 7)).copied().unwrap_or(0),
            rule,
        };
        let elements = p.classifications.as_slice();
        for e in elements.iter().filter(|e| e.priority <= 7) {
            let (f, prio) = (e.field, e.priority);
            let t = &mut c.configured;
            match e.selector {
                condition::DEFAULT if c.fallback.rule == Rule::None => {
                    c.fallback = entry(prio, Rule::Default);
                }
                condition::TCP_PORT => t.insert(key::of(key::TCP, f), entry(prio, Rule::Tcp)),
                condition::UDP_PORT => t.insert(key::of(key::UDP, f), entry(prio, Rule::Udp)),
                condition::ETHERTYPE => {
                    t.insert(key::of(key::ETHERTYPE, f), entry(prio, Rule::EtherType));
                }
                condition::NETDIRECT_PORT => {
                    c.netdirect
                        .insert(u32::from(f), entry(prio, Rule::NetDirect));
                    let _ = c
                        .first_netdirect
                        .get_or_insert(entry(prio, Rule::NetDirect));
                }
                _ => {}
            }
        }
        // After every protocol-specific element, so that those win for the same port.
        for e in elements.iter().filter(|e| e.priority <= 7) {
            if e.selector == condition::TCP_OR_UDP_PORT {
                let both = entry(e.priority, Rule::TcpOrUdp);
                c.configured.insert(key::of(key::TCP, e.field), both);
                c.configured.insert(key::of(key::UDP, e.field), both);
            }
        }
        c.ipv4 = c.configured.get(key::of(key::ETHERTYPE, ETHERTYPE_IPV4));
        c.ipv6 = c.configured.get(key::of(key::ETHERTYPE, ETHERTYPE_IPV6));
        c.ip_by_type = c.ipv4.is_some() || c.ipv6.is_some();
    }

    /// The traffic class of `priority` (taken modulo 8) in the operational set; 0 without QoS.
    #[inline(always)]
    #[must_use]
    pub fn tc_of(&self, priority: u8) -> u8 {
        self.prio_tc
            .get(usize::from(priority & 7))
            .copied()
            .unwrap_or(0)
    }

    /// The tagging this table applies.
    #[must_use]
    pub fn tagging(&self) -> TagPolicy {
        self.tagging
    }

    /// The NETDIRECT_PORT element matching the frame, if any (module documentation).
    #[inline(always)]
    fn netdirect_match(&self, f: &Facts, meta: &Meta, roce: bool) -> Option<Entry> {
        if let Some(port) = meta.nd_port {
            return self.netdirect.get(u32::from(port));
        }
        match self.netdirect_mode {
            NetDirect::Iwarp => f.tcp_ports().and_then(|(dst, src)| {
                self.netdirect
                    .get(u32::from(dst))
                    .or_else(|| self.netdirect.get(u32::from(src)))
            }),
            NetDirect::RoceV2 if roce => self.first_netdirect,
            _ => None,
        }
    }

    /// Classifies one egress frame from its reference parse (the data path calls
    /// [`Self::classify_header`], which gives the same answer faster).
    #[inline]
    #[must_use]
    pub fn classify(&self, f: &Frame, meta: &Meta) -> Decision {
        self.decide(&f.facts(), meta)
    }

    /// Classifies one egress frame from its leading bytes (the first [`HEADER_BYTES`] are all
    /// that is read): the data path's per-packet call, equal to
    /// `self.classify(&Frame::parse(header), meta)` on every input (`scan`'s tests and the
    /// `classify` fuzz target check it).
    ///
    /// [`HEADER_BYTES`]: super::frame::HEADER_BYTES
    #[inline(always)]
    #[must_use]
    pub fn classify_header(&self, header: &[u8], meta: &Meta) -> Decision {
        let mut f = Facts::default();
        match scan::scan_into(header, &mut f) {
            Some(()) => self.decide(&f, meta),
            None => self.classify_cut(header, meta),
        }
    }

    /// [`Self::classify_header`] for a frame whose headers end early: the reference, out of the
    /// per-packet code (a separate call keeps the scanned facts in registers).
    #[cold]
    #[inline(never)]
    fn classify_cut(&self, header: &[u8], meta: &Meta) -> Decision {
        self.classify(&Frame::parse(header), meta)
    }

    /// The decision from the frame's facts (module documentation). Without QoS every table is
    /// empty, `fallback` is "no rule" and `prio_tc` all zeros, so nothing here asks about QoS.
    #[inline(always)]
    fn decide(&self, f: &Facts, meta: &Meta) -> Decision {
        let roce = f.is_roce();
        // RDMA: RoCE, a frame the NDK engine marked, or one matching a NETDIRECT_PORT element.
        // Only with iWARP can the last hold without the first two (RoCEv2 matches only RoCE
        // frames), so only then is the element looked up for this alone.
        let mut is_rdma = roce | meta.nd_port.is_some();
        if self.netdirect_mode == NetDirect::Iwarp && !is_rdma {
            is_rdma = self.netdirect_match(f, meta, roce).is_some();
        }
        let chosen = if let Some(p) = meta.os_priority {
            let priority = p & 7;
            Entry {
                priority,
                tc: self.tc_of(priority),
                rule: Rule::OsSupplied,
            }
        } else if let Some(e) = self.configured(f) {
            e
        } else if let Some(e) = self.netdirect_match(f, meta, roce) {
            e
        } else if let Some(pcp) = f.tag_pcp() {
            Entry {
                priority: pcp,
                tc: self.tc_of(pcp),
                rule: Rule::FrameTag,
            }
        } else {
            self.fallback
        };
        let Entry { priority, tc, rule } = chosen;
        Decision {
            priority,
            tc,
            rule,
            tag: self.egress_tag(f, meta, priority, rule),
            is_rdma,
            frame: f.status(),
        }
    }

    /// EtherType, then TCP/UDP destination port (module documentation, items 2 and 3): the
    /// IPv4 and IPv6 EtherType elements first, then the ports of a frame that has them, else
    /// its EtherType. (Another EtherType element cannot match a frame with ports: those are
    /// IPv4 or IPv6.)
    #[inline(always)]
    fn configured(&self, f: &Facts) -> Option<Entry> {
        if self.ip_by_type {
            let by_type = if f.ethertype_is(ETHERTYPE_IPV4) {
                self.ipv4
            } else if f.ethertype_is(ETHERTYPE_IPV6) {
                self.ipv6
            } else {
                None
            };
            if by_type.is_some() {
                return by_type;
            }
        }
        let ports = f.port_key();
        let key = if ports != 0 { ports } else { f.ethertype_key() };
        self.configured.get(key)
    }

    /// The egress tag action (module documentation, "Tagging").
    #[inline(always)]
    fn egress_tag(&self, f: &Facts, meta: &Meta, priority: u8, rule: Rule) -> TagAction {
        let never = f.ethertype_is(ETHERTYPE_MAC_CONTROL) | f.ethertype_is(crate::lldp::ETHERTYPE);
        if never || !f.has_src() {
            return TagAction::Leave;
        }
        match f.tag_pcp() {
            Some(pcp) => {
                let chosen = !matches!(rule, Rule::FrameTag | Rule::Default | Rule::None);
                if self.tagging.priority && chosen && pcp != priority {
                    TagAction::Rewrite { pcp: priority }
                } else {
                    TagAction::Leave
                }
            }
            None => {
                let pcp_wanted = self.tagging.priority & (rule != Rule::None);
                let vid = meta.vlan_id & self.vid_mask;
                if pcp_wanted | (vid != 0) {
                    TagAction::Insert {
                        pcp: priority & self.pcp_mask,
                        vid,
                    }
                } else {
                    TagAction::Leave
                }
            }
        }
    }

    /// The receive-side tag action: [`TagAction::Strip`] when the frame has a tag and priority
    /// or VLAN tagging is on (module documentation); the stripped values are `frame.tag`.
    #[must_use]
    pub fn receive(&self, f: &Frame) -> TagAction {
        if f.tag.is_some() && (self.tagging.priority || self.tagging.vlan) {
            TagAction::Strip
        } else {
            TagAction::Leave
        }
    }
}

/// The 4 bytes of an inserted 802.1Q tag: TPID 0x8100, then the TCI (DEI 0).
#[inline(always)]
fn tag_bytes(pcp: u8, vid: u16) -> [u8; 4] {
    let tci = VlanTag {
        pcp,
        dei: false,
        vid,
    }
    .tci();
    let ([t0, t1], [c0, c1]) = (ETHERTYPE_VLAN.to_be_bytes(), tci.to_be_bytes());
    [t0, t1, c0, c1]
}

/// The TCI's first byte `hi` with its PCP set to `pcp` (DEI and the VID's top bits kept).
#[inline(always)]
fn with_pcp(hi: u8, pcp: u8) -> u8 {
    (hi & 0x1F) | ((pcp & 7) << 5)
}

/// The frame `b` has an 802.1Q tag after its MAC addresses.
#[inline(always)]
fn has_tag(b: &[u8]) -> bool {
    array_at::<2>(b, 12).map(u16::from_be_bytes) == Some(ETHERTYPE_VLAN)
}

/// Bytes a transmit buffer keeps free before the frame for [`tag_in_place`]: one 802.1Q tag.
pub const TAG_ROOM: usize = 4;

/// Applies `action` to the frame of `len` bytes that starts at [`TAG_ROOM`] in `buf` (the
/// transmit copy put it there), without moving the frame: an inserted tag takes the room in
/// front (the MAC addresses move 4 bytes down), a stripped one leaves 4 bytes of it (they move
/// 4 bytes up). Returns where the frame to send starts in `buf` and its length; the result is
/// the bytes [`apply_tag`] writes for the same frame and action (the `classify` fuzz target
/// checks it), at a cost that does not grow with the frame (issue 9: classification and
/// tagging per packet, with the copy that a real NIC's DMA makes left to the transmit path).
///
/// `None` (and `buf` unspecified) where [`apply_tag`] fails: the frame does not fit `buf`, is
/// shorter than the MAC addresses (Insert), or has no 802.1Q tag to rewrite or strip.
#[inline]
#[must_use]
pub fn tag_in_place(buf: &mut [u8], len: usize, action: TagAction) -> Option<(usize, usize)> {
    let end = TAG_ROOM.checked_add(len)?;
    if end > buf.len() {
        return None;
    }
    // The frame, as far as it is in `buf` (`end` is within it).
    let tagged = |buf: &[u8]| buf.get(TAG_ROOM..end).is_some_and(has_tag);
    match action {
        TagAction::Leave => Some((TAG_ROOM, len)),
        TagAction::Insert { pcp, vid } => {
            if len < 12 {
                return None;
            }
            buf.copy_within(TAG_ROOM..TAG_ROOM + 12, 0);
            buf.get_mut(12..16)?.copy_from_slice(&tag_bytes(pcp, vid));
            Some((0, len.checked_add(4)?))
        }
        TagAction::Rewrite { pcp } => {
            // The PCP byte is the tag's first, after the TPID: it needs 15 bytes of frame.
            if !tagged(buf) || len < 15 {
                return None;
            }
            let hi = buf.get_mut(TAG_ROOM + 14)?;
            *hi = with_pcp(*hi, pcp);
            Some((TAG_ROOM, len))
        }
        TagAction::Strip => {
            if !tagged(buf) || len < 16 {
                return None;
            }
            buf.copy_within(TAG_ROOM..TAG_ROOM + 12, TAG_ROOM + 4);
            Some((TAG_ROOM + 4, len.checked_sub(4)?))
        }
    }
}

/// Applies `action` to a frame's leading bytes `header`, writing the result at the start of
/// `out`; returns its length (`header.len()`, +4 for Insert, -4 for Strip). The bytes after
/// `header` in the frame follow unchanged.
///
/// `None` (and `out` unspecified) when `out` is too short, `header` is shorter than the MAC
/// addresses (Insert), or has no 802.1Q tag to rewrite or strip.
#[must_use]
pub fn apply_tag(header: &[u8], action: TagAction, out: &mut [u8]) -> Option<usize> {
    match action {
        TagAction::Leave => {
            out.get_mut(..header.len())?.copy_from_slice(header);
            Some(header.len())
        }
        TagAction::Insert { pcp, vid } => {
            let len = header.len().checked_add(4)?;
            let (macs, rest) = (header.get(..12)?, header.get(12..)?);
            let out = out.get_mut(..len)?;
            let (o_macs, o_rest) = out.split_at_mut_checked(12)?;
            o_macs.copy_from_slice(macs);
            let (o_tag, o_tail) = o_rest.split_at_mut_checked(4)?;
            o_tag.copy_from_slice(&tag_bytes(pcp, vid));
            o_tail.copy_from_slice(rest);
            Some(len)
        }
        TagAction::Rewrite { pcp } => {
            if !has_tag(header) {
                return None;
            }
            let out = out.get_mut(..header.len())?;
            out.copy_from_slice(header);
            let hi = out.get_mut(14)?;
            *hi = with_pcp(*hi, pcp);
            Some(header.len())
        }
        TagAction::Strip => {
            if !has_tag(header) {
                return None;
            }
            let len = header.len().checked_sub(4)?;
            let out = out.get_mut(..len)?;
            let (o_macs, o_rest) = out.split_at_mut_checked(12)?;
            o_macs.copy_from_slice(header.get(..12)?);
            o_rest.copy_from_slice(header.get(16..)?);
            Some(len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::frame::ROCEV2_UDP_PORT;
    use super::super::frame::{
        ETHERTYPE_FCOE, ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_ROCE, Layer, Status,
    };
    use super::*;
    use crate::qos::params::{Classification, Classifications};
    use std::vec::Vec;

    const MACS: [u8; 12] = [0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2];

    fn frame(tci: Option<u16>, ethertype: u16, payload: &[u8]) -> Vec<u8> {
        let mut v = Vec::from(MACS);
        if let Some(tci) = tci {
            v.extend_from_slice(&[0x81, 0x00]);
            v.extend_from_slice(&tci.to_be_bytes());
        }
        v.extend_from_slice(&ethertype.to_be_bytes());
        v.extend_from_slice(payload);
        v
    }

    /// IPv4 + TCP/UDP with the given destination and source ports.
    fn ip4(protocol: u8, src: u16, dst: u16) -> Vec<u8> {
        let mut v = std::vec![0u8; 40];
        v[0] = 0x45;
        v[9] = protocol;
        v[20..22].copy_from_slice(&src.to_be_bytes());
        v[22..24].copy_from_slice(&dst.to_be_bytes());
        v
    }

    fn ip6(protocol: u8, src: u16, dst: u16) -> Vec<u8> {
        let mut v = std::vec![0u8; 60];
        v[0] = 0x60;
        v[6] = protocol;
        v[40..42].copy_from_slice(&src.to_be_bytes());
        v[42..44].copy_from_slice(&dst.to_be_bytes());
        v
    }

    fn params(elements: &[(u16, u16, u8)]) -> QosParameters {
        let mut classifications = Classifications::default();
        for &(selector, field, priority) in elements {
            assert!(classifications.push(Classification {
                selector,
                field,
                priority
            }));
        }
        QosParameters {
            flags: 0,
            num_tcs: 4,
            prio_tc: [0, 0, 1, 1, 2, 2, 3, 3],
            tc_bw: [25; 8],
            tsa: [2; 8],
            pfc_enable: 0,
            classifications,
        }
    }

    const BOTH: TagPolicy = TagPolicy {
        priority: true,
        vlan: true,
    };

    #[test]
    fn a_table_rebuilt_in_place_equals_a_fresh_one() {
        let first = params(&[
            (TCP_PORT, 445, 3),
            (ETHERTYPE, 0x0800, 1),
            (NETDIRECT_PORT, 5445, 4),
            (DEFAULT, 0, 6),
        ]);
        let second = params(&[(UDP_PORT, 4791, 5)]);
        let mut c = Compiled::new(Some(&first), BOTH, NetDirect::RoceV2);
        c.rebuild(Some(&second), TagPolicy::default(), NetDirect::Iwarp);
        assert_eq!(
            c,
            Compiled::new(Some(&second), TagPolicy::default(), NetDirect::Iwarp)
        );
        c.rebuild(None, BOTH, NetDirect::Disabled);
        assert_eq!(c, Compiled::new(None, BOTH, NetDirect::Disabled));
    }

    fn compiled(elements: &[(u16, u16, u8)]) -> Compiled {
        Compiled::new(Some(&params(elements)), BOTH, NetDirect::RoceV2)
    }

    /// The reference decision, checked against the data path's fast one on the way.
    fn classify(c: &Compiled, bytes: &[u8], meta: Meta) -> Decision {
        let reference = c.classify(&Frame::parse(bytes), &meta);
        assert_eq!(c.classify_header(bytes, &meta), reference, "{bytes:02x?}");
        reference
    }

    use condition::{DEFAULT, ETHERTYPE, NETDIRECT_PORT, TCP_OR_UDP_PORT, TCP_PORT, UDP_PORT};

    #[test]
    fn tag_policy_follows_the_spec_table() {
        // spec §6.2: rows *QOS 0 and 1, columns *PriorityVLANTag 0..3.
        let expect = [
            (
                false,
                [(false, false), (true, false), (false, true), (true, true)],
            ),
            (
                true,
                [(true, false), (true, false), (true, true), (true, true)],
            ),
        ];
        for (qos, row) in expect {
            for (pvt, (priority, vlan)) in row.into_iter().enumerate() {
                let p = TagPolicy::from_keywords(qos, pvt as u32);
                assert_eq!(
                    (p.priority, p.vlan),
                    (priority, vlan),
                    "qos {qos} pvt {pvt}"
                );
            }
        }
        assert_eq!(TagPolicy::from_keywords(false, 7), BOTH);
    }

    #[test]
    fn netdirect_from_keywords() {
        assert_eq!(NetDirect::from_keywords(false, 1), NetDirect::Disabled);
        assert_eq!(NetDirect::from_keywords(true, 1), NetDirect::Iwarp);
        assert_eq!(NetDirect::from_keywords(true, 4), NetDirect::RoceV2);
    }

    #[test]
    fn each_rule_matches() {
        let c = compiled(&[
            (DEFAULT, 0, 1),
            (ETHERTYPE, ETHERTYPE_FCOE, 3),
            (TCP_PORT, 3260, 4),
            (UDP_PORT, 53, 5),
            (TCP_OR_UDP_PORT, 860, 6),
            (NETDIRECT_PORT, 445, 7),
        ]);
        let m = Meta::default();
        let fcoe = classify(&c, &frame(None, ETHERTYPE_FCOE, &[0; 30]), m);
        assert_eq!(
            (fcoe.priority, fcoe.tc, fcoe.rule, fcoe.is_rdma),
            (3, 1, Rule::EtherType, false)
        );
        let iscsi = classify(&c, &frame(None, ETHERTYPE_IPV4, &ip4(6, 50000, 3260)), m);
        assert_eq!((iscsi.priority, iscsi.tc, iscsi.rule), (4, 2, Rule::Tcp));
        let dns = classify(&c, &frame(None, ETHERTYPE_IPV6, &ip6(17, 50000, 53)), m);
        assert_eq!((dns.priority, dns.rule), (5, Rule::Udp));
        // TCP_PORT 3260 does not match UDP 3260: DEFAULT.
        let udp3260 = classify(&c, &frame(None, ETHERTYPE_IPV4, &ip4(17, 1, 3260)), m);
        assert_eq!((udp3260.priority, udp3260.rule), (1, Rule::Default));
        for proto in [6, 17] {
            let d = classify(&c, &frame(None, ETHERTYPE_IPV4, &ip4(proto, 1, 860)), m);
            assert_eq!((d.priority, d.rule), (6, Rule::TcpOrUdp));
        }
        // Source port does not count (spec §1.4: destination).
        let d = classify(&c, &frame(None, ETHERTYPE_IPV4, &ip4(6, 3260, 1)), m);
        assert_eq!(d.rule, Rule::Default);
        // RoCEv2 takes the first NETDIRECT_PORT element.
        let roce = classify(
            &c,
            &frame(None, ETHERTYPE_IPV4, &ip4(17, 1234, ROCEV2_UDP_PORT)),
            m,
        );
        assert_eq!(
            (roce.priority, roce.tc, roce.rule, roce.is_rdma),
            (7, 3, Rule::NetDirect, true)
        );
        let roce1 = classify(&c, &frame(None, ETHERTYPE_ROCE, &[0; 40]), m);
        assert_eq!(
            (roce1.priority, roce1.rule, roce1.is_rdma),
            (7, Rule::NetDirect, true)
        );
        // A frame the NDK engine marks with its ND port.
        let nd = Meta {
            nd_port: Some(445),
            ..m
        };
        let d = classify(&c, &frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 2)), nd);
        assert_eq!((d.priority, d.rule, d.is_rdma), (7, Rule::NetDirect, true));
        // Marked with another port: RDMA, but the rules below apply.
        let other = Meta {
            nd_port: Some(5445),
            ..m
        };
        let d = classify(&c, &frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 3260)), other);
        assert_eq!((d.priority, d.rule, d.is_rdma), (4, Rule::Tcp, true));
    }

    #[test]
    fn precedence() {
        let c = compiled(&[
            (DEFAULT, 0, 1),
            (ETHERTYPE, ETHERTYPE_IPV6, 2),
            (TCP_OR_UDP_PORT, 445, 3),
            (TCP_PORT, 445, 4),
            (TCP_PORT, 445, 6),
            (NETDIRECT_PORT, 445, 5),
            (NETDIRECT_PORT, 8445, 7),
        ]);
        let bytes = frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 445));
        let m = Meta::default();
        // TCP (first of the two) > TCP_OR_UDP (even listed earlier) > NetDirect.
        let marked = Meta {
            nd_port: Some(445),
            ..m
        };
        assert_eq!(
            (
                classify(&c, &bytes, marked).rule,
                classify(&c, &bytes, marked).priority
            ),
            (Rule::Tcp, 4)
        );
        let udp = frame(None, ETHERTYPE_IPV4, &ip4(17, 1, 445));
        assert_eq!(classify(&c, &udp, m).rule, Rule::TcpOrUdp);
        // A NetDirect connection on a port no TCP/UDP element names.
        let nd = frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 8445));
        let d = classify(
            &c,
            &nd,
            Meta {
                nd_port: Some(8445),
                ..m
            },
        );
        assert_eq!((d.priority, d.rule), (7, Rule::NetDirect));
        // EtherType beats the ports (issue 9's order).
        let v6 = frame(None, ETHERTYPE_IPV6, &ip6(6, 1, 445));
        assert_eq!(classify(&c, &v6, m).rule, Rule::EtherType);
        let other = frame(None, ETHERTYPE_IPV4, &ip4(17, 1, 446));
        assert_eq!(classify(&c, &other, m).rule, Rule::Default);
        // OS-supplied beats everything.
        let d = classify(
            &c,
            &bytes,
            Meta {
                os_priority: Some(0),
                nd_port: Some(445),
                ..m
            },
        );
        assert_eq!(
            (d.priority, d.tc, d.rule, d.is_rdma),
            (0, 0, Rule::OsSupplied, true)
        );
        // In-frame tag: below the classifications, above DEFAULT.
        let tagged_v4 = frame(Some(0x6000), ETHERTYPE_IPV4, &ip4(17, 1, 446));
        assert_eq!(classify(&c, &tagged_v4, m).rule, Rule::FrameTag);
        assert_eq!(classify(&c, &tagged_v4, m).priority, 3);
        let tagged_tcp = frame(Some(0x6000), ETHERTYPE_IPV4, &ip4(6, 1, 445));
        assert_eq!(classify(&c, &tagged_tcp, m).rule, Rule::Tcp);
    }

    #[test]
    fn no_rule_and_empty_tables() {
        let c = compiled(&[]);
        let d = classify(
            &c,
            &frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 2)),
            Meta::default(),
        );
        assert_eq!(
            d,
            Decision {
                priority: 0,
                tc: 0,
                rule: Rule::None,
                tag: TagAction::Leave,
                is_rdma: false,
                frame: Status::Complete,
            }
        );
        // Only the first DEFAULT counts; invalid priorities and selectors are skipped.
        let c = compiled(&[
            (DEFAULT, 0, 9),
            (7, 1, 1),
            (0, 0, 2),
            (DEFAULT, 0, 3),
            (DEFAULT, 0, 4),
        ]);
        let d = classify(&c, &frame(None, 0x88B5, &[]), Meta::default());
        assert_eq!((d.priority, d.rule), (3, Rule::Default));
    }

    #[test]
    fn qos_disabled_classifies_nothing() {
        let c = Compiled::new(None, TagPolicy::from_keywords(false, 3), NetDirect::RoceV2);
        let roce = frame(None, ETHERTYPE_IPV4, &ip4(17, 1, ROCEV2_UDP_PORT));
        let d = classify(&c, &roce, Meta::default());
        assert_eq!(
            (d.priority, d.tc, d.rule, d.tag, d.is_rdma),
            (0, 0, Rule::None, TagAction::Leave, true)
        );
        let d = classify(
            &c,
            &roce,
            Meta {
                os_priority: Some(13),
                vlan_id: 0,
                nd_port: None,
            },
        );
        assert_eq!((d.priority, d.tc, d.rule), (5, 0, Rule::OsSupplied));
        assert_eq!(d.tag, TagAction::Insert { pcp: 5, vid: 0 });
    }

    #[test]
    fn traffic_class_outside_num_tcs_is_zero() {
        let mut p = params(&[(DEFAULT, 0, 7)]);
        p.num_tcs = 2;
        p.prio_tc = [0, 1, 2, 3, 4, 5, 6, 9];
        let c = Compiled::new(Some(&p), BOTH, NetDirect::Disabled);
        let d = classify(&c, &frame(None, 0x1234, &[]), Meta::default());
        assert_eq!((d.priority, d.tc), (7, 0));
        let d = classify(
            &c,
            &frame(None, 0x1234, &[]),
            Meta {
                os_priority: Some(1),
                ..Meta::default()
            },
        );
        assert_eq!(d.tc, 1);
    }

    #[test]
    fn iwarp_matches_either_port() {
        let p = params(&[(NETDIRECT_PORT, 5445, 3), (TCP_PORT, 5446, 1)]);
        let c = Compiled::new(Some(&p), BOTH, NetDirect::Iwarp);
        let m = Meta::default();
        // Initiated: destination port; accepted: source port.
        for (src, dst) in [(50000, 5445), (5445, 50000)] {
            let d = classify(&c, &frame(None, ETHERTYPE_IPV4, &ip4(6, src, dst)), m);
            assert_eq!((d.priority, d.rule, d.is_rdma), (3, Rule::NetDirect, true));
        }
        // Not UDP; and RoCEv2 frames on an iWARP adapter are RDMA but do not take the element.
        let d = classify(&c, &frame(None, ETHERTYPE_IPV4, &ip4(17, 5445, 5445)), m);
        assert_eq!((d.rule, d.is_rdma), (Rule::None, false));
        let d = classify(
            &c,
            &frame(None, ETHERTYPE_IPV4, &ip4(17, 1, ROCEV2_UDP_PORT)),
            m,
        );
        assert_eq!((d.rule, d.is_rdma), (Rule::None, true));
        // With NDK disabled neither works.
        let c = Compiled::new(Some(&p), BOTH, NetDirect::Disabled);
        let d = classify(&c, &frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 5445)), m);
        assert_eq!((d.rule, d.is_rdma), (Rule::None, false));
        let d = classify(&c, &frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 5446)), m);
        assert_eq!((d.rule, d.is_rdma), (Rule::Tcp, false));
    }

    #[test]
    fn fragments_and_truncated_frames_fall_back() {
        let c = compiled(&[(DEFAULT, 0, 1), (UDP_PORT, 53, 5)]);
        let m = Meta::default();
        let mut first = ip4(17, 1, 53);
        first[6] = 0x20;
        let d = classify(&c, &frame(None, ETHERTYPE_IPV4, &first), m);
        assert_eq!(d.rule, Rule::Udp);
        let mut later = ip4(17, 1, 53);
        later[6] = 0x20;
        later[7] = 0x10;
        let d = classify(&c, &frame(None, ETHERTYPE_IPV4, &later), m);
        assert_eq!(d.rule, Rule::Default, "a later fragment has no ports");
        // Cut before the ports: no port to match, DEFAULT.
        let full = frame(None, ETHERTYPE_IPV4, &ip4(17, 1, 53));
        let f = Frame::parse(&full[..36]);
        assert_eq!(f.status, Status::Truncated(Layer::L4));
        assert_eq!(c.classify(&f, &m).rule, Rule::Default);
        // IPv4 options past the end are an L3 truncation.
        let mut opts = ip4(17, 1, 53);
        opts[0] = 0x4F;
        let f = Frame::parse(&frame(None, ETHERTYPE_IPV4, &opts));
        assert_eq!((f.status, f.ports), (Status::Truncated(Layer::L3), None));
        // Runts: DEFAULT, but no tag can be inserted without the addresses.
        for n in 0..12 {
            let d = classify(&c, &full[..n], m);
            assert_eq!((d.rule, d.tag), (Rule::Default, TagAction::Leave), "{n}");
        }
        let d = classify(&c, &full[..12], m);
        assert_eq!(d.tag, TagAction::Insert { pcp: 1, vid: 0 });
        // SNAP-framed IPv4.
        let mut snap = std::vec![0xAA, 0xAA, 0x03, 0, 0, 0, 0x08, 0x00];
        snap.extend_from_slice(&ip4(17, 1, 53));
        let d = classify(&c, &frame(None, snap.len() as u16, &snap), m);
        assert_eq!(d.rule, Rule::Udp);
    }

    /// The tag action for each *PriorityVLANTag value (QoS off, so the keyword alone decides).
    #[test]
    fn tag_actions_per_priority_vlan_tag() {
        let untagged = frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 2));
        let tagged = frame(Some(0x2064), ETHERTYPE_IPV4, &ip4(6, 1, 2));
        let os = Meta {
            os_priority: Some(5),
            vlan_id: 100,
            nd_port: None,
        };
        let none = Meta::default();
        let vlan_only = Meta {
            vlan_id: 0x1064,
            ..none
        };
        use TagAction::{Insert, Leave, Rewrite};
        // (pvt, untagged+os, untagged+none, untagged+vlan only, tagged+os)
        let expect = [
            (0, Leave, Leave, Leave, Leave),
            (
                1,
                Insert { pcp: 5, vid: 0 },
                Leave,
                Leave,
                Rewrite { pcp: 5 },
            ),
            (
                2,
                Insert { pcp: 0, vid: 100 },
                Leave,
                Insert { pcp: 0, vid: 100 },
                Leave,
            ),
            (
                3,
                Insert { pcp: 5, vid: 100 },
                Leave,
                Insert { pcp: 0, vid: 100 },
                Rewrite { pcp: 5 },
            ),
        ];
        for (pvt, a, b, v, t) in expect {
            let c = Compiled::new(
                None,
                TagPolicy::from_keywords(false, pvt),
                NetDirect::Disabled,
            );
            assert_eq!(classify(&c, &untagged, os).tag, a, "pvt {pvt}");
            assert_eq!(classify(&c, &untagged, none).tag, b, "pvt {pvt}");
            assert_eq!(classify(&c, &untagged, vlan_only).tag, v, "pvt {pvt}");
            assert_eq!(classify(&c, &tagged, os).tag, t, "pvt {pvt}");
        }
        // With QoS on, a classified frame is priority-tagged even at priority 0, for pvt 0 too.
        let p = params(&[(DEFAULT, 0, 0)]);
        for pvt in 0..4 {
            let c = Compiled::new(
                Some(&p),
                TagPolicy::from_keywords(true, pvt),
                NetDirect::Disabled,
            );
            let vid = if pvt >= 2 { 100 } else { 0 };
            let d = classify(
                &c,
                &untagged,
                Meta {
                    vlan_id: 100,
                    ..none
                },
            );
            assert_eq!(d.tag, Insert { pcp: 0, vid }, "pvt {pvt}");
            // Same PCP already in the frame: nothing to rewrite; DEFAULT never rewrites.
            let d = classify(
                &c,
                &tagged,
                Meta {
                    os_priority: Some(1),
                    ..none
                },
            );
            assert_eq!(d.tag, Leave);
            let d = classify(&c, &tagged, none);
            assert_eq!((d.rule, d.tag), (Rule::FrameTag, Leave));
        }
    }

    #[test]
    fn control_frames_are_never_tagged() {
        let c = compiled(&[(DEFAULT, 0, 3)]);
        let os = Meta {
            os_priority: Some(7),
            vlan_id: 5,
            nd_port: None,
        };
        let pfc = super::super::frame::PfcFrame::new([2, 0, 0, 0, 0, 9], 1, [1; 8]).to_bytes();
        assert_eq!(classify(&c, &pfc, os).tag, TagAction::Leave);
        let lldp = frame(None, crate::lldp::ETHERTYPE, &[0; 20]);
        assert_eq!(classify(&c, &lldp, os).tag, TagAction::Leave);
    }

    #[test]
    fn receive_strips_when_tagging_is_on() {
        let tagged = Frame::parse(&frame(Some(0x2064), ETHERTYPE_IPV4, &[]));
        let untagged = Frame::parse(&frame(None, ETHERTYPE_IPV4, &[]));
        for pvt in 0..4 {
            let c = Compiled::new(
                None,
                TagPolicy::from_keywords(false, pvt),
                NetDirect::Disabled,
            );
            let expect = if pvt == 0 {
                TagAction::Leave
            } else {
                TagAction::Strip
            };
            assert_eq!(c.receive(&tagged), expect);
            assert_eq!(c.receive(&untagged), TagAction::Leave);
            assert_eq!(c.tagging(), TagPolicy::from_keywords(false, pvt));
        }
    }

    #[test]
    fn apply_tag_edits_the_header() {
        let untagged = frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 2));
        let mut out = [0u8; 128];
        let n = apply_tag(
            &untagged,
            TagAction::Insert { pcp: 5, vid: 0x123 },
            &mut out,
        )
        .unwrap();
        assert_eq!(n, untagged.len() + 4);
        assert_eq!(&out[..12], &MACS);
        assert_eq!(&out[12..16], &[0x81, 0x00, 0xA1, 0x23]);
        assert_eq!(&out[16..n], &untagged[12..]);
        let f = Frame::parse(&out[..n]);
        assert_eq!(
            f.tag,
            Some(VlanTag {
                pcp: 5,
                dei: false,
                vid: 0x123
            })
        );
        assert_eq!(f.ports.map(|p| p.dst), Some(2));
        let tagged = out[..n].to_vec();
        // Rewrite keeps DEI and VID.
        let mut dei = tagged.clone();
        dei[14] |= 0x10;
        let m = apply_tag(&dei, TagAction::Rewrite { pcp: 2 }, &mut out).unwrap();
        assert_eq!(m, n);
        assert_eq!(
            Frame::parse(&out[..m]).tag,
            Some(VlanTag {
                pcp: 2,
                dei: true,
                vid: 0x123
            })
        );
        // Strip gives the original back.
        let s = apply_tag(&tagged, TagAction::Strip, &mut out).unwrap();
        assert_eq!(&out[..s], &untagged[..]);
        // Leave copies.
        assert_eq!(
            apply_tag(&untagged, TagAction::Leave, &mut out),
            Some(untagged.len())
        );
        assert_eq!(&out[..untagged.len()], &untagged[..]);
        // Refusals.
        assert_eq!(
            apply_tag(&untagged, TagAction::Rewrite { pcp: 1 }, &mut out),
            None
        );
        assert_eq!(apply_tag(&untagged, TagAction::Strip, &mut out), None);
        assert_eq!(
            apply_tag(
                &untagged[..11],
                TagAction::Insert { pcp: 1, vid: 1 },
                &mut out
            ),
            None
        );
        assert_eq!(
            apply_tag(
                &untagged,
                TagAction::Insert { pcp: 1, vid: 1 },
                &mut out[..untagged.len() + 3]
            ),
            None
        );
        assert_eq!(
            apply_tag(&untagged, TagAction::Leave, &mut out[..untagged.len() - 1]),
            None
        );
        assert_eq!(apply_tag(&tagged[..15], TagAction::Strip, &mut out), None);
        assert_eq!(
            apply_tag(&tagged[..14], TagAction::Rewrite { pcp: 1 }, &mut out),
            None
        );
        // Exactly the addresses: insert gives just the tag after them.
        assert_eq!(
            apply_tag(&MACS, TagAction::Insert { pcp: 0, vid: 0 }, &mut out),
            Some(16)
        );
        assert_eq!(
            apply_tag(&tagged[..16], TagAction::Strip, &mut out),
            Some(12)
        );
    }

    /// In a transmit buffer, every action gives the bytes `apply_tag` writes, and fails on the
    /// same frames: at each length around the limits (12 bytes for Insert, 15 for Rewrite, 16
    /// for Strip), tagged and untagged, and in buffers one byte short.
    #[test]
    fn tag_in_place_writes_what_apply_tag_writes() {
        let tagged = frame(Some(0x2064), ETHERTYPE_IPV4, &ip4(6, 1, 80));
        let untagged = frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 80));
        let actions = [
            TagAction::Leave,
            TagAction::Insert { pcp: 5, vid: 100 },
            TagAction::Rewrite { pcp: 6 },
            TagAction::Strip,
        ];
        let (mut checked, mut refused) = (0, 0);
        for whole in [&tagged, &untagged] {
            for n in (0..=20).chain([whole.len()]) {
                let bytes = &whole[..n];
                for action in actions {
                    let mut out = [0u8; 128];
                    let expect = apply_tag(bytes, action, &mut out).map(|k| out[..k].to_vec());
                    let mut buf = std::vec![0xEE; TAG_ROOM + n];
                    buf[TAG_ROOM..].copy_from_slice(bytes);
                    let got =
                        tag_in_place(&mut buf, n, action).map(|(at, k)| buf[at..at + k].to_vec());
                    assert_eq!(got, expect, "{n} bytes, {action:?}");
                    checked += 1;
                    refused += usize::from(expect.is_none());
                    let mut short = std::vec![0u8; TAG_ROOM + n - 1];
                    assert_eq!(tag_in_place(&mut short, n, action), None);
                }
            }
        }
        assert!(checked == 2 * 22 * 4 && refused > 40, "{refused}");
        // Insert keeps the frame where it is: the MAC addresses move into the room.
        let mut buf = std::vec![0u8; TAG_ROOM + untagged.len()];
        buf[TAG_ROOM..].copy_from_slice(&untagged);
        let (at, n) = tag_in_place(
            &mut buf,
            untagged.len(),
            TagAction::Insert { pcp: 3, vid: 7 },
        )
        .unwrap();
        assert_eq!((at, n), (0, untagged.len() + 4));
        assert_eq!(&buf[12..16], &[0x81, 0x00, 0x60, 0x07]);
        assert_eq!(&buf[16..], &untagged[12..]);
    }

    #[test]
    fn a_full_table_keeps_the_first_of_each_key() {
        let mut elements = Vec::new();
        for i in 0..64u16 {
            elements.push((TCP_PORT, 1000 - i * 7, (i % 8) as u8));
        }
        let c = compiled(&elements);
        for i in 0..64u16 {
            let d = classify(
                &c,
                &frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 1000 - i * 7)),
                Meta::default(),
            );
            assert_eq!((d.rule, d.priority), (Rule::Tcp, (i % 8) as u8));
        }
        let mut t = Table::default();
        let entry = |k: u32, rule| Entry {
            priority: (k % 8) as u8,
            tc: 0,
            rule,
        };
        for k in (0..200u32).rev() {
            t.insert(k * 256, entry(k, Rule::Udp));
        }
        assert_eq!(t.len, MAX_KEYS);
        for k in 0..200u32 {
            let expect = (k >= 200 - MAX_KEYS as u32).then_some(entry(k, Rule::Udp));
            assert_eq!(t.get(k * 256), expect, "{k}");
        }
        t.insert(199 * 256, entry(0, Rule::Tcp));
        assert_eq!(t.get(199 * 256), Some(entry(199, Rule::Udp)));
    }

    #[test]
    fn sixty_four_tcp_or_udp_elements_fill_both_protocols() {
        let elements: Vec<_> = (0..64u16)
            .map(|i| (TCP_OR_UDP_PORT, 2000 + i * 3, (i % 8) as u8))
            .collect();
        let c = compiled(&elements);
        for i in 0..64u16 {
            for protocol in [6, 17] {
                let d = classify(
                    &c,
                    &frame(None, ETHERTYPE_IPV4, &ip4(protocol, 1, 2000 + i * 3)),
                    Meta::default(),
                );
                assert_eq!((d.rule, d.priority), (Rule::TcpOrUdp, (i % 8) as u8));
            }
        }
    }

    /// A frame with neither ports nor an EtherType (plain LLC) is looked up by no key: an
    /// ETHERTYPE element with field 0 does not match it, and port and EtherType keys of the
    /// same number stay apart.
    #[test]
    fn keys_of_different_kinds_never_meet() {
        let c = compiled(&[(ETHERTYPE, 0, 5), (ETHERTYPE, 6, 4), (UDP_PORT, 6, 3)]);
        let llc = frame(None, 39, &[0x42, 0x42, 0x03, 0, 0, 0, 0, 0]);
        assert_eq!(classify(&c, &llc, Meta::default()).rule, Rule::None);
        let tcp6 = frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 6));
        assert_eq!(classify(&c, &tcp6, Meta::default()).rule, Rule::None);
        let udp6 = frame(None, ETHERTYPE_IPV4, &ip4(17, 1, 6));
        assert_eq!((classify(&c, &udp6, Meta::default()).rule), Rule::Udp);
        let f = scan::facts(&frame(None, ETHERTYPE_FCOE, &[0; 40]));
        assert_eq!(f.ethertype_key(), key::of(key::ETHERTYPE, ETHERTYPE_FCOE));
        assert_eq!(f.port_key(), 0);
        let f = scan::facts(&tcp6);
        assert_eq!(f.port_key(), key::of(key::TCP, 6));
    }
}
