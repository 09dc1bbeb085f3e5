//! Status indications (`NdisMIndicateStatusEx`): the one wrapper every indication goes through,
//! the link state, and the QoS parameter sets (spec §5).

use core::mem::MaybeUninit;
use core::ptr::null_mut;

use dcbndk_core::qos::params::{ELEMENT_LEN, FIXED_LEN, MAX_CLASSIFICATIONS, QosParameters};

use crate::context::AdapterContext;
use crate::resources::memory::zeroed_in_place;
use ndis_sys::imports::NdisMIndicateStatusEx;
use ndis_sys::ntddndis::*;
use ndis_sys::objectheader::*;
use ndis_sys::status::{
    NDIS_SIZEOF_STATUS_INDICATION_REVISION_1, NDIS_STATUS_INDICATION,
    NDIS_STATUS_INDICATION_REVISION_1, NDIS_STATUS_LINK_STATE,
};
use ndis_sys::types::{NDIS_STATUS, PVOID};

/// The largest indication payload: the fixed part and a full classification table.
const MAX_PAYLOAD: usize = FIXED_LEN + ELEMENT_LEN * MAX_CLASSIFICATIONS;

/// Indicates a QoS parameter set with status `code`. Out of line: its payload (1 KiB) is on the
/// stack only while NDIS is called.
#[inline(never)]
pub fn parameters(context: &AdapterContext, code: NDIS_STATUS, params: &QosParameters) {
    let mut payload = [0u8; MAX_PAYLOAD];
    if let Some(len) = params.emit(&mut payload) {
        indicate(context, code, payload.as_mut_ptr().cast(), len);
    }
}

/// Indicates `NDIS_STATUS_LINK_STATE`: the virtual link is always up, full duplex, at the
/// configured speed.
///
/// The structure has 4 bytes of padding after `MediaDuplexState`, and NDIS copies all 40 bytes
/// to the protocols above (and to user mode, through WMI): they must be zero, as after C's
/// `NdisZeroMemory`. A Rust value does not keep its padding when it is moved (a typed copy
/// leaves the padding uninitialized, and so does returning a `MaybeUninit::zeroed()`), so the
/// structure is zeroed and filled in place.
pub fn link_state(context: &AdapterContext) {
    let mut place = MaybeUninit::<NDIS_LINK_STATE>::uninit();
    let link = zeroed_in_place(&mut place);
    link.Header = NDIS_OBJECT_HEADER::new(
        NDIS_OBJECT_TYPE_DEFAULT,
        NDIS_LINK_STATE_REVISION_1,
        NDIS_SIZEOF_LINK_STATE_REVISION_1,
    );
    link.MediaConnectState = MediaConnectStateConnected;
    link.MediaDuplexState = MediaDuplexStateFull;
    link.XmitLinkSpeed = context.core.config.link_speed_bps;
    link.RcvLinkSpeed = context.core.config.link_speed_bps;
    link.PauseFunctions = NdisPauseFunctionsUnsupported;
    indicate(
        context,
        NDIS_STATUS_LINK_STATE,
        core::ptr::from_mut(link).cast(),
        size_of::<NDIS_LINK_STATE>(),
    );
}

/// `NdisMIndicateStatusEx` with a payload that lives for the call.
pub fn indicate(context: &AdapterContext, code: NDIS_STATUS, buffer: PVOID, size: usize) {
    let mut indication = NDIS_STATUS_INDICATION::zeroed();
    indication.Header = NDIS_OBJECT_HEADER::new(
        NDIS_OBJECT_TYPE_STATUS_INDICATION,
        NDIS_STATUS_INDICATION_REVISION_1,
        NDIS_SIZEOF_STATUS_INDICATION_REVISION_1,
    );
    indication.SourceHandle = context.handle;
    indication.StatusCode = code;
    indication.StatusBuffer = buffer;
    indication.StatusBufferSize = u32::try_from(size).unwrap_or(0);
    indication.DestinationHandle = null_mut();
    // SAFETY: the handle is our miniport handle; the indication and its payload are live for the
    // whole call (NDIS copies what it keeps).
    unsafe { NdisMIndicateStatusEx(context.handle, &raw mut indication) };
}
