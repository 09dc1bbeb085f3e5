#!/usr/bin/env python3
"""Regenerates supplement.tsv: the layout facts this project adds to ndis-x64.tsv.

Every number is read from x86_64-w64-mingw32-gcc's own assembly output (Microsoft x64 layout
rules) for the declarations of mingw-w64's headers, of ndis630_extra.h and of ndkpi_decl.h (the
NDKPI 1.2 ndkpi.h, which mingw-w64 lacks), the way the reference table was made. The wdm.h items
(the MDL and what reading one needs) come from mingw-w64's kernel headers (ddk/wdm.h) and
wdm_extra.h, compiled on their own through prelude_ddk.h: ddk/wdm.h and the user-mode headers of
prelude.h cannot share one unit. Run from this folder: python3 gen_supplement.py > supplement.tsv
"""
import os
import re
import subprocess
import sys
import tempfile

# (C type, source note, [member paths]) for structs; (name, source note) for constants.
STRUCTS = [
    ("GUID", "guiddef.h (mingw-w64)", ["Data1", "Data2", "Data3", "Data4"]),
    ("UNICODE_STRING", "winternl.h (mingw-w64) = ntdef.h", ["Length", "MaximumLength", "Buffer"]),
    ("SLIST_HEADER", "winnt.h x64 (mingw-w64)", ["Alignment", "Region"]),
    ("PROCESSOR_NUMBER", "winnt.h (mingw-w64)", ["Group", "Number", "Reserved"]),
    ("SOCKADDR_IN", "ws2def.h (mingw-w64)", ["sin_family", "sin_port", "sin_addr", "sin_zero"]),
    ("SOCKADDR_IN6", "ws2ipdef.h (mingw-w64)", ["sin6_family", "sin6_port", "sin6_flowinfo", "sin6_addr", "sin6_scope_id"]),
    ("SOCKADDR_INET", "ws2ipdef.h (mingw-w64)", ["Ipv4", "Ipv6", "si_family"]),
    ("BINARY_DATA", "ndis.h (ndis630_extra.h)", ["Length", "Buffer"]),
    ("NDIS_CONFIGURATION_PARAMETER", "ndis.h (ndis630_extra.h)",
     ["ParameterType", "ParameterData", "ParameterData.IntegerData", "ParameterData.StringData", "ParameterData.BinaryData"]),
    ("NDIS_CONFIGURATION_OBJECT", "ndis.h (ndis630_extra.h)", ["Header", "NdisHandle", "Flags"]),
    ("NET_PNP_EVENT", "netpnp.h (ndis630_extra.h; same layout in mingw-w64 ddk/ndis.h)",
     ["NetEvent", "Buffer", "BufferLength", "NdisReserved", "TransportReserved", "TdiReserved", "TdiClientReserved"]),
    ("NET_PNP_EVENT_NOTIFICATION", "ndis.h (ndis630_extra.h)", ["Header", "PortNumber", "NetPnPEvent", "Flags"]),
    ("NDIS_SPIN_LOCK", "ndis.h (ndis630_extra.h)", ["SpinLock", "OldIrql"]),
    ("NDIS_TIMER_CHARACTERISTICS", "ndis.h (ndis630_extra.h)",
     ["Header", "AllocationTag", "TimerFunction", "FunctionContext"]),
    ("NET_DEVICE_PNP_EVENT", "ndis.h (ndis630_extra.h)",
     ["Header", "PortNumber", "DevicePnPEvent", "InformationBuffer", "InformationBufferLength", "NdisReserved"]),
    ("SOCKADDR", "ws2def.h (mingw-w64)", ["sa_family", "sa_data"]),
    ("GROUP_AFFINITY", "winnt.h (mingw-w64)", ["Mask", "Group", "Reserved"]),
    # OID_GEN_NETWORK_LAYER_ADDRESSES: the list, its entries, and the IPv4 and IPv6 addresses.
    ("NETWORK_ADDRESS_LIST", "ntddndis.h (mingw-w64)", ["AddressCount", "AddressType", "Address"]),
    ("NETWORK_ADDRESS", "ntddndis.h (mingw-w64)", ["AddressLength", "AddressType", "Address"]),
    ("NETWORK_ADDRESS_IP", "ntddndis.h (mingw-w64)", ["sin_port", "in_addr", "sin_zero"]),
    ("NETWORK_ADDRESS_IP6", "ntddndis.h (ndis630_extra.h)",
     ["sin6_port", "sin6_flowinfo", "sin6_addr", "sin6_scope_id"]),
] + [(name, f"ndkpi.h (ndkpi_decl.h); {source}", fields) for name, source, fields in [
    # ndkpi.h, NDKPI 1.2. The source says where ndkpi.md (sections 0 and 2) has the layout from:
    # [TD] a type dump of ndis.sys (the size is also checked by tests/abi_table.rs), [INFER] the
    # declaration order and natural alignment only, which is all these rows are for those types.
    ("NDK_OBJECT_HEADER_RESERVED_BLOCK", "ndkpi.md 0: size 0x20 [TD]", ["rf"]),
    ("NDK_OBJECT_HEADER", "ndkpi.md 0: size 0x28 [TD]", ["Version", "ObjectType", "NdkReserved"]),
    ("NDK_RESULT", "ndkpi.md 0: order [H], offsets [INFER]",
     ["Status", "BytesTransferred", "QPContext", "RequestContext"]),
    ("NDK_RESULT_EX", "ndkpi.md 0: order [H] and the _NDK_RESULT_EX page (ProviderErrorCode in the x64 padding)",
     ["Status", "BytesTransferred", "QPContext", "RequestContext", "Type", "ProviderErrorCode", "TypeSpecificCompletionOutput"]),
    ("NDK_LOGICAL_ADDRESS_MAPPING", "ndkpi.md 0: [H], offsets [INFER]",
     ["AdapterContext", "AdapterPageCount", "AdapterPageArray"]),
    ("NDK_SGE", "ndkpi.md 0: order [H], offsets [INFER]",
     ["VirtualAddress", "LogicalAddress", "Length", "MemoryRegionToken"]),
    ("NDK_EXTENSION_INTERFACE", "ndkpi.md 0: [H]", ["Dispatch"]),
    ("NDK_ADAPTER_DISPATCH", "ndkpi.md 2.1: size 0x48 [TD]",
     ["NdkQueryExtension", "NdkQueryAdapterInfo", "NdkCreateCq", "NdkCreatePd", "NdkCreateSharedEndpoint",
      "NdkCreateConnector", "NdkCreateListener", "NdkBuildLAM", "NdkReleaseLAM"]),
    ("NDK_CQ_DISPATCH", "ndkpi.md 2.2: size 0x38 [TD]",
     ["NdkCloseCq", "NdkQueryExtension", "NdkResizeCq", "NdkArmCq", "NdkGetCqResults",
      "NdkControlCqInterruptModeration", "NdkGetCqResultsEx"]),
    ("NDK_PD_DISPATCH", "ndkpi.md 2.3: size 0x40 [TD]",
     ["NdkClosePd", "NdkQueryExtension", "NdkCreateMr", "NdkCreateMw", "NdkCreateSrq", "NdkCreateQp",
      "NdkCreateQpWithSrq", "NdkGetPrivilegedMemoryRegionToken"]),
    ("NDK_QP_DISPATCH", "ndkpi.md 2.4: size 0x58 [TD]",
     ["NdkCloseQp", "NdkQueryExtension", "NdkFlush", "NdkSend", "NdkReceive", "NdkBind", "NdkFastRegister",
      "NdkInvalidate", "NdkRead", "NdkWrite", "NdkSendAndInvalidate"]),
    ("NDK_SRQ_DISPATCH", "ndkpi.md 2.5: order [H], size [INFER]",
     ["NdkCloseSrq", "NdkQueryExtension", "NdkModifySrq", "NdkSrqReceive"]),
    ("NDK_MR_DISPATCH", "ndkpi.md 2.6: order [H], size [INFER]",
     ["NdkCloseMr", "NdkQueryExtension", "NdkRegisterMr", "NdkDeregisterMr", "NdkInitializeFastRegisterMr",
      "NdkGetRemoteTokenFromMr", "NdkGetLocalTokenFromMr"]),
    ("NDK_MW_DISPATCH", "ndkpi.md 2.7: order [H], size [INFER]",
     ["NdkCloseMw", "NdkQueryExtension", "NdkGetRemoteTokenFromMw"]),
    ("NDK_CONNECTOR_DISPATCH", "ndkpi.md 2.8: size 0x58 [TD]",
     ["NdkCloseConnector", "NdkQueryExtension", "NdkConnect", "NdkConnectWithSharedEndpoint",
      "NdkCompleteConnect", "NdkAccept", "NdkReject", "NdkGetConnectionData", "NdkGetLocalAddress",
      "NdkGetPeerAddress", "NdkDisconnect"]),
    ("NDK_LISTENER_DISPATCH", "ndkpi.md 2.9: order [H], size [INFER]",
     ["NdkCloseListener", "NdkQueryExtension", "NdkListen", "NdkGetLocalAddress", "NdkControlConnectEvents"]),
    ("NDK_SHARED_ENDPOINT_DISPATCH", "ndkpi.md 2.10: order [H], size [INFER]",
     ["NdkCloseSharedEndpoint", "NdkQueryExtension", "NdkGetLocalAddress"]),
    ("NDK_ADAPTER", "ndkpi.md 0: [H], size [INFER] (declared as NDK_QP)", ["Header", "Dispatch"]),
    ("NDK_CQ", "ndkpi.md 0: [H], size [INFER] (declared as NDK_QP)", ["Header", "Dispatch"]),
    ("NDK_PD", "ndkpi.md 0: [H], size [INFER] (declared as NDK_QP)", ["Header", "Dispatch"]),
    ("NDK_MR", "ndkpi.md 0: size 0x30 [TD]", ["Header", "Dispatch"]),
    ("NDK_MW", "ndkpi.md 0: [H], size [INFER] (declared as NDK_QP)", ["Header", "Dispatch"]),
    ("NDK_QP", "ndkpi.md 0: size 0x30 [TD]", ["Header", "Dispatch"]),
    ("NDK_SRQ", "ndkpi.md 0: [H], size [INFER] (declared as NDK_QP)", ["Header", "Dispatch"]),
    ("NDK_CONNECTOR", "ndkpi.md 0: [H], size [INFER] (declared as NDK_QP)", ["Header", "Dispatch"]),
    ("NDK_LISTENER", "ndkpi.md 0: [H], size [INFER] (declared as NDK_QP)", ["Header", "Dispatch"]),
    ("NDK_SHARED_ENDPOINT", "ndkpi.md 0: [H], size [INFER] (declared as NDK_QP)", ["Header", "Dispatch"]),
]]
# (C type, note starting with "override:" and saying why) for a struct whose reference row this
# project replaces with mingw-w64's layout. None at present: NDK_ADAPTER_INFO used to be overridden
# with mingw-w64's 96-byte NDKPI 1.1 layout; the driver reports NDKPI 1.2 and declares the 104-byte
# layout of the reference row (RdmaTechnology at 96), so the reference row stands.
OVERRIDES = []
CONSTS = [(n, "ndis.h (ndis630_extra.h)") for n in [
    "NDIS_CONFIGURATION_OBJECT_REVISION_1", "NDIS_SIZEOF_CONFIGURATION_OBJECT_REVISION_1",
    "NdisParameterInteger", "NdisParameterHexInteger", "NdisParameterString", "NdisParameterMultiString",
    "NdisParameterBinary", "NdisHaltDeviceDisabled", "NdisHaltDeviceInstanceDeInitialized",
    "NdisHaltDevicePoweredDown", "NdisHaltDeviceSurpriseRemoved", "NdisHaltDeviceFailed",
    "NdisHaltDeviceInitializationFailed", "NdisHaltDeviceStopped", "NdisShutdownPowerOff", "NdisShutdownBugCheck",
    "NET_PNP_EVENT_NOTIFICATION_REVISION_1", "NDIS_SIZEOF_NET_PNP_EVENT_NOTIFICATION_REVISION_1",
    "NET_DEVICE_PNP_EVENT_REVISION_1", "NdisDevicePnPEventQueryRemoved", "NdisDevicePnPEventRemoved",
    "NdisDevicePnPEventSurpriseRemoved", "NdisDevicePnPEventQueryStopped", "NdisDevicePnPEventStopped",
    "NdisDevicePnPEventPowerProfileChanged",
    "NDIS_TIMER_CHARACTERISTICS_REVISION_1", "NDIS_SIZEOF_TIMER_CHARACTERISTICS_REVISION_1"]] + [
    ("STATUS_BUFFER_TOO_SMALL", "ntstatus.h (mingw-w64); NdkQueryAdapterInfo (ndkpi.md 6.3)"),
    ("STATUS_NOT_IMPLEMENTED", "ntstatus.h (mingw-w64); NDKPI functions not implemented yet"),
    ("STATUS_ACCESS_VIOLATION", "ntstatus.h (mingw-w64); NDK completion status (ndkpi.md 3.1)"),
    ("STATUS_IMPLEMENTATION_LIMIT", "ntstatus.h (mingw-w64); NdkInitializeFastRegisterMr (ndkpi.md 5)"),
    ("STATUS_INVALID_PARAMETER_MIX", "ntstatus.h (mingw-w64); NdkControlCqInterruptModeration (its DDI page)"),
    ("STATUS_IO_TIMEOUT", "ntstatus.h (mingw-w64); NDK completion status (ndkpi.md 3.1)"),
    ("STATUS_CANCELLED", "ntstatus.h (mingw-w64); NDK completion status (ndkpi.md 3.1)"),
    ("STATUS_CONNECTION_INVALID", "ntstatus.h (mingw-w64); NDK post on an unconnected QP (ndkpi.md 2.4)"),
    ("STATUS_CONNECTION_ABORTED", "ntstatus.h (mingw-w64); NDK completion status (ndkpi.md 3.1)"),
    ("STATUS_INVALID_HANDLE", "ntstatus.h (mingw-w64); NDK connection status (ndkpi.md 4.1)"),
    ("STATUS_SHARING_VIOLATION", "ntstatus.h (mingw-w64); NDK connection status (ndkpi.md 4.1)"),
    ("STATUS_INVALID_ADDRESS", "ntstatus.h (mingw-w64); NDK connection status (ndkpi.md 4.1)"),
    ("STATUS_INVALID_BUFFER_SIZE", "ntstatus.h (mingw-w64); NDK connection status (ndkpi.md 4.1)"),
    ("STATUS_TOO_MANY_ADDRESSES", "ntstatus.h (mingw-w64); NDK connection status (ndkpi.md 4.1)"),
    ("STATUS_ADDRESS_ALREADY_EXISTS", "ntstatus.h (mingw-w64); NDK connection status (ndkpi.md 4.1)"),
    ("STATUS_CONNECTION_REFUSED", "ntstatus.h (mingw-w64); NDK connection status (ndkpi.md 4.1)"),
    ("NetEventNDKEnable", "netpnp.h (ndis630_extra.h; spec section 0.2: ordinal 13)"),
    ("NetEventNDKDisable", "netpnp.h (ndis630_extra.h; spec section 0.2: ordinal 14)"),
    ("LowPoolPriority", "wdm.h (ndis630_extra.h)"), ("NormalPoolPriority", "wdm.h (ndis630_extra.h)"),
    ("HighPoolPriority", "wdm.h (ndis630_extra.h)"),
    ("NdisMediaStateConnected", "ntddndis.h (mingw-w64)"), ("NdisMediaStateDisconnected", "ntddndis.h (mingw-w64)"),
    ("IF_TYPE_ETHERNET_CSMACD", "ipifcons.h (mingw-w64)"),
    ("AF_INET", "ws2def.h (mingw-w64)"), ("AF_INET6", "ws2def.h (mingw-w64)"),
    ("ALL_PROCESSOR_GROUPS", "winnt.h (mingw-w64)"),
    ("PF_ARM_V8_CRC32_INSTRUCTIONS_AVAILABLE",
     "winnt.h (mingw-w64; wdm.h has the same PF_ values); ExIsProcessorFeaturePresent"),
    ("NDIS_PROTOCOL_ID_DEFAULT", "ntddndis.h (mingw-w64)"), ("NDIS_PROTOCOL_ID_TCP_IP", "ntddndis.h (mingw-w64)"),
    ("NDIS_PROTOCOL_ID_IPX", "ntddndis.h (mingw-w64)"), ("NDIS_PROTOCOL_ID_NBF", "ntddndis.h (mingw-w64)"),
    ("NDIS_PROTOCOL_ID_IP6", "ntddndis.h (ndis630_extra.h)"),
    ("NETWORK_ADDRESS_LENGTH_IP", "ntddndis.h (mingw-w64)"),
    ("NETWORK_ADDRESS_LENGTH_IP6", "ntddndis.h (ndis630_extra.h)"),
] + [(n, "ndkpi.h (ndkpi_decl.h); ndkpi.md 0 [H]") for n in [
    # The NDK_OBJECT_TYPE and NDK_OPERATION_TYPE enumerators. NDK_CQ_NOTIFY_*, NDK_OP_FLAG_* and
    # NDK_MR_FLAG_* are rows of the reference table (the WDK's ndkpi.h), not of this one.
    "NdkObjectTypeUndefined", "NdkObjectTypeAdapter", "NdkObjectTypeQp", "NdkObjectTypeCq", "NdkObjectTypeMr",
    "NdkObjectTypeMw", "NdkObjectTypePd", "NdkObjectTypeSharedEndpoint", "NdkObjectTypeConnector",
    "NdkObjectTypeListener", "NdkObjectTypeSrq", "NdkObjectTypeMax",
    "NdkOperationTypeReceive", "NdkOperationTypeReceiveAndInvalidate", "NdkOperationTypeSend",
    "NdkOperationTypeFastRegister", "NdkOperationTypeBind", "NdkOperationTypeInvalidate", "NdkOperationTypeRead",
    "NdkOperationTypeWrite"]]


