//! The views of the consumer's buffers an NDKPI call hands over, each a pointer with the length
//! the call gives for it: socket addresses in and out (ndkpi.md §4), private data, SGE lists
//! (§0), CQ result arrays (§3.2), a fast registration's page array and an MDL chain (§5), the
//! adapter information buffer (§6.3). The trampoline pairs each pointer with its length
//! (`(pointer, length)`), so that no safe caller can pair it with another.

use core::marker::PhantomData;
use core::ptr::NonNull;

use dcbndk_core::ndk::provider::CallStatus;
use dcbndk_core::ndk::provider::cm::wire::MAX_PRIVATE_DATA;
use dcbndk_core::ndk::provider::mr::lam::page_address;
use dcbndk_core::ndk::provider::mr::{FastRegistration, MrId};
use dcbndk_core::ndk::provider::qp::Sge;
use dcbndk_core::ndk::tables::SockAddr;

use super::{FromAbi, InOut};
use crate::resources::mdl::{self, MdlError};
use crate::resources::provider::Provider;
use ndis_sys::ndkinfo::{NDK_ADAPTER_INFO, NDK_VERSION};
use ndis_sys::ndkpi::{NDK_LOGICAL_ADDRESS, NDK_LOGICAL_ADDRESS_MAPPING, NDK_SGE};
use ndis_sys::status::{
    NDIS_STATUS_INVALID_PARAMETER, NDIS_STATUS_SUCCESS, STATUS_BUFFER_TOO_SMALL,
};
use ndis_sys::types::{NTSTATUS, PVOID, ULONG};
use ndis_sys::wdm::PMDL;
use ndis_sys::ws2ipdef::SOCKADDR;

/// The largest socket address (`SOCKADDR_IN6`).
const MAX_SOCKADDR: usize = 28;

/// The most SGEs one request can carry: the profile's `MaxSge` is at most this (checked by the
/// core against the QP's own limit; a request with more fails `STATUS_INVALID_PARAMETER`).
pub const MAX_SGES: usize = 16;

/// A socket address the consumer passes (`pAddress`, `AddressLength`).
///
/// Invariant: `address` is null or valid for `len` bytes of reads for the call.
#[derive(Clone, Copy)]
pub struct SockAddrIn<'a> {
    address: *const SOCKADDR,
    len: ULONG,
    _call: PhantomData<&'a SOCKADDR>,
}

/// Invariant: as [`SockAddrIn`]'s.
impl FromAbi<(*mut SOCKADDR, ULONG)> for SockAddrIn<'_> {
    unsafe fn from_abi((address, len): (*mut SOCKADDR, ULONG)) -> Self {
        SockAddrIn {
            address,
            len,
            _call: PhantomData,
        }
    }
}

impl SockAddrIn<'_> {
    /// The address; `None` when null, too short for its family, or of another family.
    #[must_use]
    pub fn read(&self) -> Option<SockAddr> {
        if self.address.is_null() {
            return None;
        }
        let len = usize::try_from(self.len).ok()?.min(MAX_SOCKADDR);
        let mut bytes = [0u8; MAX_SOCKADDR];
        let dst = bytes.get_mut(..len)?;
        // SAFETY: `len` <= the given length bytes are readable at `address` (the type's
        // invariant); `dst` is ours.
        unsafe { core::ptr::copy_nonoverlapping(self.address.cast::<u8>(), dst.as_mut_ptr(), len) };
        SockAddr::from_bytes(dst)
    }
}

/// A buffer for a socket address and its length (`pAddress`, `pAddressLength`).
///
/// Invariant: `length` is null or valid for a read and a write; `address` is null or valid for
/// as many bytes of writes as `*length` says on entry, for the call.
pub struct SockAddrOut<'a> {
    address: *mut SOCKADDR,
    length: Option<InOut<'a, ULONG>>,
}

