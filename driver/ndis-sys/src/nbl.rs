//! `NET_BUFFER_LIST` and `NET_BUFFER` (nbl.h), as far as the data path needs them.
//!
//! The C types use anonymous unions; their Rust stand-ins are marked `#[abi(anonymous)]` and their
//! members are checked as members of the parent, under the names C code uses.

use super::abi::{Align16, ndis_consts, ndis_structs};
use super::ntdef::SLIST_HEADER;
use super::objectheader::NDIS_OBJECT_HEADER;
use super::types::{
    BOOLEAN, LONG, NDIS_HANDLE, NDIS_STATUS, PHYSICAL_ADDRESS, PVOID, SIZE_T, UCHAR, ULONG, USHORT,
};
use super::wdm::PMDL;

ndis_structs! {
    /// The anonymous `{ Next; FirstNetBuffer; }` at the head of a `NET_BUFFER_LIST`.
    #[abi(inline)]
    pub struct NET_BUFFER_LIST_LINKS {
        /// The next NBL of the chain.
        pub Next: *mut NET_BUFFER_LIST,
        /// The first NET_BUFFER of this NBL.
        pub FirstNetBuffer: *mut NET_BUFFER,
    }

    /// `NET_BUFFER_LIST_HEADER`
    #[align(16)]
    pub union NET_BUFFER_LIST_HEADER {
        /// `Next` and `FirstNetBuffer`.
        #[abi(anonymous)]
        pub links: NET_BUFFER_LIST_LINKS,
        /// Free-list link.
        pub Link: SLIST_HEADER,
    }

    /// The anonymous union at the head of a `NET_BUFFER_LIST`.
    #[abi(inline)]
    #[align(16)]
    pub union NET_BUFFER_LIST_HEAD {
        /// `Next` and `FirstNetBuffer`.
        #[abi(anonymous)]
        pub links: NET_BUFFER_LIST_LINKS,
        /// Free-list link.
        pub Link: SLIST_HEADER,
        /// The same 16 bytes as a header.
        pub NetBufferListHeader: NET_BUFFER_LIST_HEADER,
    }

    /// The anonymous `{ NDIS_STATUS Status; ULONG NdisReserved2; }` of a `NET_BUFFER_LIST`.
    #[abi(inline)]
    pub union NET_BUFFER_LIST_STATUS {
        /// Completion status, set by the miniport before completing a send.
        pub Status: NDIS_STATUS,
        /// Reserved.
        pub NdisReserved2: ULONG,
    }

    /// `NET_BUFFER_LIST`: 336 bytes, 16-byte aligned.
    #[align(16)]
    pub struct NET_BUFFER_LIST {
        /// `Next`, `FirstNetBuffer`, `Link`, `NetBufferListHeader`.
        #[abi(anonymous)]
        pub head: NET_BUFFER_LIST_HEAD,
        /// `PNET_BUFFER_LIST_CONTEXT`
        pub Context: PVOID,
        /// The parent of a cloned NBL.
        pub ParentNetBufferList: *mut NET_BUFFER_LIST,
        /// The pool the NBL came from.
        pub NdisPoolHandle: NDIS_HANDLE,
        /// Reserved for NDIS.
        pub NdisReserved: Align16<[PVOID; 2]>,
        /// Reserved for the protocol.
        pub ProtocolReserved: Align16<[PVOID; 4]>,
        /// Reserved for the miniport.
        pub MiniportReserved: Align16<[PVOID; 2]>,
        /// Scratch for the current owner.
        pub Scratch: PVOID,
        /// The handle of the driver that sent it.
        pub SourceHandle: NDIS_HANDLE,
        /// `NDIS_NBL_FLAGS_*`
        pub NblFlags: ULONG,
        /// Clones outstanding.
        pub ChildRefCount: LONG,
        /// `NBL_FLAGS_*`
        pub Flags: ULONG,
        /// `Status` / `NdisReserved2`.
        #[abi(anonymous)]
        pub status: NET_BUFFER_LIST_STATUS,
        /// Out-of-band information, indexed by `NDIS_NET_BUFFER_LIST_INFO`.
        pub NetBufferListInfo: [PVOID; 24],
    }

    /// The anonymous `{ ULONG DataLength; SIZE_T stDataLength; }` of `NET_BUFFER_DATA`.
    #[abi(inline)]
    pub union NET_BUFFER_DATA_LENGTH {
        /// Bytes of data in the MDL chain from `DataOffset`.
        pub DataLength: ULONG,
        /// The same, pointer-sized.
        pub stDataLength: SIZE_T,
    }

    /// `NET_BUFFER_DATA`: where the data of a NET_BUFFER is.
    pub struct NET_BUFFER_DATA {
        /// The next NET_BUFFER of the NBL.
        pub Next: *mut NET_BUFFER,
        /// The MDL that holds the current data start.
        pub CurrentMdl: PMDL,
        /// Offset of the data start within `CurrentMdl`.
        pub CurrentMdlOffset: ULONG,
        /// `DataLength` / `stDataLength`.
        #[abi(anonymous)]
        pub length: NET_BUFFER_DATA_LENGTH,
        /// The first MDL of the chain.
        pub MdlChain: PMDL,
        /// Offset of the data start from the start of `MdlChain`.
        pub DataOffset: ULONG,
    }

    /// `NET_BUFFER_HEADER`
    #[align(16)]
    pub union NET_BUFFER_HEADER {
        /// The data description.
        #[abi(anonymous)]
        pub data: NET_BUFFER_DATA,
        /// Free-list link.
        pub Link: SLIST_HEADER,
    }

    /// The anonymous union at the head of a `NET_BUFFER`.
    #[abi(inline)]
    #[align(16)]
    pub union NET_BUFFER_HEAD {
        /// The data description.
        #[abi(anonymous)]
        pub data: NET_BUFFER_DATA,
        /// Free-list link.
        pub Link: SLIST_HEADER,
        /// The same bytes as a header.
        pub NetBufferHeader: NET_BUFFER_HEADER,
    }

    /// The anonymous `{ SharedMemoryInfo; ScatterGatherList; }` of a `NET_BUFFER`.
    #[abi(inline)]
    pub union NET_BUFFER_DMA {
        /// `PNET_BUFFER_SHARED_MEMORY`
        pub SharedMemoryInfo: PVOID,
        /// `PSCATTER_GATHER_LIST`
        pub ScatterGatherList: PVOID,
    }

    /// `NET_BUFFER`: 176 bytes, 16-byte aligned.
    #[align(16)]
    pub struct NET_BUFFER {
        /// `Next`, `CurrentMdl`, ..., `Link`, `NetBufferHeader`.
        #[abi(anonymous)]
        pub head: NET_BUFFER_HEAD,
        /// Checksum bias.
        pub ChecksumBias: USHORT,
        /// Reserved.
        pub Reserved: USHORT,
        /// The pool the NB came from.
        pub NdisPoolHandle: NDIS_HANDLE,
        /// Reserved for NDIS.
        pub NdisReserved: Align16<[PVOID; 2]>,
        /// Reserved for the protocol.
        pub ProtocolReserved: Align16<[PVOID; 6]>,
        /// Reserved for the miniport.
        pub MiniportReserved: Align16<[PVOID; 4]>,
        /// DMA address, when mapped.
        pub DataPhysicalAddress: PHYSICAL_ADDRESS,
        /// `SharedMemoryInfo` / `ScatterGatherList`.
        #[abi(anonymous)]
        pub dma: NET_BUFFER_DMA,
    }

    /// `NDIS_NET_BUFFER_LIST_8021Q_INFO`: the `Ieee8021QNetBufferListInfo` slot of an NBL. The
    /// `TagHeader` bit-fields live in one `UINT32`: UserPriority bits 0-2, CanonicalFormatId bit 3,
    /// VlanId bits 4-15 (`NDIS_8021Q_INFO_*` below).
    pub union NDIS_NET_BUFFER_LIST_8021Q_INFO {
        /// The bit-field storage unit.
        pub TagHeader: ULONG,
        /// The slot as the pointer-sized value stored in `NetBufferListInfo`.
        pub Value: PVOID,
    }

    /// `NET_BUFFER_LIST_POOL_PARAMETERS`: what `NdisAllocateNetBufferListPool` makes a pool of.
    pub struct NET_BUFFER_LIST_POOL_PARAMETERS {
        /// {NDIS_OBJECT_TYPE_DEFAULT, 1, 16}
        pub Header: NDIS_OBJECT_HEADER,
        /// `NDIS_PROTOCOL_ID_*` (0: default).
        pub ProtocolId: UCHAR,
        /// Allocate one NET_BUFFER with each NBL.
        pub fAllocateNetBuffer: BOOLEAN,
        /// NBL context bytes.
        pub ContextSize: USHORT,
        /// The pool tag.
        pub PoolTag: ULONG,
        /// Data buffer bytes allocated with each NBL (0: the caller's MDLs).
        pub DataSize: ULONG,
    }
}

