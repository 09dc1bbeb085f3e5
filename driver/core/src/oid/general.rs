//! The general OIDs of an NDIS 6 Ethernet miniport (netvmini's MPQueryInformation and
//! MPSetInformation; the DDI page of each OID).
//!
//! Length rules: a query whose buffer is too small gets `NDIS_STATUS_BUFFER_TOO_SHORT` with
//! `BytesNeeded`; a set whose buffer is too small for the value gets `NDIS_STATUS_INVALID_LENGTH`
//! with `BytesNeeded`. A set validates everything before it changes anything.

use super::{Changed, Outcome};
use crate::adapter::{self, Adapter, Settings, stats::DirectionSnapshot};
use crate::ndk::addresses::SetError;
use crate::status::Status;
use crate::wire::bytes;

/// Writes `value` if it fits.
fn answer(buf: &mut [u8], value: &[u8]) -> Outcome {
    match buf.get_mut(..value.len()) {
        Some(dst) => {
            dst.copy_from_slice(value);
            Outcome::written(value.len())
        }
        None => Outcome::needs(Status::BufferTooShort, value.len()),
    }
}

fn answer_u32(buf: &mut [u8], value: u32) -> Outcome {
    answer(buf, &value.to_le_bytes())
}

/// A 64-bit counter: 8 bytes, or its low 32 bits in a 4-byte buffer with `BytesNeeded` = 8, as
/// the statistics OIDs of NDIS allow.
fn answer_counter(buf: &mut [u8], value: u64) -> Outcome {
    if buf.len() >= 8 {
        return answer(buf, &value.to_le_bytes());
    }
    let low = value.to_le_bytes();
    let mut outcome = answer(buf, low.get(..4).unwrap_or(&[0; 4]));
    outcome.bytes_needed = 8;
    outcome
}

/// The `u32` value of a set, or the failure for a short buffer.
fn set_u32(input: &[u8]) -> Result<u32, Outcome> {
    bytes::read_u32(input, 0).ok_or(Outcome::needs(Status::InvalidLength, 4))
}

pub(super) fn hardware_status(_: &Adapter, s: &Settings, buf: &mut [u8]) -> Outcome {
    let status = if s.resetting {
        ndis_sys::ntddndis::NdisHardwareStatusReset
    } else {
        ndis_sys::ntddndis::NdisHardwareStatusReady
    }
    .cast_unsigned();
    answer_u32(buf, status)
}

pub(super) fn medium(_: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    answer_u32(buf, ndis_sys::ntddndis::NdisMedium802_3.cast_unsigned())
}

/// `OID_GEN_MAXIMUM_FRAME_SIZE`: the MTU, the frame without its header (`*JumboPacket` - 14).
pub(super) fn maximum_frame_size(a: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    answer_u32(buf, a.config.mtu())
}

/// `OID_GEN_LINK_SPEED`: in units of 100 bit/s.
pub(super) fn link_speed(a: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    let units = a.config.link_speed_bps / 100;
    answer_u32(buf, u32::try_from(units).unwrap_or(u32::MAX))
}

/// `OID_GEN_MAXIMUM_TOTAL_SIZE`, `OID_GEN_TRANSMIT_BLOCK_SIZE`, `OID_GEN_RECEIVE_BLOCK_SIZE`:
/// the whole frame, header included (`*JumboPacket`: the MTU + 14).
pub(super) fn block_size(a: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    answer_u32(buf, a.config.max_frame())
}

pub(super) fn vendor_id(_: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    answer_u32(buf, adapter::VENDOR_ID)
}

pub(super) fn vendor_description(_: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    answer(buf, adapter::VENDOR_DESCRIPTION)
}

pub(super) fn packet_filter(_: &Adapter, s: &Settings, buf: &mut [u8]) -> Outcome {
    answer_u32(buf, s.packet_filter)
}

