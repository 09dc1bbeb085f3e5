//! The memory rules: tokens, registration, fast registration, access checks.

use super::*;
use std::vec;
use std::vec::Vec;

struct Slots {
    pds: Vec<PdSlot>,
    mrs: Vec<MrSlot>,
    lams: Vec<LamSlot>,
    pages: Vec<u64>,
    used: Vec<bool>,
}

/// `n` PDs and MRs, 8 LAMs and a pool of 64 chunks (two regions of `FRMRPageCount`).
fn slots(n: usize) -> Slots {
    with_pool(n, 64)
}

fn with_pool(n: usize, chunks: usize) -> Slots {
    Slots {
        pds: vec![PdSlot::FREE; n],
        mrs: vec![MrSlot::FREE; n],
        lams: vec![LamSlot::FREE; 8],
        pages: vec![0; chunks * CHUNK],
        used: vec![false; chunks],
    }
}

fn table(s: &mut Slots) -> MemoryTable<'_> {
    let mut t = MemoryTable::new(&mut s.pds, &mut s.mrs, 0x5A, &Profile::ROCE_V2_100G).unwrap();
    t.set_fast_memory(
        LamTable::new(&mut s.lams, 0x21).unwrap(),
        PagePool::new(&mut s.pages, &mut s.used).unwrap(),
    );
    t
}

/// Builds a LAM over `len` bytes at `va`; its page addresses.
fn lam(t: &mut MemoryTable<'_>, va: u64, len: u64) -> Vec<u64> {
    let g = t.lam_geometry(va, len).unwrap();
    let built = t.build_lam(&g, len).unwrap();
    (0..g.pages)
        .map(|i| lam::page_address(built.first, i).unwrap())
        .collect()
}

/// Posts a fast registration over `pages` (staged): the request as it runs.
fn post(
    t: &mut MemoryTable<'_>,
    pd: PdId,
    mr: MrId,
    request: FastRegistration,
    pages: &[u64],
) -> Result<FastRegistration, CallStatus> {
    let ticket = t.stage_fast_register(pd, mr, &request, |bank| {
        bank.copy_from_slice(pages);
    })?;
    Ok(FastRegistration { ticket, ..request })
}

const BASE: u64 = 0x7FF0_0000_1000;