/// Invariant: as [`SockAddrOut`]'s.
impl FromAbi<(*mut SOCKADDR, *mut ULONG)> for SockAddrOut<'_> {
    unsafe fn from_abi((address, length): (*mut SOCKADDR, *mut ULONG)) -> Self {
        SockAddrOut {
            address,
            // SAFETY: null or valid for a read and a write (the invariant above).
            length: unsafe { FromAbi::from_abi(length) },
        }
    }
}

impl SockAddrOut<'_> {
    /// Writes `value` and its size to `*length`: `STATUS_BUFFER_TOO_SMALL` (the size written)
    /// when the buffer is null or shorter, `STATUS_INVALID_PARAMETER` for a null length.
    #[must_use]
    pub fn write(&self, value: &SockAddr) -> NTSTATUS {
        let Some(length) = &self.length else {
            return NDIS_STATUS_INVALID_PARAMETER;
        };
        let needed = value.sockaddr_len();
        let given = length.read();
        length.write(ULONG::try_from(needed).unwrap_or(ULONG::MAX));
        if self.address.is_null() || usize::try_from(given).unwrap_or(0) < needed {
            return STATUS_BUFFER_TOO_SMALL;
        }
        let bytes = value.to_bytes();
        let Some(src) = bytes.get(..needed) else {
            return NDIS_STATUS_INVALID_PARAMETER;
        };
        // SAFETY: `needed` <= `given` bytes are writable at `address` (the type's invariant).
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), self.address.cast::<u8>(), needed) };
        NDIS_STATUS_SUCCESS
    }
}

/// The private data of a connect, accept or reject (`pPrivateData`, `PrivateDataLength`).
///
/// Invariant: `data` is null or valid for `len` bytes of reads for the call.
#[derive(Clone, Copy)]
pub struct PrivateData<'a> {
    data: PVOID,
    len: ULONG,
    _call: PhantomData<&'a [u8]>,
}

/// Invariant: as [`PrivateData`]'s.
impl FromAbi<(PVOID, ULONG)> for PrivateData<'_> {
    unsafe fn from_abi((data, len): (PVOID, ULONG)) -> Self {
        PrivateData {
            data,
            len,
            _call: PhantomData,
        }
    }
}

impl PrivateData<'_> {
    /// Copies the data into `out`; `None` for more than `MAX_PRIVATE_DATA` bytes or a null
    /// buffer with a length.
    pub fn copy_into<'o>(&self, out: &'o mut [u8; MAX_PRIVATE_DATA]) -> Option<&'o [u8]> {
        let len = usize::try_from(self.len).ok()?;
        if len == 0 {
            return Some(&[]);
        }
        if self.data.is_null() {
            return None;
        }
        let dst = out.get_mut(..len)?;
        // SAFETY: `len` bytes are readable at `data` (the type's invariant); `dst` is ours.
        unsafe { core::ptr::copy_nonoverlapping(self.data.cast::<u8>(), dst.as_mut_ptr(), len) };
        Some(&*dst)
    }
}

/// `NdkGetConnectionData`'s private data buffer and its length (`pPrivateData`,
/// `pPrivateDataLength`), the length read once, when the view is made.
///
/// Invariant: `data` is null or valid for `given` bytes of writes for the call.
pub struct ConnectionDataOut<'a> {
    data: PVOID,
    given: ULONG,
    length: InOut<'a, ULONG>,
}

/// `None` for a null length. Invariant: `length` is null or valid for a read and a write;
/// `data` null or valid for `*length` bytes of writes, for the call.
impl FromAbi<(PVOID, *mut ULONG)> for Option<ConnectionDataOut<'_>> {
    unsafe fn from_abi((data, length): (PVOID, *mut ULONG)) -> Self {
        // SAFETY: null or valid for a read and a write (the invariant above).
        let length =
            unsafe { <Option<InOut<'_, ULONG>> as FromAbi<*mut ULONG>>::from_abi(length) }?;
        let given = length.read();
        Some(ConnectionDataOut {
            data,
            given,
            length,
        })
    }
}

