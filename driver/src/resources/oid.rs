//! A view over the `NDIS_OID_REQUEST` NDIS hands `MiniportOidRequest` and
//! `MiniportDirectOidRequest`: its kind, OID and information buffer as the core's [`Request`]
//! (the buffer a byte slice of exactly its stated length), and its byte counters written back
//! into the `DATA` member of the request's type (spec §3). Nothing here knows the adapter.
//!
//! Every member of the repr(C) `DATA` union starts at its offset 0, so the member in use is
//! reached by casting a pointer to the union to a pointer to the member. Only the members the
//! miniport reads are copied: the whole request is 240 bytes, on the OID path's deepest stack
//! chain (`cargo xtask pe`).

use core::marker::PhantomData;
use core::ptr::NonNull;

use dcbndk_core::oid::{Outcome, Request, RequestKind};

use ndis_sys::oidrequest::{
    NDIS_OID_REQUEST, NDIS_OID_REQUEST_METHOD, NDIS_OID_REQUEST_QUERY, NDIS_OID_REQUEST_SET,
    NdisRequestMethod, NdisRequestQueryInformation, NdisRequestQueryStatistics,
    NdisRequestSetInformation,
};
use ndis_sys::types::UINT;

/// An OID request NDIS lent the miniport for one call of `MiniportOidRequest` or
/// `MiniportDirectOidRequest`.
///
/// # Invariant
/// `raw` points at a request NDIS owns, valid for reads and writes for `'a`, the call that
/// passed it: the driver completes every request before that call returns (it never returns
/// `NDIS_STATUS_PENDING`), and NDIS neither reads nor writes the request, nor its information
/// buffer, until it completes. The information buffer is NULL or holds the length its `DATA`
/// member states (for a method, the larger of its input and output lengths) of bytes valid for
/// reads and writes, which nothing else accesses meanwhile.
pub struct OidRequest<'a> {
    raw: NonNull<NDIS_OID_REQUEST>,
    _call: PhantomData<&'a mut NDIS_OID_REQUEST>,
}

