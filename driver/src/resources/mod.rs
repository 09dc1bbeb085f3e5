//! What the adapter context holds and the layers above use: memory, locks, timers, a DPC, the
//! transmit link and receive buffers, the virtual wire's ports, NDK's memory and work item,
//! NBL views, MDL chains (the NDK provider's memory regions), keyword reading, the event log,
//! the RoCEv2 ICRC's CRC-32 on the CPU's instructions and the AVX state saved for its widest fold. Each file knows nothing of the adapter context
//! (imports point down, to each other as listed and to the bindings): a resource that calls
//! back into the driver (a timer, the work item) is given its routine by initialize.

pub mod config;
pub mod crc;
pub mod dpc;
pub mod irql;
pub mod link;
pub mod log;
pub mod mdl;
pub mod memory;
pub mod nbl;
pub mod ndk;
pub mod ndk_abi;
pub mod ndkobject;
pub mod ndkports;
pub mod oid;
pub mod provider;
pub mod rxpool;
pub mod status;
pub mod sync;
pub mod timer;
pub mod wire;
pub mod xstate;
