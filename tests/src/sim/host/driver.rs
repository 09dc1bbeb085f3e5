//! Where the dcbndk driver's `DriverEntry` comes from: the linked rlib on Linux, the loaded image
//! on Windows. The simulator reaches the driver only through that entry point and the handlers
//! and dispatch tables it registers.

use ndis_sys::ntdef::PCUNICODE_STRING;
use ndis_sys::types::{NDIS_STATUS, PVOID};

/// `DRIVER_INITIALIZE`.
pub type DriverEntry =
    unsafe extern "system" fn(driver_object: PVOID, registry_path: PCUNICODE_STRING) -> NDIS_STATUS;

/// The driver's entry point, loading the driver first where the host loads an image.
///
/// # Errors
/// Why the image could not be loaded (Windows only).
pub fn entry() -> Result<DriverEntry, String> {
    imp::entry()
}

/// Whether the driver under test is an optimized build (its stack budget depends on it): this
/// process's own build where the driver is linked, the image's profile as `cargo xtask kit`
/// states it (`DCBNDK_IMAGE_PROFILE`, release unless it says dev) where it is loaded.
#[must_use]
pub fn optimized() -> bool {
    imp::optimized()
}

/// The image's load address and its static stack table: per entry point its RVA, its deepest
/// path in bytes (none where `cargo xtask pe` gives no figure) and its name.
pub type StackTable = (usize, Vec<(usize, Option<u64>, String)>);

/// Where the driver's image is loaded, when the host loads one (Windows), and its static stack
/// table as `cargo xtask kit` staged it (`DCBNDK_IMAGE_STACK`: RVA, deepest path, name per
/// line): the figures `cargo xtask pe` checks, for the Lifecycle stack case to report beside
/// the measured ones.
#[must_use]
pub fn image_stack_table() -> Option<StackTable> {
    imp::image_stack_table()
}

/// What the kit runs against, for its reports: the image's path, or the linked build.
#[must_use]
pub fn describe() -> String {
    imp::describe()
}

#[cfg(not(windows))]
mod imp {
    use ndis_sys::ntdef::PCUNICODE_STRING;
    use ndis_sys::types::{NDIS_STATUS, PVOID};

    unsafe extern "system" {
        /// The driver's entry point, resolved by its exported name when the kit's binary links the
        /// driver's rlib, as the kernel loader resolves it in the image.
        fn DriverEntry(driver_object: PVOID, registry_path: PCUNICODE_STRING) -> NDIS_STATUS;
    }

    #[expect(
        clippy::unnecessary_wraps,
        reason = "the same signature as the Windows host's, which can fail"
    )]
    pub(super) fn entry() -> Result<super::DriverEntry, String> {
        Ok(DriverEntry)
    }

    pub(super) fn describe() -> String {
        "the driver's source, linked into this process (System V convention)".into()
    }

    pub(super) fn optimized() -> bool {
        !cfg!(debug_assertions)
    }

    pub(super) fn image_stack_table() -> Option<super::StackTable> {
        None
    }
}

#[cfg(windows)]
mod imp {
    use std::sync::OnceLock;

    /// The environment variable naming the image to load (`cargo xtask kit` sets it).
    pub(super) const IMAGE: &str = "DCBNDK_IMAGE";

    static LOADED: OnceLock<Result<usize, String>> = OnceLock::new();

    pub(super) fn entry() -> Result<super::DriverEntry, String> {
        let address = LOADED.get_or_init(super::image::load).clone()?;
        // SAFETY: the address of the image's entry point (its optional header's
        // AddressOfEntryPoint in the loaded image), a `DRIVER_INITIALIZE` as the kernel calls it:
        // the image is linked with /ENTRY:DriverEntry, and it stays loaded for the process.
        Ok(unsafe { std::mem::transmute::<usize, super::DriverEntry>(address) })
    }

    /// The environment variable that says the image's cargo profile.
    const PROFILE: &str = "DCBNDK_IMAGE_PROFILE";

    pub(super) fn optimized() -> bool {
        std::env::var(PROFILE).map_or(true, |p| p != "dev")
    }

    pub(super) fn image_stack_table() -> Option<super::StackTable> {
        let base = *super::image::BASE.get()?;
        let text = std::fs::read_to_string(std::env::var("DCBNDK_IMAGE_STACK").ok()?).ok()?;
        let rows = text
            .lines()
            .filter_map(|line| {
                let mut fields = line.splitn(3, '\t');
                let rva = fields.next()?.trim_start_matches("0x");
                let rva = usize::from_str_radix(rva, 16).ok()?;
                let bytes = fields.next()?.parse().ok();
                Some((rva, bytes, fields.next()?.to_owned()))
            })
            .collect();
        Some((base, rows))
    }

    pub(super) fn describe() -> String {
        match std::env::var(IMAGE) {
            Ok(path) => format!("the image {path} (Microsoft x64 convention)"),
            Err(_) => format!("no image: {IMAGE} is not set"),
        }
    }
}

#[cfg(windows)]
#[path = "image.rs"]
mod image;