/// A filter with a bit the adapter does not support gets `NDIS_STATUS_NOT_SUPPORTED`.
pub(super) fn set_packet_filter(_: &Adapter, s: &mut Settings, input: &[u8]) -> Outcome {
    let filter = match set_u32(input) {
        Ok(v) => v,
        Err(outcome) => return outcome,
    };
    if filter & !adapter::SUPPORTED_PACKET_FILTERS != 0 {
        return Outcome::fail(Status::NotSupported);
    }
    s.packet_filter = filter;
    Outcome::read(4)
}

pub(super) fn lookahead(_: &Adapter, s: &Settings, buf: &mut [u8]) -> Outcome {
    answer_u32(buf, s.lookahead)
}

/// A lookahead larger than the adapter's maximum gets `NDIS_STATUS_INVALID_DATA`.
pub(super) fn set_lookahead(a: &Adapter, s: &mut Settings, input: &[u8]) -> Outcome {
    let value = match set_u32(input) {
        Ok(v) => v,
        Err(outcome) => return outcome,
    };
    if value > a.config.max_lookahead() {
        return Outcome::fail(Status::InvalidData);
    }
    s.lookahead = value;
    Outcome::read(4)
}

/// `OID_GEN_VLAN_ID` query: the configured VLAN ID as an `NDIS_VLAN_ID` (a ULONG, the VID in its
/// 12 low bits; the OID's DDI page).
pub(super) fn vlan_id(a: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    answer_u32(buf, u32::from(a.vlan_id()))
}

/// `OID_GEN_VLAN_ID` set (the DDI page): an `NDIS_VLAN_ID` whose bits above the 12 of the VID
/// are reserved and must be 0. A short buffer gets `NDIS_STATUS_INVALID_LENGTH` with
/// `BytesNeeded` 4; reserved bits, or VID 4095 (reserved by 802.1Q), `NDIS_STATUS_INVALID_DATA`;
/// either way nothing changes. VID 0 is "no VLAN". The machine publishes a classifier with the
/// new VID after the request (`machine::Effect::PublishVlan`).
pub(super) fn set_vlan_id(a: &Adapter, _: &mut Settings, input: &[u8]) -> Outcome {
    let value = match set_u32(input) {
        Ok(v) => v,
        Err(outcome) => return outcome,
    };
    let vid = match u16::try_from(value) {
        Ok(v) if v & !adapter::VLAN_ID_MASK == 0 && v != adapter::VLAN_ID_RESERVED => v,
        _ => return Outcome::fail(Status::InvalidData),
    };
    let changed = a.vlan_id() != vid;
    a.set_vlan_id(vid);
    Outcome::read(4).changing(Changed {
        vlan_id: changed,
        ..Changed::NOTHING
    })
}

/// `OID_GEN_DRIVER_VERSION`: the NDIS version as a USHORT, major in the high byte (6.30 = 0x061E).
pub(super) fn driver_version(_: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    answer(buf, &0x061E_u16.to_le_bytes())
}

pub(super) fn media_connect_status(_: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    answer_u32(buf, ndis_sys::ntddndis::NdisMediaStateConnected)
}

pub(super) fn maximum_send_packets(_: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    answer_u32(buf, adapter::MAX_SEND_PACKETS)
}

/// `OID_GEN_VENDOR_DRIVER_VERSION`: major in the high word, minor in the low word.
pub(super) fn vendor_driver_version(_: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    let (major, minor) = crate::DRIVER_VERSION;
    answer_u32(buf, (u32::from(major) << 16) | u32::from(minor))
}

/// `OID_GEN_NETWORK_LAYER_ADDRESSES` set: the IP addresses TCP/IP bound to the adapter, for the
/// NDK provider (`ndk::addresses`, which documents the statuses and the capacity). A short buffer
/// is `NDIS_STATUS_INVALID_LENGTH` with `BytesNeeded`; a negative count or an address of the wrong
/// length `NDIS_STATUS_INVALID_DATA`; either changes nothing.
pub(super) fn set_network_layer_addresses(_: &Adapter, s: &mut Settings, input: &[u8]) -> Outcome {
    match s.network_addresses.set(input) {
        Ok(read) => Outcome::read(read),
        Err(SetError::Truncated { needed }) => Outcome::needs(Status::InvalidLength, needed),
        Err(SetError::Invalid) => Outcome::fail(Status::InvalidData),
    }
}

