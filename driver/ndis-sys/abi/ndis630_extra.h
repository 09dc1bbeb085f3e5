/*
 * NDIS 6.30 declarations that mingw-w64's user-mode headers lack, transcribed from the Windows
 * Driver Kit (ndis.h, netpnp.h, wdm.h, ntddndis.h) as the DDI reference documents them. Compiled with
 * x86_64-w64-mingw32-gcc, which applies the Microsoft x64 layout rules, it gives the layout facts
 * of tests/abi/supplement.tsv (gen_supplement.py) and the C side of the mingw ABI test.
 * Include after <windows.h>, <winternl.h> and <ntddndis.h> with UM_NDIS630 defined.
 */
#ifndef DCBNDK_NDIS630_EXTRA_H
#define DCBNDK_NDIS630_EXTRA_H

typedef PVOID NDIS_HANDLE;
typedef UNICODE_STRING NDIS_STRING;

#ifndef RTL_SIZEOF_THROUGH_FIELD
#define RTL_SIZEOF_THROUGH_FIELD(type, field) (FIELD_OFFSET(type, field) + sizeof(((type *)0)->field))
#endif

/* ndis.h: reading the registry */
typedef enum _NDIS_PARAMETER_TYPE {
    NdisParameterInteger,
    NdisParameterHexInteger,
    NdisParameterString,
    NdisParameterMultiString,
    NdisParameterBinary
} NDIS_PARAMETER_TYPE;

typedef struct {
    USHORT Length;
    PVOID Buffer;
} BINARY_DATA;

typedef struct _NDIS_CONFIGURATION_PARAMETER {
    NDIS_PARAMETER_TYPE ParameterType;
    union {
        ULONG IntegerData;
        NDIS_STRING StringData;
        BINARY_DATA BinaryData;
    } ParameterData;
} NDIS_CONFIGURATION_PARAMETER;

#define NDIS_CONFIGURATION_OBJECT_REVISION_1 1
typedef struct _NDIS_CONFIGURATION_OBJECT {
    NDIS_OBJECT_HEADER Header;
    NDIS_HANDLE NdisHandle;
    ULONG Flags;
} NDIS_CONFIGURATION_OBJECT;
#define NDIS_SIZEOF_CONFIGURATION_OBJECT_REVISION_1 RTL_SIZEOF_THROUGH_FIELD(NDIS_CONFIGURATION_OBJECT, Flags)

/* ndis.h: halt and shutdown actions */
typedef enum _NDIS_HALT_ACTION {
    NdisHaltDeviceDisabled,
    NdisHaltDeviceInstanceDeInitialized,
    NdisHaltDevicePoweredDown,
    NdisHaltDeviceSurpriseRemoved,
    NdisHaltDeviceFailed,
    NdisHaltDeviceInitializationFailed,
    NdisHaltDeviceStopped
} NDIS_HALT_ACTION;

typedef enum _NDIS_SHUTDOWN_ACTION {
    NdisShutdownPowerOff,
    NdisShutdownBugCheck
} NDIS_SHUTDOWN_ACTION;

/* netpnp.h: PnP events (NDIS 6.30 order, with the NDK events) */
typedef enum _NET_PNP_EVENT_CODE {
    NetEventSetPower,
    NetEventQueryPower,
    NetEventQueryRemoveDevice,
    NetEventCancelRemoveDevice,
    NetEventReconfigure,
    NetEventBindList,
    NetEventBindsComplete,
    NetEventPnPCapabilities,
    NetEventPause,
    NetEventRestart,
    NetEventPortActivation,
    NetEventPortDeactivation,
    NetEventIMReEnableDevice,
    NetEventNDKEnable,
    NetEventNDKDisable,
    NetEventFilterPreDetach,
    NetEventMaximum
} NET_PNP_EVENT_CODE;

typedef struct _NET_PNP_EVENT {
    NET_PNP_EVENT_CODE NetEvent;
    PVOID Buffer;
    ULONG BufferLength;
    ULONG_PTR NdisReserved[4];
    ULONG_PTR TransportReserved[4];
    ULONG_PTR TdiReserved[4];
    ULONG_PTR TdiClientReserved[4];
} NET_PNP_EVENT;

