//! The call the kit makes into the driver that no Windows component can make: NDK activity
//! reported into its counters and tables without a consumer. (Remote QoS settings and the
//! address list need none: a peer's LLDPDUs bring the one, `kit::switch_port`, and an NDK
//! consumer's binds show the other, `sim::ndk_addresses`.) It exists
//! only where the driver is linked into this process (Linux). Against a loaded image there is no
//! such entry point: the kit skips the cases that make one of these calls, naming the call
//! (`kit::side_doors`, a list the Linux kit checks against the calls each case makes), and a
//! call made anyway unwinds with [`Unreachable`] and skips its case too, never passing it.

use dcbndk_core::ndk::{Activity, Applied, Refused};

/// The payload a side door unwinds with where the driver is an image: the call's name.
#[derive(Debug, Clone, Copy)]
pub struct Unreachable(pub &'static str);

/// The side door a case reached since the last [`take_reached`], on any of its threads (a
/// thread of the case that unwinds makes the case fail with another message).
static REACHED: std::sync::Mutex<Option<Unreachable>> = std::sync::Mutex::new(None);

/// Whether a side door was reached since the last [`take_reached`].
pub fn was_reached() -> bool {
    crate::sim::lock(&REACHED).is_some()
}

/// The side door reached since the last call, if any.
pub fn take_reached() -> Option<Unreachable> {
    crate::sim::lock(&REACHED).take()
}

/// Whether this host has the side doors (the driver linked into this process).
pub const AVAILABLE: bool = cfg!(not(windows));

/// Records `door` as reached.
fn reached(door: &'static str) {
    *crate::sim::lock(&REACHED) = Some(Unreachable(door));
}

/// Records `door` as reached and unwinds with it.
#[cfg(windows)]
fn unreachable(door: &'static str) -> ! {
    reached(door);
    std::panic::panic_any(Unreachable(door))
}

impl Unreachable {
    /// The reason a case that needed the call is skipped.
    #[must_use]
    pub fn reason(self) -> String {
        format!(
            "needs {}, a call into the linked driver that no Windows component makes: runs only against the Linux build",
            self.0
        )
    }
}

/// The name of [`ndk_activity`]'s call.
pub const NDK_ACTIVITY: &str = "dcbndk::entry::ndk::activity";

/// `dcbndk::entry::ndk::activity`: NDK activity reported into the adapter's counters and tables.
///
/// # Safety
/// `context` is the context of an initialized, not halted adapter of the dcbndk driver, at
/// DISPATCH_LEVEL.
///
/// # Errors
/// What the driver refused.
pub unsafe fn ndk_activity(context: usize, activity: &Activity) -> Result<Applied, Refused> {
    reached(NDK_ACTIVITY);
    // SAFETY: this function's contract.
    unsafe { imp::ndk_activity(context, activity) }
}

#[cfg(not(windows))]
mod imp {
    use dcbndk_core::ndk::{Activity, Applied, Refused};

    use crate::sim::as_handle;

    pub(super) unsafe fn ndk_activity(
        context: usize,
        activity: &Activity,
    ) -> Result<Applied, Refused> {
        // SAFETY: the caller's contract.
        unsafe { dcbndk::entry::ndk::activity(as_handle(context), activity) }
    }
}

#[cfg(windows)]
mod imp {
    use dcbndk_core::ndk::{Activity, Applied, Refused};

    use super::{NDK_ACTIVITY, unreachable};

    pub(super) unsafe fn ndk_activity(_: usize, _: &Activity) -> Result<Applied, Refused> {
        unreachable(NDK_ACTIVITY)
    }
}