impl OidRequest<'_> {
    /// The request NDIS passed; `None` for NULL.
    ///
    /// # Safety
    /// `raw` is NULL or a request NDIS passed to this miniport's `MiniportOidRequest` or
    /// `MiniportDirectOidRequest`, and the view does not outlive that call (the type's
    /// invariant).
    pub unsafe fn from_raw(raw: *mut NDIS_OID_REQUEST) -> Option<Self> {
        Some(Self {
            raw: NonNull::new(raw)?,
            _call: PhantomData,
        })
    }

    /// The request as the core's OID table reads it: its kind, OID and information buffer (for
    /// a method, input and output share the buffer, as long as the larger of the two); `None`
    /// for a request type the driver does not know.
    #[allow(
        non_upper_case_globals,
        reason = "matching NDIS_REQUEST_TYPE enumerators by their C names"
    )]
    pub fn request(&mut self) -> Option<Request<'_>> {
        let raw = self.raw.as_ptr();
        // SAFETY: `raw` is a live request (the type's invariant); its RequestType, a plain read.
        let request_type = unsafe { (*raw).RequestType };
        // SAFETY: `raw` is a live request; only the address of its DATA member is taken.
        let data = unsafe { &raw mut (*raw).DATA };
        // Each kind's OID, buffer and length; a method's input and output lengths besides.
        let (kind, oid, buffer, length, method) = match request_type {
            NdisRequestQueryInformation | NdisRequestQueryStatistics => {
                // SAFETY: a query request's DATA holds QUERY_INFORMATION, at the union's offset
                // 0, in the live request.
                let q = unsafe { *data.cast::<NDIS_OID_REQUEST_QUERY>() };
                let length = q.InformationBufferLength;
                (RequestKind::Query, q.Oid, q.InformationBuffer, length, None)
            }
            NdisRequestSetInformation => {
                // SAFETY: a set request's DATA holds SET_INFORMATION, at the union's offset 0,
                // in the live request.
                let set = unsafe { *data.cast::<NDIS_OID_REQUEST_SET>() };
                let length = set.InformationBufferLength;
                (
                    RequestKind::Set,
                    set.Oid,
                    set.InformationBuffer,
                    length,
                    None,
                )
            }
            NdisRequestMethod => {
                // SAFETY: a method request's DATA holds METHOD_INFORMATION, at the union's
                // offset 0, in the live request.
                let m = unsafe { *data.cast::<NDIS_OID_REQUEST_METHOD>() };
                // Input and output share the buffer: it is as long as the larger of the two.
                let (input, output) = (m.InputBufferLength, m.OutputBufferLength);
                let length = input.max(output);
                (
                    RequestKind::Method,
                    m.Oid,
                    m.InformationBuffer,
                    length,
                    Some((input, output)),
                )
            }
            _ => return None,
        };
        let buffer: &mut [u8] = match usize::try_from(length) {
            Ok(length) if !buffer.is_null() && length > 0 => {
                // SAFETY: the information buffer of the live request, `length` bytes valid for
                // reads and writes that nothing else accesses until it completes (the type's
                // invariant); the slice borrows the view, so it ends before the request can
                // complete; u8 has no alignment requirement.
                unsafe { core::slice::from_raw_parts_mut(buffer.cast::<u8>(), length) }
            }
            _ => &mut [],
        };
        let len = buffer.len();
        let (input_len, output_len) = method.map_or((len, len), |(input, output)| {
            let clamp = |n: UINT| usize::try_from(n).unwrap_or(0).min(len);
            (clamp(input), clamp(output))
        });
        Some(Request {
            kind,
            oid,
            buffer,
            input_len,
            output_len,
        })
    }

    /// Writes `outcome`'s byte counts into the counters of the request's `kind` (as
    /// [`OidRequest::request`] gave it): a query's `BytesWritten` and `BytesNeeded`, a set's
    /// `BytesRead` and `BytesNeeded`, a method's three. NDIS reads them once the request
    /// completes.
    pub fn write_counts(&mut self, kind: RequestKind, outcome: &Outcome) {
        let raw = self.raw.as_ptr();
        // SAFETY: `raw` is a live request (the type's invariant); only the address of its DATA
        // member is taken.
        let data = unsafe { &raw mut (*raw).DATA };
        match kind {
            RequestKind::Query => {
                let counters = data.cast::<NDIS_OID_REQUEST_QUERY>();
                // SAFETY: `counters` is the query member, the one in use, of the live request;
                // a plain field write.
                unsafe { (*counters).BytesWritten = outcome.bytes_written };
                // SAFETY: `counters` is the query member of the live request; its other
                // counter, a plain field write.
                unsafe { (*counters).BytesNeeded = outcome.bytes_needed };
            }
            RequestKind::Set => {
                let counters = data.cast::<NDIS_OID_REQUEST_SET>();
                // SAFETY: `counters` is the set member, the one in use, of the live request; a
                // plain field write.
                unsafe { (*counters).BytesRead = outcome.bytes_read };
                // SAFETY: `counters` is the set member of the live request; its other counter,
                // a plain field write.
                unsafe { (*counters).BytesNeeded = outcome.bytes_needed };
            }
            RequestKind::Method => {
                let counters = data.cast::<NDIS_OID_REQUEST_METHOD>();
                // SAFETY: `counters` is the method member, the one in use, of the live request;
                // the count of the output it wrote, a plain field write.
                unsafe { (*counters).BytesWritten = outcome.bytes_written };
                // SAFETY: `counters` is the method member of the live request; the count of
                // the input it read, a plain field write.
                unsafe { (*counters).BytesRead = outcome.bytes_read };
                // SAFETY: `counters` is the method member of the live request; the length it
                // needs, a plain field write.
                unsafe { (*counters).BytesNeeded = outcome.bytes_needed };
            }
        }
    }
}