# The same for the kernel-mode unit (prelude_ddk.h): wdm.h, the MDL header (dcbndk's
# resources::mdl reads it for the NDK provider's memory regions, ndkpi.md 5) and its values.
DDK_STRUCTS = [
    ("MDL", "wdm.h (mingw-w64 ddk)",
     ["Next", "Size", "MdlFlags", "Process", "MappedSystemVa", "StartVa", "ByteCount", "ByteOffset"]),
    ("KDPC", "wdm.h (mingw-w64 ddk)",
     ["Type", "Importance", "Number", "DpcListEntry", "DeferredRoutine", "DeferredContext",
      "SystemArgument1", "SystemArgument2", "DpcData"]),
    ("XSTATE_CONTEXT", "wdm.h (mingw-w64 ddk), x64", ["Mask", "Length", "Reserved1", "Area", "Buffer"]),
    ("XSTATE_SAVE", "wdm.h (mingw-w64 ddk), x64", ["Prev", "Thread", "Level", "XStateContext"]),
]
DDK_CONSTS = [(n, "wdm.h (mingw-w64 ddk)") for n in [
    "MDL_MAPPED_TO_SYSTEM_VA", "MDL_PAGES_LOCKED", "MDL_SOURCE_IS_NONPAGED_POOL", "MDL_ALLOCATED_FIXED_SIZE",
    "MDL_PARTIAL", "MDL_PARTIAL_HAS_BEEN_MAPPED", "MDL_WRITE_OPERATION",
    "LowPagePriority", "NormalPagePriority", "HighPagePriority",
    "KernelMode", "UserMode", "MmNonCached", "MmCached", "PAGE_SIZE"]] + [
    ("MdlMappingNoExecute", "wdm.h (wdm_extra.h; DDI MmGetSystemAddressForMdlSafe, Windows 8)"),
    ("XSTATE_MASK_AVX", "wdm.h (wdm_extra.h; winnt.h of mingw-w64 has the same)"),
    ("XSTATE_MASK_AVX512", "wdm.h (wdm_extra.h; winnt.h of mingw-w64 has the same)"),
]