/// `OID_GEN_LINK_PARAMETERS`: the virtual link's speed comes from `SimLinkSpeed` and it is
/// always full duplex without pause frames. A request for exactly that (or with speeds 0, "keep")
/// succeeds; anything else is `NDIS_STATUS_NOT_SUPPORTED`. A malformed header is
/// `NDIS_STATUS_INVALID_PARAMETER`.
pub(super) fn set_link_parameters(a: &Adapter, _: &mut Settings, input: &[u8]) -> Outcome {
    let size = usize::from(ndis_sys::ntddndis::NDIS_SIZEOF_LINK_PARAMETERS_REVISION_1);
    if input.len() < size {
        return Outcome::needs(Status::InvalidLength, size);
    }
    let header =
        crate::wire::ObjectHeaderRepr::parse(&crate::wire::ObjectHeader::new_unchecked(input));
    let header_ok = header.is_ok_and(|h| {
        h.expect(
            ndis_sys::objectheader::NDIS_OBJECT_TYPE_DEFAULT,
            ndis_sys::ntddndis::NDIS_LINK_PARAMETERS_REVISION_1,
            ndis_sys::ntddndis::NDIS_SIZEOF_LINK_PARAMETERS_REVISION_1,
        )
        .is_ok()
    });
    if !header_ok {
        return Outcome::fail(Status::InvalidParameter);
    }
    let duplex = bytes::read_u32(input, 4).unwrap_or(0);
    let xmit = bytes::read_u64(input, 8).unwrap_or(0);
    let rcv = bytes::read_u64(input, 16).unwrap_or(0);
    let pause = bytes::read_u32(input, 24).unwrap_or(0);
    let speed = a.config.link_speed_bps;
    const FULL: u32 = ndis_sys::ntddndis::MediaDuplexStateFull.cast_unsigned();
    let same = matches!(duplex, 0 | FULL)
        && (xmit == 0 || xmit == speed)
        && (rcv == 0 || rcv == speed)
        && pause == ndis_sys::ntddndis::NdisPauseFunctionsUnsupported.cast_unsigned();
    if same {
        Outcome::read(size)
    } else {
        Outcome::fail(Status::NotSupported)
    }
}

/// `OID_GEN_INTERRUPT_MODERATION`: a virtual adapter has no interrupts to moderate.
pub(super) fn interrupt_moderation(_: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    let size = ndis_sys::ntddndis::NDIS_SIZEOF_INTERRUPT_MODERATION_PARAMETERS_REVISION_1;
    let mut value = [0u8; 12];
    let header = crate::wire::ObjectHeaderRepr::new(
        ndis_sys::objectheader::NDIS_OBJECT_TYPE_DEFAULT,
        ndis_sys::ntddndis::NDIS_INTERRUPT_MODERATION_PARAMETERS_REVISION_1,
        size,
    );
    let _fits = bytes::write_at(&mut value, 0, &header.to_bytes());
    let _fits = bytes::write_at(
        &mut value,
        8,
        &ndis_sys::ntddndis::NdisInterruptModerationNotSupported.to_le_bytes(),
    );
    answer(buf, &value)
}

/// Setting interrupt moderation on an adapter that does not support it: `NDIS_STATUS_INVALID_DATA`.
pub(super) fn set_interrupt_moderation(_: &Adapter, _: &mut Settings, input: &[u8]) -> Outcome {
    let size =
        usize::from(ndis_sys::ntddndis::NDIS_SIZEOF_INTERRUPT_MODERATION_PARAMETERS_REVISION_1);
    if input.len() < size {
        return Outcome::needs(Status::InvalidLength, size);
    }
    Outcome::fail(Status::InvalidData)
}

