//! The simulated ndis.sys.