fn fr(page_count: u32, fbo: u32, len: u64, base_va: u64, flags: u32) -> FastRegistration {
    FastRegistration {
        page_count,
        fbo,
        len,
        base_va,
        flags,
        ticket: 0,
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
    // Its address is a logical address: a live LAM's, whatever the PD.
    let pages = lam(&mut t, 0x1234_5010, 0x1FF0);
    let Ok(Placement::Logical { lam, offset: 0 }) =
        t.check_local(pd, PRIVILEGED_TOKEN, pages[0] + 0x10, 0x1FF0, true)
    else {
        panic!("the whole LAM across its two pages");
    };
    assert_eq!(
        t.check_local(pd, PRIVILEGED_TOKEN, pages[1] + 0x100, 8, false),
        Ok(Placement::Logical {
            lam,
            offset: 0x10F0
        })
    );
    for (va, len, why) in [
        (0x1234_5000, 100, AccessError::Token),
        (pages[0], 1, AccessError::Bounds),
        (pages[1] + 0xFFF, 2, AccessError::Bounds),
    ] {
        assert_eq!(
            t.check_local(pd, PRIVILEGED_TOKEN, va, len, true),
            Err(why),
            "{va:#x}"
        );
    }
    assert_eq!(
        t.check_remote(pd, PRIVILEGED_TOKEN, pages[0] + 0x10, 1, RemoteOp::Read),
        Err(AccessError::Token),
        "never remote"
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
    // §5, rules 44-45; NDK_FN_FAST_REGISTER's inline ACCESS_VIOLATION.
    let mut s = slots(4);
    let mut t = table(&mut s);
    let pd = t.create_pd().unwrap();
    let other = t.create_pd().unwrap();
    let mr = t.create_mr(pd, true).unwrap();
    let f = op_flags::ALLOW_REMOTE_WRITE | op_flags::ALLOW_REMOTE_READ;
    let pages = lam(&mut t, BASE, 8 * 4096);
    let max = Profile::ROCE_V2_100G.frmr_page_count;
    assert_eq!(
        post(&mut t, pd, mr, fr(1, 0, 4096, BASE, f), &pages[..1]),
        Err(CallStatus::InvalidParameter),
        "not initialized"
    );
    assert_eq!(
        t.fast_register(pd, mr, &fr(1, 0, 4096, BASE, f)),
        Err(CompletionStatus::InvalidParameter),
        "not initialized"
    );
    assert_eq!(
        t.init_fast_register(mr, max + 1, true),
        Err(CallStatus::ImplementationLimit)
    );
    assert_eq!(
        t.init_fast_register(mr, 0, true),
        Err(CallStatus::InvalidParameter)
    );
    t.init_fast_register(mr, 4, true).unwrap();
    let invalid = CallStatus::InvalidParameter;
    let bad = [
        (pd, 5, 0, 4096, BASE, invalid),
        (pd, 2, 4096, 10, BASE, invalid),
        (pd, 2, 100, 8192 - 99, BASE + 100, invalid),
        (pd, 2, 0, 4096, 0, invalid),
        (pd, 0, 0, 0, BASE, invalid),
        (pd, 2, 100, 10, BASE, invalid),
        (other, 2, 0, 4096, BASE, CallStatus::AccessViolation),
    ];
    for (p, n, fbo, len, va, why) in bad {
        let request = fr(n, fbo, len, va, f);
        let count = usize::try_from(n).unwrap();
        assert_eq!(
            post(&mut t, p, mr, request, &pages[..count]),
            Err(why),
            "post {n} {fbo} {len} {va:#x}"
        );
        let completes = match why {
            CallStatus::AccessViolation => CompletionStatus::AccessViolation,
            _ => CompletionStatus::InvalidParameter,
        };
        assert_eq!(
            t.fast_register(p, mr, &request),
            Err(completes),
            "run {n} {fbo} {len} {va:#x}"
        );
    }
    let tok = t.remote_token(mr);
    assert_eq!(
        t.check_remote(pd, tok, BASE, 1, RemoteOp::Read),
        Err(AccessError::Token)
    );
    let request = post(
        &mut t,
        pd,
        mr,
        fr(2, 100, 8192 - 100, BASE + 100, f),
        &pages[..2],
    );
    assert_eq!(
        t.remote_token(mr),
        tok,
        "the token is known before the registration runs"
    );
    t.fast_register(pd, mr, &request.unwrap()).unwrap();
    assert!(
        t.check_remote(pd, tok, BASE + 100, 8092, RemoteOp::Write)
            .is_ok()
    );
    // Posting again while valid stages into the other bank; running it fails, and the
    // registration keeps its pages.
    let again = post(&mut t, pd, mr, fr(2, 0, 10, BASE, f), &pages[4..6]).unwrap();
    assert_eq!(
        t.fast_register(pd, mr, &again),
        Err(CompletionStatus::AccessViolation),
        "already valid"
    );
    let first = t.fast_segment(mr, 0, 1).unwrap();
    assert_eq!(first.offset, 100, "still the first page of the first array");
    t.invalidate(pd, mr).unwrap();
    assert_eq!(
        t.check_remote(pd, tok, BASE + 100, 1, RemoteOp::Read),
        Err(AccessError::Token)
    );
    assert_eq!(t.fast_segment(mr, 0, 1), Err(AccessError::Token));
    assert_eq!(
        t.invalidate(pd, mr),
        Err(CompletionStatus::InvalidParameter)
    );
    assert_ne!(t.remote_token(mr), tok);
    // A local-only initialization refuses remote flags, inline and when run.
    let local = t.create_mr(pd, true).unwrap();
    t.init_fast_register(local, 1, false).unwrap();
    let remote = fr(1, 0, 10, BASE, op_flags::ALLOW_REMOTE_READ);
    assert_eq!(
        post(&mut t, pd, local, remote, &pages[..1]),
        Err(CallStatus::AccessViolation)
    );
    assert_eq!(
        t.fast_register(pd, local, &remote),
        Err(CompletionStatus::AccessViolation)
    );
    let write = post(
        &mut t,
        pd,
        local,
        fr(1, 0, 10, BASE, op_flags::ALLOW_LOCAL_WRITE),
        &pages[..1],
    );
    t.fast_register(pd, local, &write.unwrap()).unwrap();
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
    let pages = lam(&mut t, BASE, 64);
    t.init_fast_register(mr, 1, true).unwrap();
    let request = fr(1, 0, 64, BASE, op_flags::ALLOW_REMOTE_READ);
    let request = post(&mut t, pd, mr, request, &pages).unwrap();
    t.fast_register(pd, mr, &request).unwrap();
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
fn initialization_reserves_two_banks_and_close_returns_them() {
    // NDK_FN_INITIALIZE_FAST_REGISTER_MR: IMPLEMENTATION_LIMIT for a page count the adapter
    // does not support; the pool is what this adapter supports at most.
    let mut s = with_pool(4, 8);
    let mut t = table(&mut s);
    let pd = t.create_pd().unwrap();
    let a = t.create_mr(pd, true).unwrap();
    let b = t.create_mr(pd, true).unwrap();
    let c = t.create_mr(pd, true).unwrap();
    assert_eq!(
        t.init_fast_register(a, 65, true),
        Err(CallStatus::ImplementationLimit),
        "130 entries: more than the pool's 128"
    );
    t.init_fast_register(a, 32, true).unwrap();
    assert_eq!(t.pool().chunks_used(), 4, "two banks of 32");
    t.init_fast_register(b, 16, true).unwrap();
    assert_eq!(t.pool().chunks_used(), 6);
    assert_eq!(
        t.init_fast_register(c, 24, true),
        Err(CallStatus::InsufficientResources),
        "3 chunks, 2 free"
    );
    // Initializing again with more pages than fit: the region keeps what it had.
    assert_eq!(
        t.init_fast_register(a, 48, true),
        Err(CallStatus::InsufficientResources)
    );
    assert_eq!(t.pool().chunks_used(), 6);
    let pages = lam(&mut t, BASE, 32 * 4096);
    let whole = fr(32, 0, 32 * 4096, BASE, 0);
    let request = post(&mut t, pd, a, whole, &pages).unwrap();
    t.fast_register(pd, a, &request).unwrap();
    assert!(t.fast_segment(a, 31 * 4096, 4096).is_ok());
    assert_eq!(
        t.init_fast_register(a, 8, true),
        Err(CallStatus::InvalidDeviceState)
    );
    t.invalidate(pd, a).unwrap();
    t.init_fast_register(a, 8, true).unwrap();
    assert_eq!(t.pool().chunks_used(), 3, "a now holds one chunk");
    t.init_fast_register(c, 24, true).unwrap();
    assert!(!t.close_mr(a));
    assert!(!t.close_mr(b));
    assert!(!t.close_mr(c));
    assert_eq!(t.pool().chunks_used(), 0);
    // Without a pool no region can be initialized.
    let mut bare = slots(2);
    let mut t = MemoryTable::new(&mut bare.pds, &mut bare.mrs, 0, &Profile::ROCE_V2_100G).unwrap();
    let pd = t.create_pd().unwrap();
    let mr = t.create_mr(pd, true).unwrap();
    assert_eq!(
        t.init_fast_register(mr, 1, true),
        Err(CallStatus::ImplementationLimit)
    );
}

#[test]
fn segments_cross_pages_and_lams_from_a_nonzero_fbo() {
    // NDK_FN_FAST_REGISTER: consecutive array entries need not be consecutive logical pages;
    // the region starts at FBO in the first.
    let mut s = slots(4);
    let mut t = table(&mut s);
    let pd = t.create_pd().unwrap();
    let mr = t.create_mr(pd, true).unwrap();
    t.init_fast_register(mr, 3, true).unwrap();
    // A: 0x1100 bytes from offset 0xF00 of a page (chain 0..0x100 in page 0, the rest in 1).
    let a = lam(&mut t, 0x10_0000_0F00, 0x1100);
    let b = lam(&mut t, 0x20_0000_0000, 0x3000);
    let base = 0x5555_0F00;
    let request = fr(3, 0xF00, 0x1900, base, op_flags::ALLOW_REMOTE_WRITE);
    let request = post(&mut t, pd, mr, request, &[a[0], b[1], a[1]]).unwrap();
    t.fast_register(pd, mr, &request).unwrap();
    let Ok(Placement::Region { offset, .. }) =
        t.check_remote(pd, t.remote_token(mr), base, 0x1900, RemoteOp::Write)
    else {
        panic!("the whole region");
    };
    assert_eq!(offset, 0);
    let seg = |t: &MemoryTable<'_>, at: u64, n: u64| {
        t.fast_segment(mr, at, n)
            .map(|s| (s.lam.index(), s.offset, s.len))
    };
    let (lam_a, lam_b) = (0, 1);
    assert_eq!(seg(&t, 0, 0x1900), Ok((lam_a, 0, 0x100)));
    assert_eq!(seg(&t, 0x100, 0x1800), Ok((lam_b, 0x1000, 0x1000)));
    assert_eq!(seg(&t, 0x1100, 0x800), Ok((lam_a, 0x100, 0x800)));
    assert_eq!(seg(&t, 0x18FF, 1), Ok((lam_a, 0x8FF, 1)));
    assert_eq!(seg(&t, 0x80, 0x200), Ok((lam_a, 0x80, 0x80)));
    assert_eq!(seg(&t, 0x1900, 1), Err(AccessError::Bounds));
    assert_eq!(seg(&t, 0x18FF, 2), Err(AccessError::Bounds));
    // A page whose LAM is released stops resolving; the others still do.
    assert_eq!(t.release_lam(b[0]).map(LamId::index), Some(lam_b));
    assert_eq!(seg(&t, 0x100, 1), Err(AccessError::Token));
    assert_eq!(seg(&t, 0x1100, 1), Ok((lam_a, 0x100, 1)));
    t.invalidate(pd, mr).unwrap();
    // A registration whose FBO is below its first LAM's: the bytes before the LAM's FBO are not
    // mapped by it.
    let request = post(&mut t, pd, mr, fr(1, 0, 0x1000, 0x7000, 0), &a[..1]).unwrap();
    t.fast_register(pd, mr, &request).unwrap();
    assert_eq!(seg(&t, 0, 1), Err(AccessError::Bounds));
    assert_eq!(seg(&t, 0xF00, 0x100), Ok((lam_a, 0, 0x100)));
}

#[test]
fn a_forged_or_stale_page_array_is_refused_when_posted() {
    let mut s = slots(4);
    let mut t = table(&mut s);
    let pd = t.create_pd().unwrap();
    let mr = t.create_mr(pd, true).unwrap();
    t.init_fast_register(mr, 2, true).unwrap();
    let good = lam(&mut t, BASE, 0x2000);
    let gone = lam(&mut t, BASE, 0x1000);
    assert!(t.release_lam(gone[0]).is_some());
    let mut other_slots = vec![LamSlot::FREE; 8];
    let mut foreign = LamTable::new(&mut other_slots, 0x77).unwrap();
    let g = Geometry::of(BASE, 0x1000, 1 << 40).unwrap();
    let foreign_page = foreign.build(&g, 0x1000).unwrap().first;
    let request = fr(2, 0, 0x2000, BASE, op_flags::ALLOW_REMOTE_READ);
    let staged = post(&mut t, pd, mr, request, &good).unwrap();
    for forged in [
        [good[0], good[0] + 8],
        [good[0], gone[0]],
        [good[1], good[1] + 0x1000],
        [good[0], 0x7FF0_0000_2000],
        [good[0], foreign_page],
        [0, good[1]],
    ] {
        assert_eq!(
            post(&mut t, pd, mr, request, &forged),
            Err(CallStatus::InvalidParameter),
            "{forged:x?}"
        );
    }
    assert_eq!(
        t.fast_register(pd, mr, &staged),
        Err(CompletionStatus::InvalidParameter),
        "a refused array took the staged one's bank"
    );
    let again = post(&mut t, pd, mr, request, &good).unwrap();
    t.fast_register(pd, mr, &again).unwrap();
}

#[test]
fn a_later_post_takes_the_staged_bank_over_and_the_current_one_waits() {
    let mut s = slots(4);
    let mut t = table(&mut s);
    let pd = t.create_pd().unwrap();
    let mr = t.create_mr(pd, true).unwrap();
    t.init_fast_register(mr, 1, true).unwrap();
    let x = lam(&mut t, BASE, 0x1000);
    let y = lam(&mut t, BASE, 0x1000);
    let request = fr(1, 0, 0x1000, BASE, op_flags::ALLOW_REMOTE_WRITE);
    let first = post(&mut t, pd, mr, request, &x).unwrap();
    let second = post(&mut t, pd, mr, request, &y).unwrap();
    assert_eq!(
        t.fast_register(pd, mr, &first),
        Err(CompletionStatus::InvalidParameter),
        "superseded"
    );
    t.fast_register(pd, mr, &second).unwrap();
    let lam_of = |t: &MemoryTable<'_>| t.fast_segment(mr, 0, 1).map(|s| s.lam.index());
    assert_eq!(lam_of(&t), Ok(1));
    // Staged while valid (an invalidate queued before it): the current pages stay until it runs.
    let third = post(&mut t, pd, mr, request, &x).unwrap();
    assert_eq!(lam_of(&t), Ok(1));
    t.invalidate(pd, mr).unwrap();
    t.fast_register(pd, mr, &third).unwrap();
    assert_eq!(lam_of(&t), Ok(0));
    // A new initialization drops what was staged.
    t.invalidate(pd, mr).unwrap();
    let fourth = post(&mut t, pd, mr, request, &y).unwrap();
    t.init_fast_register(mr, 1, true).unwrap();
    assert_eq!(
        t.fast_register(pd, mr, &fourth),
        Err(CompletionStatus::InvalidParameter)
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
