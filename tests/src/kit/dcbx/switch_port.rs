//! A switch port on the simulated wire: a DCBX peer whose LLDPDUs a case writes TLV by TLV
//! (chassis and port ID, TTL, Willing, ETS Configuration and Recommendation, PFC, application
//! priorities) and sends when it wants, so that the adapter under test hears them through its
//! receive path as it would a switch's. The port is an adapter of the driver with `*QOS` = 0
//! (its own DCBX agent stays silent and it consumes no LLDPDU) whose protocol sends the frames:
//! a switch's LLDP agent is a protocol on its port as well. Nothing else sends for it, so a peer
//! that stops sending goes silent and the adapter under test expires it on its own timer.
//!
//! The bytes are the kit's own, from 802.1AB-2016 §8 and 802.1Q-2018 D.2.8-D.2.10, D.2.12 (the
//! layouts of `dcbx-peer.md` §7), not the driver's encoder.

use ndis_sys::status::NDIS_STATUS_SUCCESS;

use crate::kit::{expect_eq, finish, started};
use crate::sim::{Adapter, Registry, clock};

/// The LLDP nearest-bridge group address (802.1AB Table 7-1).
const NEAREST_BRIDGE: [u8; 6] = [0x01, 0x80, 0xC2, 0x00, 0x00, 0x0E];
/// The LLDP EtherType.
const LLDP: [u8; 2] = [0x88, 0xCC];
/// The IEEE 802.1 OUI of the 802.1Qaz TLVs.
const OUI: [u8; 3] = [0x00, 0x80, 0xC2];

/// An ETS Configuration (or Recommendation) TLV's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ets {
    /// Willing (Configuration only).
    pub(crate) willing: bool,
    /// MaxTCs (Configuration only; 8 is sent as 0).
    pub(crate) max_tcs: u8,
    /// Priority -> TC.
    pub(crate) prio_tc: [u8; 8],
    /// TC -> percent.
    pub(crate) bw: [u8; 8],
    /// TC -> TSA (0 strict, 2 ETS).
    pub(crate) tsa: [u8; 8],
}

/// A PFC Configuration TLV's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pfc {
    /// Willing.
    pub(crate) willing: bool,
    /// PFC capability (priorities that may be enabled at once).
    pub(crate) cap: u8,
    /// Bit p: PFC on priority p.
    pub(crate) enable: u8,
}

/// One LLDPDU of a DCBX peer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lldpdu {
    /// The Chassis ID (subtype 4, a MAC address).
    pub(crate) chassis: [u8; 6],
    /// The Port ID (subtype 5, an interface name).
    pub(crate) port: &'static str,
    /// Time To Live, seconds (0: shutdown).
    pub(crate) ttl: u16,
    /// ETS Configuration TLV, if sent.
    pub(crate) ets: Option<Ets>,
    /// ETS Recommendation TLV, if sent.
    pub(crate) recommendation: Option<Ets>,
    /// PFC Configuration TLV, if sent.
    pub(crate) pfc: Option<Pfc>,
    /// Application Priority TLV entries (priority, selector, protocol), if sent.
    pub(crate) apps: Option<Vec<(u8, u8, u16)>>,
}

/// Appends one TLV: the 7-bit type and 9-bit length header, big endian, then the value.
fn tlv(out: &mut Vec<u8>, kind: u8, value: &[u8]) {
    let len = u16::try_from(value.len()).unwrap_or(0x1FF).min(0x1FF);
    out.extend_from_slice(&((u16::from(kind) << 9) | len).to_be_bytes());
    out.extend_from_slice(value);
}

/// An ETS TLV's value: OUI, subtype 9 or 10, the flags (or reserved) byte, the priority table
/// (two priorities a byte, the even one in the high nibble), bandwidths and TSAs.
fn ets_value(e: &Ets, subtype: u8, first: u8) -> Vec<u8> {
    let mut v = OUI.to_vec();
    v.push(subtype);
    v.push(first);
    for pair in e.prio_tc.chunks_exact(2) {
        v.push((pair[0] << 4) | (pair[1] & 0x0F));
    }
    v.extend_from_slice(&e.bw);
    v.extend_from_slice(&e.tsa);
    v
}

