//! The simulated ndis.sys loads the driver and runs one adapter through its life.

use crate::sim::{Adapter, Registry};
use ndis_sys::ntddndis::{OID_GEN_LINK_SPEED, OID_GEN_SUPPORTED_LIST};
use ndis_sys::status::NDIS_STATUS_SUCCESS;

#[test]
fn one_adapter_lives_and_halts_cleanly() {
    let a = Adapter::dcbndk(Registry::inf_defaults()).unwrap();
    a.start().unwrap();
    let r = a.query(OID_GEN_LINK_SPEED, 4);
    assert_eq!(r.status, NDIS_STATUS_SUCCESS);
    assert_eq!(
        u32::from_le_bytes(r.data().try_into().unwrap()),
        1_000_000_000
    );
    let r = a.query(OID_GEN_SUPPORTED_LIST, 4096);
    assert_eq!(r.status, NDIS_STATUS_SUCCESS);
    let frame = [
        vec![0xFFu8; 6],
        vec![2, 0, 0, 0, 0, 1],
        vec![0x08, 0x00],
        vec![0; 46],
    ]
    .concat();
    let sent = a.send(&[frame.clone(), frame], &[3]);
    assert_eq!(sent.statuses, vec![NDIS_STATUS_SUCCESS; 2]);
    assert_eq!(a.pause(), NDIS_STATUS_SUCCESS);
    a.halt();
    a.check().unwrap();
    println!("{:?}", a.indications());
}
