//! Logical address mappings and fast-registered regions (ndkpi.md §2.1, §5, §8 rules
//! 44-45) through the simulated consumer (`sim::ndk_memory`): the cases of group NdkConformance
//! on `NdkBuildLAM` / `NdkReleaseLAM`, `NdkFastRegister`'s inline refusals, the provisioned page
//! pool, and RDMA through a fast-registered region between two adapters; and NdkPing's case of
//! SMB Direct's pattern (a WRITE into a fast-registered buffer, then the peer's SEND with
//! invalidate).

use ndis_sys::ndkpi::{
    NDK_OP_FLAG_ALLOW_LOCAL_WRITE, NDK_OP_FLAG_ALLOW_REMOTE_READ, NDK_OP_FLAG_ALLOW_REMOTE_WRITE,
    NDK_RESULT_EX, NdkOperationTypeFastRegister, NdkOperationTypeInvalidate, NdkOperationTypeRead,
    NdkOperationTypeReceive, NdkOperationTypeReceiveAndInvalidate, NdkOperationTypeSend,
    NdkOperationTypeWrite,
};
use ndis_sys::status::{
    NDIS_STATUS_INVALID_PARAMETER, NDIS_STATUS_RESOURCES, NDIS_STATUS_SUCCESS,
    STATUS_ACCESS_VIOLATION, STATUS_BUFFER_TOO_SMALL, STATUS_CANCELLED,
};

use crate::facts::{PROVISIONED_FRMR_CHUNKS, PROVISIONED_LAMS};
use crate::kit::ndk::ping::{Side, close_connection, connect, on_pair, side_with};
use crate::kit::{Case, CaseResult, ensure, expect_eq, finish, note, started};
use crate::sim::Registry;
use crate::sim::consumer::NdkConsumer;
use crate::sim::mdl::{MdlChain, MdlKind};
use crate::sim::ndk_memory::{FBO_UNSET, LAM_FILL, LamReply};
use crate::sim::ndk_objects::Mr;
use dcbndk_core::ndk::Profile;

const PAGE: usize = 4096;
/// Where a fast-registered buffer's region starts in its memory: an odd offset, so the FBO is
/// never 0 (the memory's own page offset is a multiple of 16).
const START: usize = 0x123;
/// The fast-registered region: four pages' worth, over three MDLs.
const LEN: usize = 3 * PAGE + 0x200;
/// Areas of each side's registered buffer (`ndk_ping::side_with`, 128 KiB).
const MSG_TX: u64 = 0;
const MSG_RX: u64 = 4096;
const RDMA: u64 = 8192;
const RDMA2: u64 = 32768;
const BUFFER: usize = 128 * 1024;

/// The cases of group NdkConformance.
pub fn cases() -> Vec<Case> {
    vec![
        Case::new(
            "§2.1 NdkBuildLAM: a NULL or short buffer -> BUFFER_TOO_SMALL and the size (16 + 8 per page spanned), nothing else written; a large one -> SUCCESS inline (no completion), AdapterPageCount page-aligned distinct addresses, FBO the region's page offset, *pLAMSize the bytes written; a chain not virtually contiguous, a zero length or one past the chain -> INVALID_PARAMETER; the provisioned table full -> INSUFFICIENT_RESOURCES until a release; a second release of a LAM changes nothing",
            lam_build_and_release,
        ),
        Case::new(
            "§5 NdkFastRegister refused inline, with no completion: a page array with an address this adapter never handed out, unaligned, past its LAM or of a released LAM, more pages than initialized, an MR not initialized, a base VA not a multiple of PAGE_SIZE plus FBO -> INVALID_PARAMETER; remote flags on a region initialized without remote access -> ACCESS_VIOLATION; the request posted waits for the connection and completes CANCELLED when the QP closes",
            fast_register_refusals,
        ),
        Case::new(
            "§5 NdkInitializeFastRegisterMr: the provisioned page pool holds 32 regions of FRMRPageCount pages (two banks each); the next -> INSUFFICIENT_RESOURCES until one closes",
            fast_register_pool,
        ),
        Case::new(
            "rule 44: a region fast-registered over the pages of a LAM (non-zero FBO, three MDLs): the peer's RDMA WRITE of it all, a WRITE across a page boundary and a READ are exact; a SEND from and a READ into privileged-token logical addresses spanning pages are exact; after NdkInvalidate the peer's WRITE completes ACCESS_VIOLATION and the memory is unchanged",
            fast_register_rdma,
        ),
    ]
}