pub(super) fn xmit_ok(a: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    answer_counter(buf, a.stats.xmit().frames())
}

pub(super) fn rcv_ok(a: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    answer_counter(buf, a.stats.rcv().frames())
}

/// `OID_DCBNDK_TRAFFIC_STATISTICS`: the per-priority and per-TC traffic, summed over the CPUs
/// (`adapter::traffic`).
pub(super) fn traffic_statistics(a: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    answer(buf, &a.traffic.totals().to_bytes())
}

/// `OID_GEN_STATISTICS`: `NDIS_STATISTICS_INFO` revision 1.
pub(super) fn statistics(a: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    let size = ndis_sys::ntddndis::NDIS_SIZEOF_STATISTICS_INFO_REVISION_1;
    let mut info = [0u8; 152];
    let header = crate::wire::ObjectHeaderRepr::new(
        ndis_sys::objectheader::NDIS_OBJECT_TYPE_DEFAULT,
        ndis_sys::ntddndis::NDIS_STATISTICS_INFO_REVISION_1,
        size,
    );
    let valid = ndis_sys::ntddndis::NDIS_STATISTICS_FLAGS_VALID_DIRECTED_FRAMES_RCV
        | ndis_sys::ntddndis::NDIS_STATISTICS_FLAGS_VALID_MULTICAST_FRAMES_RCV
        | ndis_sys::ntddndis::NDIS_STATISTICS_FLAGS_VALID_BROADCAST_FRAMES_RCV
        | ndis_sys::ntddndis::NDIS_STATISTICS_FLAGS_VALID_BYTES_RCV
        | ndis_sys::ntddndis::NDIS_STATISTICS_FLAGS_VALID_DIRECTED_FRAMES_XMIT
        | ndis_sys::ntddndis::NDIS_STATISTICS_FLAGS_VALID_MULTICAST_FRAMES_XMIT
        | ndis_sys::ntddndis::NDIS_STATISTICS_FLAGS_VALID_BROADCAST_FRAMES_XMIT
        | ndis_sys::ntddndis::NDIS_STATISTICS_FLAGS_VALID_BYTES_XMIT
        | ndis_sys::ntddndis::NDIS_STATISTICS_FLAGS_VALID_XMIT_ERROR
        | ndis_sys::ntddndis::NDIS_STATISTICS_FLAGS_VALID_XMIT_DISCARDS
        | ndis_sys::ntddndis::NDIS_STATISTICS_FLAGS_VALID_DIRECTED_BYTES_RCV
        | ndis_sys::ntddndis::NDIS_STATISTICS_FLAGS_VALID_MULTICAST_BYTES_RCV
        | ndis_sys::ntddndis::NDIS_STATISTICS_FLAGS_VALID_BROADCAST_BYTES_RCV
        | ndis_sys::ntddndis::NDIS_STATISTICS_FLAGS_VALID_DIRECTED_BYTES_XMIT
        | ndis_sys::ntddndis::NDIS_STATISTICS_FLAGS_VALID_MULTICAST_BYTES_XMIT
        | ndis_sys::ntddndis::NDIS_STATISTICS_FLAGS_VALID_BROADCAST_BYTES_XMIT;
    let (x, r): (DirectionSnapshot, DirectionSnapshot) = (a.stats.xmit(), a.stats.rcv());
    // The members in NDIS_STATISTICS_INFO order, from offset 8 (after Header and the flags).
    let counters = [
        r.discards,
        r.errors,
        r.bytes(),
        r.directed_frames,
        r.multicast_frames,
        r.broadcast_frames,
        x.bytes(),
        x.directed_frames,
        x.multicast_frames,
        x.broadcast_frames,
        x.errors,
        x.discards,
        r.directed_bytes,
        r.multicast_bytes,
        r.broadcast_bytes,
        x.directed_bytes,
        x.multicast_bytes,
        x.broadcast_bytes,
    ];
    let _fits = bytes::write_at(&mut info, 0, &header.to_bytes());
    let _fits = bytes::write_at(&mut info, 4, &valid.to_le_bytes());
    for (i, value) in counters.iter().enumerate() {
        let at = i.saturating_mul(8).saturating_add(8);
        let _fits = bytes::write_at(&mut info, at, &value.to_le_bytes());
    }
    answer(buf, &info)
}

