//! What the project's tests share with `cargo xtask`: the INF stamping of `cargo xtask package`,
//! which the INF checks of the test suite run on the stamped INF too.

pub mod stamp;