impl ConnectionDataOut<'_> {
    /// `*pPrivateDataLength` as the consumer gave it.
    #[must_use]
    pub const fn given(&self) -> ULONG {
        self.given
    }

    /// Whether a buffer was given.
    #[must_use]
    pub fn has_buffer(&self) -> bool {
        !self.data.is_null()
    }

    /// Copies `src` into the buffer, at most as many bytes as it holds; nothing without one.
    pub fn write_data(&self, src: &[u8]) {
        if self.data.is_null() {
            return;
        }
        let room = usize::try_from(self.given).unwrap_or(usize::MAX);
        let n = src.len().min(room);
        // SAFETY: `n` <= `given` bytes are writable at `data` (the type's invariant).
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), self.data.cast::<u8>(), n) };
    }

    /// Writes `*pPrivateDataLength`.
    pub fn set_length(&self, len: ULONG) {
        self.length.write(len);
    }
}

/// A scatter-gather list (`pSgl`, `nSge`).
///
/// Invariant: `sgl` is null or valid for `n` reads for the call.
#[derive(Clone, Copy)]
pub struct SgeList<'a> {
    sgl: *const NDK_SGE,
    n: ULONG,
    _call: PhantomData<&'a NDK_SGE>,
}

/// Invariant: as [`SgeList`]'s.
impl FromAbi<(*const NDK_SGE, ULONG)> for SgeList<'_> {
    unsafe fn from_abi((sgl, n): (*const NDK_SGE, ULONG)) -> Self {
        SgeList {
            sgl,
            n,
            _call: PhantomData,
        }
    }
}

impl SgeList<'_> {
    /// No list (a work request without SGEs).
    #[must_use]
    pub const fn empty() -> Self {
        SgeList {
            sgl: core::ptr::null(),
            n: 0,
            _call: PhantomData,
        }
    }

    /// Copies the list into `out`, before the provider's lock is taken; `None` for a null list
    /// with entries or more than [`MAX_SGES`].
    pub fn copy_into<'o>(&self, out: &'o mut [Sge; MAX_SGES]) -> Option<&'o [Sge]> {
        let n = usize::try_from(self.n).ok()?;
        if n > MAX_SGES || (n > 0 && self.sgl.is_null()) {
            return None;
        }
        for (i, dst) in out.iter_mut().enumerate().take(n) {
            // `i` < `n` and the list is valid for `n` reads (the type's invariant).
            let at = self.sgl.wrapping_add(i);
            // SAFETY: `at` is inside the consumer's list; it may be unaligned.
            let sge = unsafe { at.read_unaligned() };
            // SAFETY: both members of the union are 8-byte integers or pointers.
            let address = unsafe { sge.address.LogicalAddress };
            *dst = Sge {
                // The bits of the address: a kernel virtual address has the top bit set.
                va: u64::from_ne_bytes(address.to_ne_bytes()),
                len: sge.Length,
                token: sge.MemoryRegionToken,
            };
        }
        out.get(..n)
    }
}

/// The consumer's array of CQ results (`pResult`, `nResults`), of `NDK_RESULT` or
/// `NDK_RESULT_EX`.
///
/// Invariant: `results` is valid for `n` writes for the call.
pub struct ResultsOut<'a, T> {
    results: NonNull<T>,
    n: ULONG,
    _call: PhantomData<&'a mut T>,
}

/// `None` for a null array. Invariant: a non-null `results` is valid for `n` writes.
impl<T> FromAbi<(*mut T, ULONG)> for Option<ResultsOut<'_, T>> {
    unsafe fn from_abi((results, n): (*mut T, ULONG)) -> Self {
        Some(ResultsOut {
            results: NonNull::new(results)?,
            n,
            _call: PhantomData,
        })
    }
}

impl<T> ResultsOut<'_, T> {
    /// The number of entries.
    #[must_use]
    pub const fn len(&self) -> ULONG {
        self.n
    }

    /// Whether the array has no entries.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Writes entry `i`; nothing past the array's end.
    pub fn set(&self, i: usize, entry: T) {
        if i >= usize::try_from(self.n).unwrap_or(usize::MAX) {
            return;
        }
        let at = self.results.as_ptr().wrapping_add(i);
        // SAFETY: `i` < `n`: `at` is inside the consumer's array (the type's invariant); it
        // may be unaligned.
        unsafe { at.write_unaligned(entry) };
    }
}

