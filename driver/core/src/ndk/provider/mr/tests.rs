//! The memory rules: tokens, registration, fast registration, access checks.

use super::*;
use std::vec;
use std::vec::Vec;

struct Slots {
    pds: Vec<PdSlot>,
    mrs: Vec<MrSlot>,
}

fn slots(n: usize) -> Slots {
    Slots {
        pds: vec![PdSlot::FREE; n],
        mrs: vec![MrSlot::FREE; n],
    }
}

fn table(s: &mut Slots) -> MemoryTable<'_> {
    MemoryTable::new(&mut s.pds, &mut s.mrs, 0x5A, &Profile::ROCE_V2_100G).unwrap()
}

const BASE: u64 = 0x7FF0_0000_1000;

fn fr(page_count: u32, fbo: u32, len: u64, base_va: u64, flags: u32) -> FastRegistration {
    FastRegistration {
        page_count,
        fbo,
        len,
        base_va,
        flags,
    }
}
const ALL: u32 = mr_flags::ALLOW_REMOTE_READ | mr_flags::ALLOW_REMOTE_WRITE;

#[test]
fn tokens_are_never_zero_nor_privileged_and_decode_back() {
    for index in [0usize, 1, 255, 256, 524_287, MAX_SLOTS - 1] {
        for key in [0u8, 1, 0xA5, 0xFF] {
            let t = token(index, key).unwrap();
            assert_ne!(t, 0);
            assert_ne!(t, PRIVILEGED_TOKEN);
            assert_eq!(decode(t), Some((index, key)));
        }
    }
    assert_eq!(token(MAX_SLOTS, 0), None, "would not fit 24 bits");
    assert_eq!(decode(0), None);
    assert_eq!(decode(PRIVILEGED_TOKEN), None);
}

#[test]
fn register_checks_length_base_and_state() {
    let mut s = slots(4);
    let mut t = table(&mut s);
    let pd = t.create_pd().unwrap();
    let mr = t.create_mr(pd, false).unwrap();
    let max = Profile::ROCE_V2_100G.max_registration_size;
    assert_eq!(
        t.register(mr, BASE, max + 1, 0),
        Err(CallStatus::InvalidParameter)
    );
    assert_eq!(
        t.register(mr, 0, 4096, 0),
        Err(CallStatus::InvalidParameter)
    );
    assert_eq!(
        t.register(mr, BASE, 0, 0),
        Err(CallStatus::InvalidParameter)
    );
    assert_eq!(
        t.register(mr, u64::MAX - 10, 4096, 0),
        Err(CallStatus::InvalidParameter)
    );
    assert_eq!(
        t.register(mr, BASE, 4096, 0x40),
        Err(CallStatus::InvalidParameter)
    );
    t.register(mr, BASE, max, mr_flags::RDMA_READ_SINK).unwrap();
    assert_eq!(
        t.register(mr, BASE, 1, 0),
        Err(CallStatus::InvalidDeviceState)
    );
    t.deregister(mr).unwrap();
    assert_eq!(t.deregister(mr), Err(CallStatus::InvalidDeviceState));
    let fast = t.create_mr(pd, true).unwrap();
    assert_eq!(
        t.register(fast, BASE, 1, 0),
        Err(CallStatus::InvalidParameter)
    );
}

#[test]
fn access_flags_decode_as_the_header_defines_them() {
    // §2.11: REMOTE_WRITE 0x5 includes local write; op flag 0x30 includes 0x10.
    let w = Access::from_mr_flags(mr_flags::ALLOW_REMOTE_WRITE).unwrap();
    assert!(w.remote_write && w.local_write && !w.remote_read);
    let r = Access::from_mr_flags(mr_flags::ALLOW_REMOTE_READ).unwrap();
    assert!(r.remote_read && !r.local_write && !r.remote_write);
    assert_eq!(Access::from_mr_flags(0).unwrap(), Access::default());
    let f = Access::from_op_flags(op_flags::ALLOW_REMOTE_WRITE);
    assert!(f.remote_write && f.local_write && !f.remote_read);
    let l = Access::from_op_flags(op_flags::ALLOW_LOCAL_WRITE | op_flags::SILENT_SUCCESS);
    assert!(l.local_write && !l.remote_write);
}