/* ndis.h: PnP notifications */
#define NET_PNP_EVENT_NOTIFICATION_REVISION_1 1
typedef struct _NET_PNP_EVENT_NOTIFICATION {
    NDIS_OBJECT_HEADER Header;
    NDIS_PORT_NUMBER PortNumber;
    NET_PNP_EVENT NetPnPEvent;
    ULONG Flags;
} NET_PNP_EVENT_NOTIFICATION;
#define NDIS_SIZEOF_NET_PNP_EVENT_NOTIFICATION_REVISION_1 RTL_SIZEOF_THROUGH_FIELD(NET_PNP_EVENT_NOTIFICATION, Flags)

typedef enum _NDIS_DEVICE_PNP_EVENT {
    NdisDevicePnPEventQueryRemoved,
    NdisDevicePnPEventRemoved,
    NdisDevicePnPEventSurpriseRemoved,
    NdisDevicePnPEventQueryStopped,
    NdisDevicePnPEventStopped,
    NdisDevicePnPEventPowerProfileChanged,
    NdisDevicePnPEventMaximum
} NDIS_DEVICE_PNP_EVENT;

#define NET_DEVICE_PNP_EVENT_REVISION_1 1
typedef struct _NET_DEVICE_PNP_EVENT {
    NDIS_OBJECT_HEADER Header;
    NDIS_PORT_NUMBER PortNumber;
    NDIS_DEVICE_PNP_EVENT DevicePnPEvent;
    PVOID InformationBuffer;
    ULONG InformationBufferLength;
    UCHAR NdisReserved[4];
} NET_DEVICE_PNP_EVENT;

/* ndis.h: spin locks */
typedef ULONG_PTR KSPIN_LOCK;
typedef UCHAR KIRQL;
typedef struct _NDIS_SPIN_LOCK {
    KSPIN_LOCK SpinLock;
    KIRQL OldIrql;
} NDIS_SPIN_LOCK;

/* ndis.h: timer objects */
typedef VOID (NTAPI NDIS_TIMER_FUNCTION)(PVOID SystemSpecific1, PVOID FunctionContext,
                                         PVOID SystemSpecific2, PVOID SystemSpecific3);
typedef NDIS_TIMER_FUNCTION *PNDIS_TIMER_FUNCTION;
#define NDIS_TIMER_CHARACTERISTICS_REVISION_1 1
typedef struct _NDIS_TIMER_CHARACTERISTICS {
    NDIS_OBJECT_HEADER Header;
    ULONG AllocationTag;
    PNDIS_TIMER_FUNCTION TimerFunction;
    PVOID FunctionContext;
} NDIS_TIMER_CHARACTERISTICS;
#define NDIS_SIZEOF_TIMER_CHARACTERISTICS_REVISION_1 RTL_SIZEOF_THROUGH_FIELD(NDIS_TIMER_CHARACTERISTICS, FunctionContext)

/* ntddndis.h: the IPv6 address of OID_GEN_NETWORK_LAYER_ADDRESSES, which mingw-w64's ntddndis.h
 * (which has NETWORK_ADDRESS_LIST, NETWORK_ADDRESS and NETWORK_ADDRESS_IP) lacks. Windows' TCP/IP
 * sends a list of these with AddressType NDIS_PROTOCOL_ID_IP6 (the WDK's ntddndis.h; NetKVM's
 * ParaNdis_OnOidSetNetworkAddresses reads them so). sin6_addr is the address in network order. */
#define NDIS_PROTOCOL_ID_IP6 0x03
typedef struct _NETWORK_ADDRESS_IP6 {
    USHORT sin6_port;
    ULONG sin6_flowinfo;
    USHORT sin6_addr[8];
    ULONG sin6_scope_id;
} NETWORK_ADDRESS_IP6, *PNETWORK_ADDRESS_IP6;
#define NETWORK_ADDRESS_LENGTH_IP6 sizeof (NETWORK_ADDRESS_IP6)

/* wdm.h: pool priorities */
typedef enum _EX_POOL_PRIORITY {
    LowPoolPriority,
    LowPoolPrioritySpecialPoolOverrun = 8,
    LowPoolPrioritySpecialPoolUnderrun = 9,
    NormalPoolPriority = 16,
    NormalPoolPrioritySpecialPoolOverrun = 24,
    NormalPoolPrioritySpecialPoolUnderrun = 25,
    HighPoolPriority = 32,
    HighPoolPrioritySpecialPoolOverrun = 40,
    HighPoolPrioritySpecialPoolUnderrun = 41
} EX_POOL_PRIORITY;

#endif