def facts(prelude, exprs):
    """The values of `exprs`, read from the compiler's assembly for a unit including `prelude`."""
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "facts.c")
        with open(src, "w") as out:
            out.write(f'#include "{prelude}"\nconst long long facts[] = {{\n')
            out.write(",\n".join(f"    (long long)({e})" for e in exprs))
            out.write("\n};\n")
        asm = subprocess.run(["x86_64-w64-mingw32-gcc", "-S", "-O0", "-I", here, "-o", "-", src],
                             check=True, capture_output=True, text=True).stdout
    values = [int(v) for v in re.findall(r"^\s*\.quad\s+(-?\d+)\s*$", asm, re.M)]
    if len(values) != len(exprs):
        sys.exit(f"{prelude}: expected {len(exprs)} values from the compiler, found {len(values)}")
    return values


def rows_of(overrides, structs, consts):
    """The rows of one unit, each number as an index into the unit's expressions."""
    exprs, rows = [], []
    def ask(expr):
        exprs.append(expr)
        return len(exprs) - 1
    for name, note in overrides:
        rows.append(("struct", name, "0", ask(f"sizeof({name})"), ask(f"_Alignof({name})"), note))
    for name, note, fields in structs:
        rows.append(("struct", name, "0", ask(f"sizeof({name})"), ask(f"_Alignof({name})"), f"struct; {note}"))
        for f in fields:
            member = f"(({name} *)0)->{f}"
            rows.append(("field", f"{name}.{f}", ask(f"offsetof({name}, {f})"), ask(f"sizeof({member})"),
                         ask(f"_Alignof(__typeof__({member}))"), f"{note}"))
    for name, note in consts:
        rows.append(("const", name, ask(f"(long long)({name})"), ask(f"sizeof({name})"), "", note))
    return exprs, rows


def main():
    print("kind\tname\tvalue_or_offset\tsize\talign\tnote")
    for prelude, overrides, structs, consts in [("prelude.h", OVERRIDES, STRUCTS, CONSTS),
                                                ("prelude_ddk.h", [], DDK_STRUCTS, DDK_CONSTS)]:
        exprs, rows = rows_of(overrides, structs, consts)
        values = facts(prelude, exprs)
        def show(cell, hexa=False):
            if isinstance(cell, int):
                v = values[cell]
                return f"0x{v & 0xFFFFFFFF:08X}" if hexa and v > 0xFFFF else str(v)
            return cell
        for kind, name, value, size, align, note in rows:
            print("\t".join([kind, name, show(value, kind == "const"), show(size), show(align),
                             note + "; x86_64-w64-mingw32-gcc 12"]))


if __name__ == "__main__":
    main()