/// NdkPing's case.
pub fn ping_cases() -> Vec<Case> {
    vec![Case::new(
        "RDMA WRITE into a fast-registered region (SMB Direct's pattern): the data exact, then the peer's SEND with invalidate completes the receive ReceiveAndInvalidate with the token; a later WRITE -> ACCESS_VIOLATION, a local invalidate -> INVALID_PARAMETER (rule 45)",
        write_then_send_and_invalidate,
    )]
}

/// Runs `body` with an open consumer on a started adapter, then checks the verifier and halts.
fn on_consumer(body: impl FnOnce(&NdkConsumer<'_>) -> Result<(), String>) -> CaseResult {
    let a = started(Registry::inf_defaults())?;
    let result = NdkConsumer::open_lowest(&a)
        .map_err(|s| format!("open: {s:#x}"))
        .and_then(|ndk| {
            let r = body(&ndk);
            ndk.close();
            r
        });
    let checked = a.check();
    let finished = finish(a);
    result?;
    checked?;
    finished?;
    Ok(None)
}

/// A chain of `len` bytes from an odd offset of its memory, cut in three MDLs of `kind`.
fn odd_chain(len: usize, kind: MdlKind) -> MdlChain {
    let (a, b) = (START + len / 3 + 7, START + 2 * len / 3 + 1);
    MdlChain::ranges(
        vec![0u8; START + len + 64],
        &[(START..a, kind), (a..b, kind), (b..START + len, kind)],
    )
}

/// The FBO and page count of the `len` bytes at `va`.
fn geometry(va: u64, len: usize) -> (u32, usize) {
    let fbo = (va & 0xFFF) as usize;
    (fbo as u32, (fbo + len).div_ceil(PAGE))
}

/// Builds a LAM of `chain`'s first `len` bytes, asking for its size first; checked.
fn built(ndk: &NdkConsumer<'_>, chain: &MdlChain, len: usize) -> Result<LamReply, String> {
    let asked = ndk.build_lam(chain, len, None);
    expect_eq("NdkBuildLAM size", asked.status, STATUS_BUFFER_TOO_SMALL)?;
    let reply = ndk.build_lam(chain, len, Some(asked.size));
    expect_eq("NdkBuildLAM", reply.status, NDIS_STATUS_SUCCESS)?;
    Ok(reply)
}

fn lam_build_and_release() -> CaseResult {
    on_consumer(|ndk| {
        let len = 10_000;
        let chain = odd_chain(len, MdlKind::LockedUnmapped);
        let (fbo, pages) = geometry(chain.virtual_address(), len);
        ensure(fbo != 0, || "the region starts on a page boundary".into())?;
        let size = u32::try_from(16 + 8 * pages).map_err(|e| e.to_string())?;
        for given in [None, Some(0), Some(size - 1)] {
            let r = ndk.build_lam(&chain, len, given);
            expect_eq(
                &format!("status for {given:?}"),
                r.status,
                STATUS_BUFFER_TOO_SMALL,
            )?;
            expect_eq(&format!("size for {given:?}"), r.size, size)?;
            expect_eq(&format!("FBO for {given:?}"), r.fbo, FBO_UNSET)?;
            ensure(
                r.buffer
                    .iter()
                    .flat_map(|b| b.iter())
                    .all(|&w| w == LAM_FILL),
                || format!("a short buffer ({given:?}) was written"),
            )?;
        }
        let mut lam = ndk.build_lam(&chain, len, Some(size + 16));
        expect_eq("status", lam.status, NDIS_STATUS_SUCCESS)?;
        expect_eq("*pLAMSize", lam.size, size)?;
        expect_eq("*pFBO", lam.fbo, fbo)?;
        expect_eq("AdapterPageCount", lam.page_count(), Some(pages as u32))?;
        let words = lam.buffer.as_deref().ok_or("no buffer")?;
        expect_eq(
            "the padding after AdapterPageCount",
            words.get(1).map(|w| w >> 32),
            Some(LAM_FILL >> 32),
        )?;
        expect_eq(
            "words past the array",
            words.get(2 + pages..).map(<[u64]>::to_vec),
            Some(vec![LAM_FILL; 2]),
        )?;
        let addresses = lam.pages();
        let mut distinct = addresses.clone();
        distinct.sort_unstable();
        distinct.dedup();
        ensure(
            distinct.len() == pages
                && addresses
                    .iter()
                    .all(|&p| p != 0 && p % PAGE as u64 == 0 && p >> 63 == 0),
            || format!("page addresses {addresses:x?}"),
        )?;
        ndk.release_lam(&mut lam);
        let gap = MdlChain::ranges(
            vec![0u8; 3 * PAGE],
            &[
                (0..PAGE, MdlKind::LockedUnmapped),
                (PAGE + 8..2 * PAGE, MdlKind::LockedUnmapped),
            ],
        );
        for (what, c, n) in [
            ("a zero length", &chain, 0),
            ("one byte past the chain", &chain, len + 1),
            ("a chain with a gap", &gap, PAGE + 100),
        ] {
            let r = ndk.build_lam(c, n, Some(4096));
            expect_eq(what, r.status, NDIS_STATUS_INVALID_PARAMETER)?;
            expect_eq(&format!("{what}: size"), r.size, 4096)?;
        }
        // The provisioned table: every LAM over one page of nonpaged memory.
        let page = MdlChain::split(vec![1u8; PAGE], &[], MdlKind::NonPagedPool);
        let mut all = Vec::new();
        for _ in 0..PROVISIONED_LAMS {
            all.push(built(ndk, &page, PAGE)?);
        }
        let over = ndk.build_lam(&page, PAGE, Some(64));
        expect_eq("one LAM more", over.status, NDIS_STATUS_RESOURCES)?;
        let mut first = all.swap_remove(0);
        ndk.release_lam(&mut first);
        ndk.release_lam(&mut first);
        all.push(built(ndk, &page, PAGE)?);
        let over = ndk.build_lam(&page, PAGE, Some(64));
        expect_eq(
            "after a release released twice",
            over.status,
            NDIS_STATUS_RESOURCES,
        )?;
        for mut lam in all {
            ndk.release_lam(&mut lam);
        }
        note(format!("{} LAMs built and released", PROVISIONED_LAMS + 1));
        Ok(())
    })
}

/// A refused `NdkFastRegister`: what is wrong, the MR, the page array, the base VA, the flags
/// and the status.
type Refusal<'m> = (&'static str, &'m Mr, Vec<u64>, u64, u32, i32);

fn fast_register_refusals() -> CaseResult {
    on_consumer(|ndk| {
        let pd = ndk.create_pd().map_err(|s| format!("PD: {s:#x}"))?;
        let cq = ndk.create_cq(16).map_err(|s| format!("CQ: {s:#x}"))?;
        let qp = ndk
            .create_qp(&pd, &cq, &cq, 0x51DE, [4, 8, 1, 1, 0])
            .map_err(|s| format!("QP: {s:#x}"))?;
        let chain = odd_chain(2 * PAGE, MdlKind::NonPagedPool);
        let mut lam = built(ndk, &chain, 2 * PAGE)?;
        let mut gone = built(ndk, &chain, PAGE)?;
        let stale = gone.pages()[0];
        ndk.release_lam(&mut gone);
        let p = lam.pages();
        let fbo = lam.fbo;
        let base = 0x4000_0000 + u64::from(fbo);
        let mr = ndk
            .create_mr(&pd, true)
            .map_err(|s| format!("MR: {s:#x}"))?;
        let bare = ndk
            .create_mr(&pd, true)
            .map_err(|s| format!("MR: {s:#x}"))?;
        expect_eq(
            "NdkInitializeFastRegisterMr",
            ndk.init_fast_register(&mr, 3, false),
            NDIS_STATUS_SUCCESS,
        )?;
        let local = NDK_OP_FLAG_ALLOW_LOCAL_WRITE;
        let last = *p.last().ok_or("no pages")?;
        let refused: [Refusal<'_>; 10] = [
            (
                "an address never handed out",
                &mr,
                vec![p[0], 0x7FF0_0000_1000],
                base,
                local,
                NDIS_STATUS_INVALID_PARAMETER,
            ),
            (
                "a page address + 8",
                &mr,
                vec![p[0] + 8],
                base,
                local,
                NDIS_STATUS_INVALID_PARAMETER,
            ),
            (
                "the page after the LAM's last",
                &mr,
                vec![last + PAGE as u64],
                base,
                local,
                NDIS_STATUS_INVALID_PARAMETER,
            ),
            (
                "a released LAM's page",
                &mr,
                vec![p[0], stale],
                base,
                local,
                NDIS_STATUS_INVALID_PARAMETER,
            ),
            (
                "a negative address",
                &mr,
                vec![0x8000_0000_0000_0000 | p[0]],
                base,
                local,
                NDIS_STATUS_INVALID_PARAMETER,
            ),
            (
                "more pages than initialized",
                &mr,
                vec![p[0], p[1], p[0], p[1]],
                base,
                local,
                NDIS_STATUS_INVALID_PARAMETER,
            ),
            (
                "an MR not initialized",
                &bare,
                vec![p[0]],
                base,
                local,
                NDIS_STATUS_INVALID_PARAMETER,
            ),
            (
                "a base VA not PAGE_SIZE * n + FBO",
                &mr,
                vec![p[0]],
                base + 1,
                local,
                NDIS_STATUS_INVALID_PARAMETER,
            ),
            (
                "remote read without remote access",
                &mr,
                vec![p[0]],
                base,
                NDK_OP_FLAG_ALLOW_REMOTE_READ,
                STATUS_ACCESS_VIOLATION,
            ),
            (
                "remote write without remote access",
                &mr,
                vec![p[0]],
                base,
                NDK_OP_FLAG_ALLOW_REMOTE_WRITE,
                STATUS_ACCESS_VIOLATION,
            ),
        ];
        for (i, (what, m, pages, va, flags, want)) in refused.iter().enumerate() {
            let status = ndk.fast_register(&qp, 0xBAD0 + i, m, pages, fbo, 100, *va, *flags);
            expect_eq(what, status, *want)?;
        }
        let status = ndk.fast_register(&qp, 0x600D, &mr, &p, fbo, 2 * PAGE, base, local);
        expect_eq("a valid page array", status, NDIS_STATUS_SUCCESS)?;
        ensure(ndk.results(&cq, 16).is_empty(), || {
            "a completion before the QP connected".into()
        })?;
        expect_eq(
            "close QP",
            qp.close(ndk, qp.dispatch.NdkCloseQp),
            NDIS_STATUS_SUCCESS,
        )?;
        let got: Vec<_> = ndk
            .results(&cq, 16)
            .iter()
            .map(|r| (r.RequestContext as usize, r.Type, r.Status))
            .collect();
        expect_eq(
            "completions at the close",
            got,
            vec![(0x600D, NdkOperationTypeFastRegister, STATUS_CANCELLED)],
        )?;
        ndk.release_lam(&mut lam);
        for (name, status) in [
            ("MR", mr.close(ndk, mr.dispatch.NdkCloseMr)),
            ("bare MR", bare.close(ndk, bare.dispatch.NdkCloseMr)),
            ("PD", pd.close(ndk, pd.dispatch.NdkClosePd)),
            ("CQ", cq.close(ndk, cq.dispatch.NdkCloseCq)),
        ] {
            expect_eq(&format!("close {name}"), status, NDIS_STATUS_SUCCESS)?;
        }
        Ok(())
    })
}

fn fast_register_pool() -> CaseResult {
    on_consumer(|ndk| {
        let pd = ndk.create_pd().map_err(|s| format!("PD: {s:#x}"))?;
        let pages = Profile::ROCE_V2_100G.frmr_page_count;
        let fit = PROVISIONED_FRMR_CHUNKS * 16 / (2 * pages as usize);
        expect_eq("regions of FRMRPageCount the pool holds", fit, 32)?;
        let mut mrs = Vec::new();
        for i in 0..=fit {
            let mr = ndk
                .create_mr(&pd, true)
                .map_err(|s| format!("MR {i}: {s:#x}"))?;
            let status = ndk.init_fast_register(&mr, pages, true);
            let want = if i < fit {
                NDIS_STATUS_SUCCESS
            } else {
                NDIS_STATUS_RESOURCES
            };
            expect_eq(&format!("region {i}"), status, want)?;
            mrs.push(mr);
        }
        let first = mrs.remove(0);
        expect_eq(
            "close one",
            first.close(ndk, first.dispatch.NdkCloseMr),
            NDIS_STATUS_SUCCESS,
        )?;
        let waiting = mrs.last().ok_or("no MR")?;
        expect_eq(
            "the last region, once one closed",
            ndk.init_fast_register(waiting, pages, true),
            NDIS_STATUS_SUCCESS,
        )?;
        for mr in mrs {
            expect_eq(
                "close",
                mr.close(ndk, mr.dispatch.NdkCloseMr),
                NDIS_STATUS_SUCCESS,
            )?;
        }
        expect_eq(
            "close PD",
            pd.close(ndk, pd.dispatch.NdkClosePd),
            NDIS_STATUS_SUCCESS,
        )
    })
}

/// A side's fast-registered region: its memory, LAM and MR.
struct Fast {
    chain: MdlChain,
    lam: LamReply,
    mr: Mr,
    base: u64,
    token: u32,
}

impl Fast {
    /// The region's bytes now.
    fn bytes(&self) -> Vec<u8> {
        self.chain.memory()[START..START + LEN].to_vec()
    }

    fn close(mut self, s: &Side<'_>) -> Result<(), String> {
        s.ndk.release_lam(&mut self.lam);
        expect_eq(
            "close the fast MR",
            self.mr.close(&s.ndk, self.mr.dispatch.NdkCloseMr),
            NDIS_STATUS_SUCCESS,
        )
    }
}

/// Builds a LAM over a fresh buffer of `s` and fast-registers a region over its pages on `s`'s
/// QP (connected), for remote READ and WRITE; checks the completion.
fn fast_region(s: &Side<'_>) -> Result<Fast, String> {
    let chain = odd_chain(LEN, MdlKind::LockedUnmapped);
    let lam = built(&s.ndk, &chain, LEN)?;
    let (fbo, pages) = geometry(chain.virtual_address(), LEN);
    expect_eq("the LAM's FBO", lam.fbo, fbo)?;
    ensure(fbo != 0, || "the region starts on a page boundary".into())?;
    let mr = s
        .ndk
        .create_mr(&s.pd, true)
        .map_err(|e| format!("MR: {e:#x}"))?;
    expect_eq(
        "NdkInitializeFastRegisterMr",
        s.ndk.init_fast_register(&mr, pages as u32, true),
        NDIS_STATUS_SUCCESS,
    )?;
    let base = 0x4000_0000 + u64::from(fbo);
    let flags = NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_REMOTE_WRITE;
    let status = s
        .ndk
        .fast_register(&s.qp, 0xF0, &mr, &lam.pages(), fbo, LEN, base, flags);
    expect_eq("NdkFastRegister", status, NDIS_STATUS_SUCCESS)?;
    expect_kinds(
        &s.completions(1)?,
        &[(0xF0, NdkOperationTypeFastRegister, NDIS_STATUS_SUCCESS)],
    )?;
    let token = s.ndk.mr_token(&mr, true);
    Ok(Fast {
        chain,
        lam,
        mr,
        base,
        token,
    })
}

fn expect_kinds(got: &[NDK_RESULT_EX], want: &[(usize, i32, i32)]) -> Result<(), String> {
    let mut seen: Vec<(usize, i32, i32)> = got
        .iter()
        .map(|r| (r.RequestContext as usize, r.Type, r.Status))
        .collect();
    seen.sort_unstable();
    let mut want = want.to_vec();
    want.sort_unstable();
    expect_eq("completions", seen, want)
}

fn pattern(seed: usize, len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 + seed * 7 + 1) as u8).collect()
}