/// A fast registration with its page array (`AdapterPageArray`, of the registration's
/// `AdapterPageCount` entries): the trampoline pairs them, so that the count the provider reads
/// is the one the consumer gave with the array.
///
/// Invariant: `pages` is null or valid for `registration.page_count` reads for the call (the
/// consumer's array, nonpaged as everything an NDKPI call at DISPATCH_LEVEL hands over).
pub struct FastRegisterPages<'a> {
    pages: *const NDK_LOGICAL_ADDRESS,
    registration: FastRegistration,
    _call: PhantomData<&'a NDK_LOGICAL_ADDRESS>,
}

/// Invariant: as [`FastRegisterPages`]'s.
impl FromAbi<(*const NDK_LOGICAL_ADDRESS, FastRegistration)> for FastRegisterPages<'_> {
    unsafe fn from_abi(
        (pages, registration): (*const NDK_LOGICAL_ADDRESS, FastRegistration),
    ) -> Self {
        FastRegisterPages {
            pages,
            registration,
            _call: PhantomData,
        }
    }
}

impl FastRegisterPages<'_> {
    /// The request's flags.
    #[must_use]
    pub const fn flags(&self) -> u32 {
        self.registration.flags
    }

    /// Stages the registration of region `mr` on the QP in `slot` into the provider's page
    /// pool (`Provider::stage_fast_register`); the registration with its ticket.
    ///
    /// # Errors
    /// The provider's.
    pub fn stage(
        &self,
        provider: &mut Provider,
        slot: usize,
        mr: MrId,
    ) -> Result<FastRegistration, CallStatus> {
        // SAFETY: `pages` is null or valid for `page_count` reads (the type's invariant).
        let ticket =
            unsafe { provider.stage_fast_register(slot, mr, &self.registration, self.pages) }?;
        let mut registration = self.registration;
        registration.ticket = ticket;
        Ok(registration)
    }
}

/// An MDL chain the consumer registers (`Mdl`).
///
/// Invariant: `chain` is the first of a chain of valid MDLs of locked pages, which stay so
/// until the region is deregistered or closed, and which nothing else maps while the
/// registration runs (the DDI's contract, ndkpi.md §5).
#[derive(Clone, Copy)]
pub struct MdlChain<'a> {
    chain: PMDL,
    _call: PhantomData<&'a ()>,
}

/// `None` for a null chain. Invariant: as [`MdlChain`]'s.
impl FromAbi<PMDL> for Option<MdlChain<'_>> {
    unsafe fn from_abi(chain: PMDL) -> Self {
        if chain.is_null() {
            return None;
        }
        Some(MdlChain {
            chain,
            _call: PhantomData,
        })
    }
}

impl MdlChain<'_> {
    /// The chain's virtual address and the length it describes of the first `length` bytes
    /// (`mdl::region`).
    ///
    /// # Errors
    /// As `mdl::region`.
    pub fn region(&self, length: usize) -> Result<(u64, usize), MdlError> {
        // SAFETY: a chain of valid MDLs (the type's invariant).
        unsafe { mdl::region(self.chain, length) }
    }

    /// Maps the MDLs of the first `length` bytes (`mdl::map`).
    ///
    /// # Errors
    /// As `mdl::map`.
    pub fn map(&self, length: usize) -> Result<(), MdlError> {
        // SAFETY: valid MDLs of locked pages that nothing else maps meanwhile (the type's
        // invariant).
        unsafe { mdl::map(self.chain, length) }
    }

    /// The chain, for the provider to keep with the registration (it lives as long).
    #[must_use]
    pub const fn as_raw(&self) -> PMDL {
        self.chain
    }
}

