//! The data path's rules: how an egress frame is read and classified to an 802.1p
//! priority and a traffic class, how the 802.1Q tag is inserted or updated, and how the virtual
//! link schedules the per-TC queues (strict priority, then ETS by deficit round robin) and obeys
//! PFC pause frames. Pure state over byte slices and host-given time; the shell (driver/src)
//! walks the NET_BUFFER/MDL chains and calls in here.

pub mod classify;
pub mod frame;
pub mod link;
pub mod receive;
pub mod scan;
