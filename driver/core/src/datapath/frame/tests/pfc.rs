//! The PFC frame: emitted, parsed back, and what is refused.

use super::*;

#[test]
fn pfc_round_trip() {
    let pfc = PfcFrame::new(SRC, 0b1000_1001, [0xFFFF, 1, 2, 3, 4, 5, 6, 0x1234]);
    let bytes = pfc.to_bytes();
    assert_eq!(&bytes[..6], &PFC_DESTINATION);
    assert_eq!(&bytes[6..12], &SRC);
    assert_eq!(&bytes[12..18], &[0x88, 0x08, 0x01, 0x01, 0x00, 0x89]);
    assert_eq!(&bytes[18..20], &[0xFF, 0xFF]);
    assert_eq!(&bytes[32..34], &[0x12, 0x34]);
    assert!(bytes[34..].iter().all(|&b| b == 0));
    assert_eq!(PfcFrame::parse(&bytes), Ok(pfc));
    assert_eq!(PfcFrame::parse(&bytes[..PFC_PDU_LEN]), Ok(pfc));
    let mut out = [0xEEu8; 64];
    assert_eq!(pfc.emit(&mut out), Some(60));
    assert_eq!(&out[..60], &bytes[..]);
    assert_eq!(out[60], 0xEE);
    assert_eq!(pfc.emit(&mut out[..59]), None);
    assert_eq!(pfc.quanta_for(0), Some(0xFFFF));
    assert_eq!(pfc.quanta_for(1), None);
    assert_eq!(pfc.quanta_for(7), Some(0x1234));
    assert_eq!(pfc.quanta_for(8), None);
    assert_eq!(pfc.quanta_for(200), None);
    // It is also an ordinary frame to the parser.
    let f = Frame::parse(&bytes);
    assert_eq!(
        (f.ethertype, f.status),
        (Some(ETHERTYPE_MAC_CONTROL), Status::Complete)
    );
}

#[test]
fn pfc_refusals() {
    let bytes = PfcFrame::new(SRC, 1, [1; 8]).to_bytes();
    assert_eq!(PfcFrame::parse(&bytes[..33]), Err(PfcError::Truncated));
    assert_eq!(PfcFrame::parse(&[]), Err(PfcError::Truncated));
    let mut pause = bytes;
    pause[15] = 0x01;
    pause[14] = 0x00;
    assert_eq!(PfcFrame::parse(&pause), Err(PfcError::NotPfc(OPCODE_PAUSE)));
    let mut other = bytes;
    other[12] = 0x81;
    other[13] = 0x00;
    assert_eq!(
        PfcFrame::parse(&other),
        Err(PfcError::NotMacControl(0x8100))
    );
    // The reserved upper octet of the vector is ignored.
    let mut reserved = bytes;
    reserved[16] = 0xFF;
    assert_eq!(PfcFrame::parse(&reserved).map(|p| p.enable), Ok(1));
}