impl Lldpdu {
    /// The LLDPDU's bytes (after the Ethernet header).
    pub(crate) fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut chassis = vec![4u8];
        chassis.extend_from_slice(&self.chassis);
        tlv(&mut out, 1, &chassis);
        let mut port = vec![5u8];
        port.extend_from_slice(self.port.as_bytes());
        tlv(&mut out, 2, &port);
        tlv(&mut out, 3, &self.ttl.to_be_bytes());
        if let Some(e) = &self.ets {
            let first = (u8::from(e.willing) << 7) | (e.max_tcs & 0x07);
            tlv(&mut out, 127, &ets_value(e, 9, first));
        }
        if let Some(e) = &self.recommendation {
            tlv(&mut out, 127, &ets_value(e, 10, 0));
        }
        if let Some(p) = &self.pfc {
            let flags = (u8::from(p.willing) << 7) | (p.cap & 0x0F);
            let mut v = OUI.to_vec();
            v.extend_from_slice(&[11, flags, p.enable]);
            tlv(&mut out, 127, &v);
        }
        if let Some(apps) = &self.apps {
            let mut v = OUI.to_vec();
            v.extend_from_slice(&[12, 0]);
            for &(priority, selector, protocol) in apps {
                v.push((priority << 5) | (selector & 0x07));
                v.extend_from_slice(&protocol.to_be_bytes());
            }
            tlv(&mut out, 127, &v);
        }
        tlv(&mut out, 0, &[]);
        out
    }

    /// The shutdown LLDPDU of the same chassis and port: TTL 0, the mandatory TLVs only.
    pub(crate) fn shutdown(&self) -> Self {
        Self {
            ttl: 0,
            ets: None,
            recommendation: None,
            pfc: None,
            apps: None,
            ..self.clone()
        }
    }
}

/// A switch port on a wire: an adapter of the driver with `*QOS` = 0 and the port's MAC address.
pub(crate) struct SwitchPort {
    port: Adapter,
    mac: [u8; 6],
    wire: u32,
}

impl SwitchPort {
    /// A port with MAC address `mac` on `wire`, whose clock must be manual
    /// (`clock::fresh_manual_wire`).
    pub(crate) fn on(wire: u32, mac: [u8; 6]) -> Result<Self, String> {
        let mut r = Registry::inf_defaults();
        let address: String = mac.iter().map(|b| format!("{b:02X}")).collect();
        r.on_wire(wire)
            .set_sz("NetworkAddress", &address)
            .set_sz("*QOS", "0");
        Ok(Self {
            port: started(r)?,
            mac,
            wire,
        })
    }

    /// Sends `pdu` from the port to the nearest-bridge address (padded to the 60-byte minimum
    /// frame), then lets 1 ms of the wire's clock pass: the port's link puts frames on the wire
    /// at its line rate, so a frame sent right after another waits for the link. Every adapter
    /// on the wire has received it when this returns.
    pub(crate) fn send(&self, pdu: &Lldpdu) -> Result<(), String> {
        let mut frame = NEAREST_BRIDGE.to_vec();
        frame.extend_from_slice(&self.mac);
        frame.extend_from_slice(&LLDP);
        frame.extend_from_slice(&pdu.bytes());
        if frame.len() < 60 {
            frame.resize(60, 0);
        }
        let sent = self.port.send(&[frame], &[]);
        clock::advance(self.wire, 1);
        expect_eq(
            "the switch port's LLDPDU send",
            sent.statuses,
            vec![NDIS_STATUS_SUCCESS],
        )
    }

    /// Pauses and halts the port (`kit::finish`).
    pub(crate) fn finish(self) -> Result<(), String> {
        finish(self.port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes of `dcbx-peer.md` §7's lldpad frame (its TLVs after Port ID), built here.
    #[test]
    fn the_spec_example_tlvs() {
        let pdu = Lldpdu {
            chassis: [2, 0, 0, 0, 0, 1],
            port: "p",
            ttl: 120,
            ets: Some(Ets {
                willing: false,
                max_tcs: 0,
                prio_tc: [0, 1, 2, 3, 4, 5, 6, 7],
                bw: [10, 10, 20, 30, 30, 0, 0, 0],
                tsa: [2, 2, 2, 2, 2, 0, 0, 0],
            }),
            recommendation: Some(Ets {
                willing: false,
                max_tcs: 0,
                prio_tc: [0, 1, 2, 3, 4, 5, 6, 7],
                bw: [20, 10, 10, 30, 30, 0, 0, 0],
                tsa: [2, 2, 2, 2, 2, 0, 0, 0],
            }),
            pfc: Some(Pfc {
                willing: false,
                cap: 8,
                enable: 0x18,
            }),
            apps: Some(vec![
                (3, 5, 26),
                (3, 3, 4791),
                (3, 1, 0x8915),
                (3, 2, 445),
                (4, 2, 3260),
            ]),
        };
        let hex: String = pdu.bytes().iter().map(|b| format!("{b:02x}")).collect();
        let expected = concat!(
            "020704020000000001",
            "0402057006020078",
            "fe190080c20900012345670a0a141e1e0000000202020202000000",
            "fe190080c20a0001234567140a0a1e1e0000000202020202000000",
            "fe060080c20b0818",
            "fe140080c20c0065001a6312b76189156201bd820cbc",
            "0000"
        );
        assert_eq!(hex, expected);
        let shutdown = pdu.shutdown().bytes();
        assert_eq!(shutdown.len(), 9 + 4 + 4 + 2);
    }
}