/// `a` WRITEs (`write`) or READs `len` bytes between its buffer at `at` and `remote`; the
/// completion's status.
fn rdma(
    a: &Side<'_>,
    write: bool,
    ctx: usize,
    at: u64,
    len: u32,
    remote: (u64, u32),
) -> Result<i32, String> {
    let status = a
        .ndk
        .rdma(&a.qp, write, ctx, &[(a.base + at, len, a.token)], remote);
    expect_eq("post", status, NDIS_STATUS_SUCCESS)?;
    let got = a.completions(1)?;
    let r = got.first().ok_or("no completion")?;
    let kind = if write {
        NdkOperationTypeWrite
    } else {
        NdkOperationTypeRead
    };
    expect_eq(
        "completion",
        (r.RequestContext as usize, r.Type),
        (ctx, kind),
    )?;
    Ok(r.Status)
}

fn fast_register_rdma() -> CaseResult {
    on_pair(|a, b| {
        let (sa, sb) = (side_with(a, BUFFER)?, side_with(b, BUFFER)?);
        let (c, l) = connect(&sa, &sb, false)?;
        let fast = fast_region(&sb)?;
        let region = (fast.base, fast.token);
        // The whole region: across its four pages and three MDLs.
        let data = pattern(1, LEN);
        sa.chain.write_memory(RDMA as usize, &data);
        let len = LEN as u32;
        expect_eq(
            "WRITE all",
            rdma(&sa, true, 0x71, RDMA, len, region)?,
            NDIS_STATUS_SUCCESS,
        )?;
        expect_eq("the region after the WRITE", fast.bytes(), data.clone())?;
        // From an odd offset across a page boundary.
        let part = pattern(2, 3001);
        sa.chain.write_memory(RDMA2 as usize, &part);
        let at = (fast.base + 3999, fast.token);
        expect_eq(
            "WRITE part",
            rdma(&sa, true, 0x72, RDMA2, 3001, at)?,
            NDIS_STATUS_SUCCESS,
        )?;
        let mut expected = data;
        expected[3999..3999 + 3001].copy_from_slice(&part);
        expect_eq(
            "the region after the second WRITE",
            fast.bytes(),
            expected.clone(),
        )?;
        let read = (fast.base + 100, fast.token);
        expect_eq(
            "READ",
            rdma(&sa, false, 0x73, RDMA2, 8000, read)?,
            NDIS_STATUS_SUCCESS,
        )?;
        expect_eq(
            "the bytes READ",
            sa.chain.memory()[RDMA2 as usize..][..8000].to_vec(),
            expected[100..8100].to_vec(),
        )?;
        // The privileged token: logical addresses of the LAM, across a page of it.
        let privileged = sb.ndk.privileged_token(&sb.pd);
        let pages = fast.lam.pages();
        let fbo = fast.lam.fbo as usize;
        expect_eq(
            "A's receive",
            sa.ndk
                .receive(&sa.qp, 0xA0, &[(sa.base + MSG_RX, 64, sa.token)]),
            NDIS_STATUS_SUCCESS,
        )?;
        let send = [(pages[1] + PAGE as u64 - 30, 64, privileged)];
        expect_eq(
            "B's SEND",
            sb.ndk.send(&sb.qp, 0xB1, &send, 0),
            NDIS_STATUS_SUCCESS,
        )?;
        expect_kinds(
            &sb.completions(1)?,
            &[(0xB1, NdkOperationTypeSend, NDIS_STATUS_SUCCESS)],
        )?;
        expect_kinds(
            &sa.completions(1)?,
            &[(0xA0, NdkOperationTypeReceive, NDIS_STATUS_SUCCESS)],
        )?;
        let from = 2 * PAGE - 30 - fbo;
        expect_eq(
            "the bytes sent from logical addresses",
            sa.chain.memory()[MSG_RX as usize..][..64].to_vec(),
            expected[from..from + 64].to_vec(),
        )?;
        let fresh = pattern(3, 256);
        sa.chain.write_memory(MSG_TX as usize, &fresh);
        let sink = [(pages[2] + PAGE as u64 - 100, 256, privileged)];
        let status = sb
            .ndk
            .rdma(&sb.qp, false, 0xB2, &sink, (sa.base + MSG_TX, sa.token));
        expect_eq(
            "B's READ into logical addresses",
            status,
            NDIS_STATUS_SUCCESS,
        )?;
        expect_kinds(
            &sb.completions(1)?,
            &[(0xB2, NdkOperationTypeRead, NDIS_STATUS_SUCCESS)],
        )?;
        let into = 3 * PAGE - 100 - fbo;
        expected[into..into + 256].copy_from_slice(&fresh);
        expect_eq(
            "the region after the READ into it",
            fast.bytes(),
            expected.clone(),
        )?;
        // Invalidated: the token no longer works, nothing is written.
        expect_eq(
            "NdkInvalidate",
            sb.ndk.invalidate(&sb.qp, 0xB3, &fast.mr),
            NDIS_STATUS_SUCCESS,
        )?;
        expect_kinds(
            &sb.completions(1)?,
            &[(0xB3, NdkOperationTypeInvalidate, NDIS_STATUS_SUCCESS)],
        )?;
        let status = rdma(&sa, true, 0x74, RDMA, 100, region)?;
        expect_eq(
            "WRITE after the invalidate",
            status,
            STATUS_ACCESS_VIOLATION,
        )?;
        expect_eq("the region after the refused WRITE", fast.bytes(), expected)?;
        fast.close(&sb)?;
        close_connection(&sa, &sb, c, l)?;
        sa.close()?;
        sb.close()
    })
}