#[test]
fn the_remote_check_gives_the_access_nak_for_token_domain_bounds_and_permission() {
    let mut s = slots(4);
    let mut t = table(&mut s);
    let pd = t.create_pd().unwrap();
    let other = t.create_pd().unwrap();
    let rw = t.create_mr(pd, false).unwrap();
    let ro = t.create_mr(pd, false).unwrap();
    t.register(rw, BASE, 8192, ALL).unwrap();
    t.register(ro, BASE, 8192, mr_flags::ALLOW_REMOTE_READ)
        .unwrap();
    let tok = t.remote_token(rw);
    let w = RemoteOp::Write;
    assert_eq!(
        t.check_remote(pd, tok, BASE + 100, 50, w),
        Ok(Placement::Region {
            mr: rw,
            offset: 100
        })
    );
    assert!(
        t.check_remote(pd, tok, BASE, 8192, w).is_ok(),
        "the whole region"
    );
    let cases = [
        (pd, tok ^ 1, BASE, 1, w, AccessError::Token),
        (pd, tok + 0x100, BASE, 1, w, AccessError::Token),
        (
            pd,
            PRIVILEGED_TOKEN,
            BASE,
            1,
            RemoteOp::Read,
            AccessError::Token,
        ),
        (pd, 0, BASE, 1, w, AccessError::Token),
        (other, tok, BASE, 1, w, AccessError::Domain),
        (pd, tok, BASE - 1, 1, w, AccessError::Bounds),
        (pd, tok, BASE + 8000, 193, w, AccessError::Bounds),
        (pd, tok, BASE + 1, u64::MAX, w, AccessError::Bounds),
        (pd, t.remote_token(ro), BASE, 1, w, AccessError::Permission),
    ];
    for (case_pd, token, va, len, op, why) in cases {
        let got = t.check_remote(case_pd, token, va, len, op);
        assert_eq!(got, Err(why), "{token:#x} {va:#x} {len}");
        assert_eq!(why.nak(), NakCode::RemoteAccess);
    }
    assert!(
        t.check_remote(pd, t.remote_token(ro), BASE, 1, RemoteOp::Read)
            .is_ok()
    );
    // Deregistered: the token is dead, and stays dead when the slot is registered again.
    t.deregister(rw).unwrap();
    assert_eq!(t.check_remote(pd, tok, BASE, 1, w), Err(AccessError::Token));
    t.register(rw, BASE, 8192, ALL).unwrap();
    assert_eq!(t.check_remote(pd, tok, BASE, 1, w), Err(AccessError::Token));
    assert!(t.check_remote(pd, t.remote_token(rw), BASE, 1, w).is_ok());
}

#[test]
fn the_privileged_token_is_local_only_and_local_writes_need_local_write() {
    // §5, rule 17.
    let mut s = slots(2);
    let mut t = table(&mut s);
    let pd = t.create_pd().unwrap();
    assert_eq!(t.privileged_token(), PRIVILEGED_TOKEN);
    assert_eq!(
        t.check_local(pd, PRIVILEGED_TOKEN, 0x1234_5000, 100, true),
        Ok(Placement::Logical)
    );
    let mr = t.create_mr(pd, false).unwrap();
    t.register(mr, BASE, 4096, mr_flags::ALLOW_REMOTE_READ)
        .unwrap();
    let tok = t.local_token(mr);
    assert!(t.check_local(pd, tok, BASE, 4096, false).is_ok());
    assert_eq!(
        t.check_local(pd, tok, BASE, 4096, true),
        Err(AccessError::Permission)
    );
    assert_eq!(
        AccessError::Permission.status(),
        CompletionStatus::AccessViolation
    );
}

#[test]
fn fast_register_and_invalidate_cycle_the_token() {
    // §5, rules 44-45.
    let mut s = slots(4);
    let mut t = table(&mut s);
    let pd = t.create_pd().unwrap();
    let other = t.create_pd().unwrap();
    let mr = t.create_mr(pd, true).unwrap();
    let f = op_flags::ALLOW_REMOTE_WRITE | op_flags::ALLOW_REMOTE_READ;
    let pages = Profile::ROCE_V2_100G.frmr_page_count;
    assert_eq!(
        t.fast_register(pd, mr, &fr(1, 0, 4096, BASE, f)),
        Err(CompletionStatus::InvalidParameter),
        "not initialized"
    );
    assert_eq!(
        t.init_fast_register(mr, pages + 1, true),
        Err(CallStatus::InvalidParameter)
    );
    assert_eq!(
        t.init_fast_register(mr, 0, true),
        Err(CallStatus::InvalidParameter)
    );
    t.init_fast_register(mr, 4, true).unwrap();
    let bad = [
        (pd, 5, 0, 4096, BASE, CompletionStatus::InvalidParameter),
        (pd, 2, 4096, 10, BASE, CompletionStatus::InvalidParameter),
        (
            pd,
            2,
            100,
            8192 - 99,
            BASE,
            CompletionStatus::InvalidParameter,
        ),
        (pd, 2, 0, 4096, 0, CompletionStatus::InvalidParameter),
        (pd, 0, 0, 0, BASE, CompletionStatus::InvalidParameter),
        (other, 2, 0, 4096, BASE, CompletionStatus::AccessViolation),
    ];
    for (p, n, fbo, len, va, why) in bad {
        assert_eq!(
            t.fast_register(p, mr, &fr(n, fbo, len, va, f)),
            Err(why),
            "{n} {fbo} {len}"
        );
    }
    let tok = t.remote_token(mr);
    assert_eq!(
        t.check_remote(pd, tok, BASE, 1, RemoteOp::Read),
        Err(AccessError::Token)
    );
    t.fast_register(pd, mr, &fr(2, 100, 8192 - 100, BASE, f))
        .unwrap();
    assert_eq!(
        t.remote_token(mr),
        tok,
        "the token is known before the registration runs"
    );
    assert!(t.check_remote(pd, tok, BASE, 8092, RemoteOp::Write).is_ok());
    assert_eq!(
        t.fast_register(pd, mr, &fr(2, 0, 10, BASE, f)),
        Err(CompletionStatus::AccessViolation),
        "already valid"
    );
    t.invalidate(pd, mr).unwrap();
    assert_eq!(
        t.check_remote(pd, tok, BASE, 1, RemoteOp::Read),
        Err(AccessError::Token)
    );
    assert_eq!(
        t.invalidate(pd, mr),
        Err(CompletionStatus::InvalidParameter)
    );
    assert_ne!(t.remote_token(mr), tok);
    // A local-only initialization refuses remote flags.
    let local = t.create_mr(pd, true).unwrap();
    t.init_fast_register(local, 1, false).unwrap();
    assert_eq!(
        t.fast_register(pd, local, &fr(1, 0, 10, BASE, op_flags::ALLOW_REMOTE_READ)),
        Err(CompletionStatus::AccessViolation)
    );
    t.fast_register(pd, local, &fr(1, 0, 10, BASE, op_flags::ALLOW_LOCAL_WRITE))
        .unwrap();
    let normal = t.create_mr(pd, false).unwrap();
    t.register(normal, BASE, 10, 0).unwrap();
    assert_eq!(
        t.invalidate(pd, normal),
        Err(CompletionStatus::InvalidParameter)
    );
}

