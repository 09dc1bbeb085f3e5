//! Typed, checked views over the leading bytes of an Ethernet frame: what the classifier
//! (spec §1.4) and the 802.1Q tagging (spec §6.2) read, and the MAC Control PFC frame the link
//! scheduler sends and obeys.
//!
//! The shell copies up to [`HEADER_BYTES`] bytes from the start of a `NET_BUFFER`'s MDL chain
//! into a stack buffer and calls [`Frame::parse`] on them. Parsing is *classified by what can be
//! read*: it never fails. A frame that ends early (or whose headers run past the copied bytes)
//! yields every field that was readable, and [`Frame::status`] says at which layer it stopped
//! ([`Status::Truncated`]) or what was wrong ([`Status::Malformed`]), one counter category each.
//!
//! As in `crate::wire` (smoltcp style, anchors.md §4c), every read is a checked `get` or a
//! copied array decoded with `from_be_bytes`, so nothing here panics on any input, and nothing
//! allocates.
//!
//! Three rooms, each reading only the first: `fields` (EtherTypes, IP protocol numbers, the
//! 802.1Q TCI), `header` (the parse of a frame's headers, [`Frame`]) and `pfc` (the MAC Control
//! PFC frame, [`PfcFrame`]).

mod fields;
mod header;
mod pfc;

pub use fields::{
    ETHERTYPE_FCOE, ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_MAC_CONTROL, ETHERTYPE_ROCE,
    ETHERTYPE_VLAN, MAX_8023_LENGTH, MAX_IPV6_EXTENSIONS, MIN_ETHERTYPE, ROCEV2_UDP_PORT, VlanTag,
    ip_protocol,
};
pub use header::{
    Fragment, Frame, Framing, HEADER_BYTES, IpHeader, IpVersion, Layer, Malformed, Ports, Status,
    Transport,
};
pub use pfc::{
    OPCODE_PAUSE, OPCODE_PFC, PFC_DESTINATION, PFC_FRAME_LEN, PFC_PDU_LEN, PfcError, PfcFrame,
};

#[cfg(test)]
mod tests;