fn write_then_send_and_invalidate() -> CaseResult {
    on_pair(|a, b| {
        let (sa, sb) = (side_with(a, BUFFER)?, side_with(b, BUFFER)?);
        let (c, l) = connect(&sa, &sb, false)?;
        let fast = fast_region(&sb)?;
        let data = pattern(4, LEN);
        sa.chain.write_memory(RDMA as usize, &data);
        let region = (fast.base, fast.token);
        let status = rdma(&sa, true, 0x81, RDMA, LEN as u32, region)?;
        expect_eq("WRITE", status, NDIS_STATUS_SUCCESS)?;
        expect_eq("the region after the WRITE", fast.bytes(), data.clone())?;
        expect_eq(
            "B's receive",
            sb.ndk
                .receive(&sb.qp, 0xB0, &[(sb.base + MSG_RX, 64, sb.token)]),
            NDIS_STATUS_SUCCESS,
        )?;
        let send = [(sa.base + MSG_TX, 64, sa.token)];
        let status = sa.ndk.send_and_invalidate(&sa.qp, 0x82, &send, fast.token);
        expect_eq("NdkSendAndInvalidate", status, NDIS_STATUS_SUCCESS)?;
        expect_kinds(
            &sa.completions(1)?,
            &[(0x82, NdkOperationTypeSend, NDIS_STATUS_SUCCESS)],
        )?;
        let got = sb.completions(1)?;
        let r = got.first().ok_or("no receive")?;
        expect_eq(
            "B's receive",
            (
                r.RequestContext as usize,
                r.Type,
                r.Status,
                r.BytesTransferred,
            ),
            (
                0xB0,
                NdkOperationTypeReceiveAndInvalidate,
                NDIS_STATUS_SUCCESS,
                64,
            ),
        )?;
        expect_eq(
            "the token invalidated",
            r.TypeSpecificCompletionOutput,
            fast.token as usize,
        )?;
        let status = rdma(&sa, true, 0x83, RDMA, 64, region)?;
        expect_eq(
            "WRITE after the invalidate",
            status,
            STATUS_ACCESS_VIOLATION,
        )?;
        expect_eq("the region", fast.bytes(), data)?;
        expect_eq(
            "NdkInvalidate",
            sb.ndk.invalidate(&sb.qp, 0xB1, &fast.mr),
            NDIS_STATUS_SUCCESS,
        )?;
        expect_kinds(
            &sb.completions(1)?,
            &[(
                0xB1,
                NdkOperationTypeInvalidate,
                NDIS_STATUS_INVALID_PARAMETER,
            )],
        )?;
        fast.close(&sb)?;
        close_connection(&sa, &sb, c, l)?;
        sa.close()?;
        sb.close()
    })
}
