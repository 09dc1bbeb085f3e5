//! Text views of the adapter as the Windows cmdlets show it, rendered from the OID answers and
//! the attributes the driver gave NDIS.

pub mod qos;
pub mod rdma;