/// `NdkQueryAdapterInfo`'s buffer and its size (`pInfo`, `pBufferSize`).
///
/// Invariant: `size` is null or valid for a read and a write; `info` is null or valid for as
/// many bytes of writes as `*size` says on entry, for the call.
pub struct AdapterInfoOut<'a> {
    info: *mut NDK_ADAPTER_INFO,
    size: Option<InOut<'a, ULONG>>,
}

/// Invariant: as [`AdapterInfoOut`]'s.
impl FromAbi<(*mut NDK_ADAPTER_INFO, *mut ULONG)> for AdapterInfoOut<'_> {
    unsafe fn from_abi((info, size): (*mut NDK_ADAPTER_INFO, *mut ULONG)) -> Self {
        AdapterInfoOut {
            info,
            // SAFETY: null or valid for a read and a write (the invariant above).
            size: unsafe { FromAbi::from_abi(size) },
        }
    }
}

impl AdapterInfoOut<'_> {
    /// Whether `*pBufferSize` is there to read and write.
    #[must_use]
    pub const fn has_size(&self) -> bool {
        self.size.is_some()
    }

    /// Writes the first `needed` bytes of `source` (at most its size), its `Version` replaced
    /// by `version`, by the size protocol: `*pBufferSize` becomes `needed`; a null or shorter
    /// buffer gets `STATUS_BUFFER_TOO_SMALL`; a null size `STATUS_INVALID_PARAMETER`.
    #[must_use]
    pub fn write(
        &self,
        source: &NDK_ADAPTER_INFO,
        needed: usize,
        version: NDK_VERSION,
    ) -> NTSTATUS {
        let Some(size) = &self.size else {
            return NDIS_STATUS_INVALID_PARAMETER;
        };
        let needed = needed.min(size_of::<NDK_ADAPTER_INFO>());
        let needed_ulong = ULONG::try_from(needed).unwrap_or(ULONG::MAX);
        let given = size.read();
        size.write(needed_ulong);
        if self.info.is_null() || given < needed_ulong {
            return STATUS_BUFFER_TOO_SMALL;
        }
        let from = core::ptr::from_ref(source).cast::<u8>();
        // SAFETY: `from` is a whole NDK_ADAPTER_INFO and `needed` at most its size; `info` is
        // valid for `given` >= `needed` bytes (the type's invariant) and is not `source`.
        unsafe { core::ptr::copy_nonoverlapping(from, self.info.cast::<u8>(), needed) };
        // `Version` is the structure's first member: the open's version, not the source's.
        // SAFETY: inside the `needed` bytes just written; the consumer's buffer may be
        // unaligned.
        unsafe { self.info.cast::<NDK_VERSION>().write_unaligned(version) };
        NDIS_STATUS_SUCCESS
    }
}

/// `NdkBuildLAM`'s buffer and its size (`pNdkLAM`, `pLAMSize`), the size read once, when the
/// view is made.
///
/// Invariant: `lam` is null or valid for `given` bytes of writes for the call; `size` valid
/// for a write.
pub struct LamOut<'a> {
    lam: *mut NDK_LOGICAL_ADDRESS_MAPPING,
    given: ULONG,
    size: InOut<'a, ULONG>,
}

/// `None` for a null size. Invariant: `size` is null or valid for a read and a write; `lam`
/// null or valid for `*size` bytes of writes, for the call.
impl FromAbi<(*mut NDK_LOGICAL_ADDRESS_MAPPING, *mut ULONG)> for Option<LamOut<'_>> {
    unsafe fn from_abi((lam, size): (*mut NDK_LOGICAL_ADDRESS_MAPPING, *mut ULONG)) -> Self {
        // SAFETY: null or valid for a read and a write (the invariant above).
        let size = unsafe { <Option<InOut<'_, ULONG>> as FromAbi<*mut ULONG>>::from_abi(size) }?;
        let given = size.read();
        Some(LamOut { lam, given, size })
    }
}

