//! NDIS QoS (DCB): capabilities, the parameters of `OID_QOS_PARAMETERS` and of the QoS status
//! indications, their validation, the local/remote/operational resolution, and the classifier
//! snapshot the data path reads (spec §1.2-1.5, §3.5, §4, §5).

pub mod caps;
pub mod keyword;
pub mod params;
pub mod state;
pub mod validate;

pub use caps::*;