ndis_consts! {
    /// `NET_BUFFER_LIST_POOL_PARAMETERS_REVISION_1`
    pub const NET_BUFFER_LIST_POOL_PARAMETERS_REVISION_1: UCHAR = 1;
    /// `NDIS_SIZEOF_NET_BUFFER_LIST_POOL_PARAMETERS_REVISION_1`
    pub const NDIS_SIZEOF_NET_BUFFER_LIST_POOL_PARAMETERS_REVISION_1: USHORT = 16;
    /// `NDIS_RECEIVE_FLAGS_RESOURCES`: the miniport reclaims the NBLs when the indication returns.
    pub const NDIS_RECEIVE_FLAGS_RESOURCES: ULONG = 0x0000_0002;
    /// `NetBufferListCancelId`: the NBL info slot of the cancellation identifier.
    pub const NetBufferListCancelId: i32 = 5;
    /// `Ieee8021QNetBufferListInfo`: the NBL info slot of the 802.1Q tag.
    pub const Ieee8021QNetBufferListInfo: i32 = 4;
    /// `MaxNetBufferListInfo` in an NDIS 6.30 build.
    pub const MaxNetBufferListInfo: i32 = 24;
    /// `NDIS_SEND_FLAGS_DISPATCH_LEVEL`: the send handler runs at DISPATCH_LEVEL.
    pub const NDIS_SEND_FLAGS_DISPATCH_LEVEL: ULONG = 0x0000_0001;
    /// `NDIS_SEND_COMPLETE_FLAGS_DISPATCH_LEVEL`: completing at DISPATCH_LEVEL.
    pub const NDIS_SEND_COMPLETE_FLAGS_DISPATCH_LEVEL: ULONG = 0x0000_0001;
    /// `NDIS_RETURN_FLAGS_DISPATCH_LEVEL`
    pub const NDIS_RETURN_FLAGS_DISPATCH_LEVEL: ULONG = 0x0000_0001;
    /// `NDIS_RECEIVE_FLAGS_DISPATCH_LEVEL`
    pub const NDIS_RECEIVE_FLAGS_DISPATCH_LEVEL: ULONG = 0x0000_0001;
}