impl LamOut<'_> {
    /// Whether the buffer holds `needed` bytes (a null buffer holds none).
    #[must_use]
    pub fn holds(&self, needed: ULONG) -> bool {
        !self.lam.is_null() && self.given >= needed
    }

    /// Writes `*pLAMSize`.
    pub fn set_size(&self, size: ULONG) {
        self.size.write(size);
    }

    /// Writes the LAM: `AdapterContext` (page 0's address, which `NdkReleaseLAM` reads back),
    /// `AdapterPageCount` and the page addresses; nothing when the buffer does not hold
    /// `FIELD_OFFSET(AdapterPageArray)` and `pages` addresses. Unaligned writes: only the size
    /// of the consumer's buffer is promised.
    pub fn write(&self, pages: u32, first: u64) {
        let array_at = core::mem::offset_of!(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray);
        let needed = usize::try_from(pages)
            .ok()
            .and_then(|p| p.checked_mul(size_of::<NDK_LOGICAL_ADDRESS>()))
            .and_then(|b| b.checked_add(array_at));
        let room = usize::try_from(self.given).unwrap_or(0);
        if self.lam.is_null() || needed.is_none_or(|n| n > room) {
            return;
        }
        let lam = self.lam;
        let context = usize::try_from(first).unwrap_or(0);
        // SAFETY: inside the buffer (`needed` <= `given` bytes, the type's invariant); only the
        // member's address is taken.
        let member = unsafe { &raw mut (*lam).AdapterContext };
        // SAFETY: the member's 8 bytes are inside the buffer (before the page array).
        unsafe { member.write_unaligned(core::ptr::without_provenance_mut(context)) };
        // SAFETY: inside the buffer (as for `AdapterContext`); only the member's address is
        // taken.
        let member = unsafe { &raw mut (*lam).AdapterPageCount };
        // SAFETY: the member's 4 bytes are inside the buffer (before the page array).
        unsafe { member.write_unaligned(pages) };
        // SAFETY: inside the buffer (at `array_at` < `needed`); only the member's address is
        // taken.
        let array = unsafe { &raw mut (*lam).AdapterPageArray }.cast::<NDK_LOGICAL_ADDRESS>();
        for page in 0..pages {
            // Page addresses have bit 63 clear: positive NDK_LOGICAL_ADDRESSes.
            let address = page_address(first, page)
                .and_then(|a| i64::try_from(a).ok())
                .unwrap_or(0);
            let Ok(i) = usize::try_from(page) else {
                return;
            };
            // SAFETY: entry `i` < `pages` of the array, which the `needed` bytes hold.
            let at = unsafe { array.add(i) };
            // SAFETY: 8 writable bytes of the buffer (entry `i` < `pages`); perhaps unaligned.
            unsafe { at.write_unaligned(address) };
        }
    }
}

/// The LAM buffer `NdkReleaseLAM` is given (`pNdkLAM`).
///
/// Invariant: `lam` is valid for reads of the mapping's header for the call (a buffer
/// `NdkBuildLAM` filled).
pub struct LamIn<'a> {
    lam: NonNull<NDK_LOGICAL_ADDRESS_MAPPING>,
    _call: PhantomData<&'a NDK_LOGICAL_ADDRESS_MAPPING>,
}

/// `None` for a null buffer. Invariant: as [`LamIn`]'s.
impl FromAbi<*mut NDK_LOGICAL_ADDRESS_MAPPING> for Option<LamIn<'_>> {
    unsafe fn from_abi(lam: *mut NDK_LOGICAL_ADDRESS_MAPPING) -> Self {
        Some(LamIn {
            lam: NonNull::new(lam)?,
            _call: PhantomData,
        })
    }
}

impl LamIn<'_> {
    /// The `AdapterContext` the buffer holds (what `NdkBuildLAM` wrote: page 0's address).
    #[must_use]
    pub fn adapter_context(&self) -> u64 {
        let lam = self.lam.as_ptr();
        // SAFETY: a LAM buffer (the type's invariant); only the member's address is taken.
        let member = unsafe { &raw const (*lam).AdapterContext };
        // SAFETY: its first 8 bytes, readable (the type's invariant); perhaps unaligned.
        let context = unsafe { member.read_unaligned() };
        u64::try_from(context.addr()).unwrap_or(0)
    }
}