pub(super) fn permanent_address(a: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    answer(buf, &a.config.permanent_mac)
}

pub(super) fn current_address(a: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    answer(buf, &a.config.current_mac)
}

/// `OID_802_3_MULTICAST_LIST` query: the addresses in use, 6 bytes each (0 bytes when empty).
pub(super) fn multicast_list(_: &Adapter, s: &Settings, buf: &mut [u8]) -> Outcome {
    let list = s.multicast_list();
    let needed = list.len().saturating_mul(6);
    let Some(dst) = buf.get_mut(..needed) else {
        return Outcome::needs(Status::BufferTooShort, needed);
    };
    for (chunk, mac) in dst.chunks_exact_mut(6).zip(list) {
        chunk.copy_from_slice(mac);
    }
    Outcome::written(needed)
}

/// `OID_802_3_MULTICAST_LIST` set: a length that is not a multiple of 6 is
/// `NDIS_STATUS_INVALID_LENGTH`; a non-multicast address `NDIS_STATUS_INVALID_DATA`; more than
/// the adapter filters `NDIS_STATUS_MULTICAST_FULL`. An empty list clears it.
pub(super) fn set_multicast_list(_: &Adapter, s: &mut Settings, input: &[u8]) -> Outcome {
    if !input.len().is_multiple_of(6) {
        let needed = input.len().div_ceil(6).saturating_mul(6);
        return Outcome::needs(Status::InvalidLength, needed);
    }
    let count = input.len().div_ceil(6);
    if count > adapter::MAX_MULTICAST {
        return Outcome::needs(
            Status::MulticastFull,
            adapter::MAX_MULTICAST.saturating_mul(6),
        );
    }
    let mut list = [[0u8; 6]; adapter::MAX_MULTICAST];
    for (slot, chunk) in list.iter_mut().zip(input.chunks_exact(6)) {
        slot.copy_from_slice(chunk);
        if slot[0] & 0x01 == 0 {
            return Outcome::fail(Status::InvalidData);
        }
    }
    s.multicast = list;
    s.multicast_len = count;
    Outcome::read(input.len())
}

pub(super) fn maximum_list_size(_: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    answer_u32(
        buf,
        u32::try_from(adapter::MAX_MULTICAST).unwrap_or(u32::MAX),
    )
}

/// `OID_PNP_QUERY_POWER`: the adapter can enter every device power state; the buffer carries
/// the proposed `NDIS_DEVICE_POWER_STATE` (nothing is written back).
pub(super) fn query_power(_: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    match set_u32(buf) {
        Ok(state) if POWER_STATES.contains(&state) => Outcome::written(0),
        Ok(_) => Outcome::fail(Status::InvalidData),
        Err(outcome) => outcome,
    }
}

/// The device power states an OID may name: D0 to D3 (`NDIS_DEVICE_POWER_STATE`).
const POWER_STATES: core::ops::RangeInclusive<u32> = ndis_sys::ntddndis::NdisDeviceStateD0
    .cast_unsigned()
    ..=ndis_sys::ntddndis::NdisDeviceStateD3.cast_unsigned();

/// `OID_PNP_SET_POWER`: D0..D3; anything else is `NDIS_STATUS_INVALID_DATA`.
pub(super) fn set_power(_: &Adapter, s: &mut Settings, input: &[u8]) -> Outcome {
    match set_u32(input) {
        Ok(state) if POWER_STATES.contains(&state) => {
            s.power_state = state;
            Outcome::read(4)
        }
        Ok(_) => Outcome::fail(Status::InvalidData),
        Err(outcome) => outcome,
    }
}