#[test]
fn send_with_invalidate_invalidates_a_fast_registered_region_of_the_same_pd() {
    let mut s = slots(4);
    let mut t = table(&mut s);
    let pd = t.create_pd().unwrap();
    let other = t.create_pd().unwrap();
    let mr = t.create_mr(pd, true).unwrap();
    t.init_fast_register(mr, 1, true).unwrap();
    t.fast_register(pd, mr, &fr(1, 0, 64, BASE, op_flags::ALLOW_REMOTE_READ))
        .unwrap();
    let tok = t.remote_token(mr);
    assert_eq!(t.invalidate_remote(other, tok), Err(AccessError::Domain));
    assert_eq!(t.invalidate_remote(pd, tok), Ok(mr));
    assert_eq!(t.invalidate_remote(pd, tok), Err(AccessError::Token));
    // Rule 45: a later local invalidate of that token fails.
    assert_eq!(
        t.invalidate(pd, mr),
        Err(CompletionStatus::InvalidParameter)
    );
    let normal = t.create_mr(pd, false).unwrap();
    t.register(normal, BASE, 10, ALL).unwrap();
    assert_eq!(
        t.invalidate_remote(pd, t.remote_token(normal)),
        Err(AccessError::Permission)
    );
}

#[test]
fn tables_fill_and_a_pd_with_children_closes_when_the_last_goes() {
    // §1.3, rule 9.
    let mut s = slots(2);
    let mut t = table(&mut s);
    let a = t.create_pd().unwrap();
    let b = t.create_pd().unwrap();
    assert_eq!(t.create_pd(), Err(CallStatus::InsufficientResources));
    let m1 = t.create_mr(a, false).unwrap();
    let m2 = t.create_mr(a, false).unwrap();
    assert_eq!(
        t.create_mr(b, false),
        Err(CallStatus::InsufficientResources)
    );
    t.register(m1, BASE, 10, ALL).unwrap();
    let tok = t.remote_token(m1);
    t.retain_pd(a).unwrap(); // a QP
    assert_eq!(t.close_pd(b), PdClose::Now);
    assert_eq!(t.close_pd(a), PdClose::Pending);
    assert_eq!(
        t.create_mr(a, false),
        Err(CallStatus::InvalidParameter),
        "closing"
    );
    assert!(!t.close_mr(m1));
    assert_eq!(
        t.check_remote(a, tok, BASE, 1, RemoteOp::Read),
        Err(AccessError::Token),
        "closed while registered: deregistered"
    );
    assert!(!t.release_pd(a), "the QP goes; one MR left");
    assert!(t.close_mr(m2), "the last child completes the PD's close");
    assert!(t.create_pd().is_ok() && t.create_pd().is_ok());
}

#[test]
fn keys_differ_between_neighbouring_slots() {
    let mut s = slots(8);
    let mut t = table(&mut s);
    let pd = t.create_pd().unwrap();
    let mrs: Vec<MrId> = (0..8).map(|_| t.create_mr(pd, false).unwrap()).collect();
    let keys: Vec<u32> = mrs.iter().map(|mr| t.local_token(*mr) & 0xFF).collect();
    let mut unique = keys.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), keys.len(), "{keys:x?}");
}
