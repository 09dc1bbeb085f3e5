//! The egress frame mix of the data path benchmarks (`benches/classify.rs`,
//! `benches/send_path.rs`) and the operational set they classify it with: a data-centre host's
//! traffic under the SMB Direct scenario plus iSCSI and FCoE.

use dcbndk_core::datapath::classify::Meta;
use dcbndk_core::datapath::frame::{
    ETHERTYPE_FCOE, ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_ROCE, ROCEV2_UDP_PORT,
};
use dcbndk_core::qos::params::{Classification, Classifications, QosParameters, condition};

/// The operational set of the SMB Direct scenario plus iSCSI and FCoE.
#[must_use]
pub fn params() -> QosParameters {
    let mut classifications = Classifications::default();
    for (selector, field, priority) in [
        (condition::DEFAULT, 0, 0),
        (condition::NETDIRECT_PORT, 445, 3),
        (condition::TCP_PORT, 3260, 4),
        (condition::TCP_PORT, 860, 4),
        (condition::ETHERTYPE, ETHERTYPE_FCOE, 1),
        (condition::UDP_PORT, 2049, 2),
        (condition::TCP_OR_UDP_PORT, 5201, 5),
    ] {
        assert!(classifications.push(Classification {
            selector,
            field,
            priority,
        }));
    }
    QosParameters {
        flags: 0,
        num_tcs: 4,
        prio_tc: [0, 1, 0, 2, 3, 0, 0, 0],
        tc_bw: [40, 10, 40, 10, 0, 0, 0, 0],
        tsa: [2, 2, 2, 2, 0, 0, 0, 0],
        pfc_enable: 0x08,
        classifications,
    }
}

fn eth(tci: Option<u16>, ethertype: u16) -> Vec<u8> {
    let mut v = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2];
    if let Some(tci) = tci {
        v.extend_from_slice(&[0x81, 0x00]);
        v.extend_from_slice(&tci.to_be_bytes());
    }
    v.extend_from_slice(&ethertype.to_be_bytes());
    v
}

fn ipv4(protocol: u8, flags_offset: u16) -> Vec<u8> {
    let mut v = vec![0u8; 20];
    v[0] = 0x45;
    v[6..8].copy_from_slice(&flags_offset.to_be_bytes());
    v[9] = protocol;
    v
}

fn ipv6(next: u8) -> Vec<u8> {
    let mut v = vec![0u8; 40];
    v[0] = 0x60;
    v[6] = next;
    v
}

fn l4(src: u16, dst: u16, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    v[0..2].copy_from_slice(&src.to_be_bytes());
    v[2..4].copy_from_slice(&dst.to_be_bytes());
    v
}

/// One frame of the mix: its bytes (headers and a little payload, no FCS) and what NDIS tells
/// the miniport about it besides (the NBL's 802.1Q info).
pub struct MixFrame {
    /// The frame as the protocol hands it over.
    pub bytes: Vec<u8>,
    /// The OS-supplied priority and VLAN id, if any.
    pub meta: Meta,
}

fn frame(parts: &[&[u8]], meta: Meta) -> MixFrame {
    MixFrame {
        bytes: parts.concat(),
        meta,
    }
}

/// The 16 frames of the mix, in order: IPv4/IPv6 TCP and UDP, RoCEv2 over both, RoCE, FCoE,
/// tagged frames, an OS-supplied priority, IPv4 fragments, an IPv6 extension header, SNAP, ICMP.
#[must_use]
pub fn frame_mix() -> Vec<MixFrame> {
    let none = Meta::default();
    let os = Meta {
        os_priority: Some(5),
        vlan_id: 0,
        nd_port: None,
    };
    let vlan = Meta {
        os_priority: None,
        vlan_id: 100,
        nd_port: None,
    };
    let v4 = eth(None, ETHERTYPE_IPV4);
    let v6 = eth(None, ETHERTYPE_IPV6);
    let tagged_v4 = eth(Some(0x2064), ETHERTYPE_IPV4);
    let tagged_v6 = eth(Some(0x0064), ETHERTYPE_IPV6);
    let snap = [0xAA, 0xAA, 0x03, 0, 0, 0, 0x08, 0x00];
    let dest_opts = [6u8, 0, 0, 0, 0, 0, 0, 0];
    vec![
        frame(&[&v4, &ipv4(6, 0x4000), &l4(50000, 3260, 20)], none),
        frame(&[&v4, &ipv4(6, 0x4000), &l4(50001, 443, 20)], none),
        frame(&[&v6, &ipv6(6), &l4(50002, 445, 20)], none),
        frame(
            &[&v4, &ipv4(17, 0x4000), &l4(49152, ROCEV2_UDP_PORT, 8)],
            none,
        ),
        frame(&[&v6, &ipv6(17), &l4(49153, ROCEV2_UDP_PORT, 8)], none),
        frame(&[&eth(None, ETHERTYPE_FCOE), &[0u8; 40]], none),
        frame(&[&tagged_v4, &ipv4(6, 0x4000), &l4(50003, 860, 20)], none),
        frame(&[&tagged_v6, &ipv6(17), &l4(50004, 2049, 8)], none),
        frame(&[&v4, &ipv4(17, 0x2000), &l4(50005, 53, 8)], os),
        frame(&[&v4, &ipv4(17, 0x00B9), &[0u8; 40]], none),
        frame(&[&v6, &ipv6(60), &dest_opts, &l4(50006, 5201, 20)], vlan),
        frame(
            &[&eth(None, 100), &snap, &ipv4(6, 0), &l4(50007, 5201, 20)],
            none,
        ),
        frame(&[&v4, &ipv4(6, 0x4000), &l4(50008, 80, 20)], os),
        frame(&[&eth(None, ETHERTYPE_ROCE), &[0u8; 60]], none),
        frame(&[&v6, &ipv6(6), &l4(50009, 22, 20)], vlan),
        frame(&[&v4, &ipv4(1, 0), &[0u8; 40]], none),
    ]
}
