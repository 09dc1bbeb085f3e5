//! Loading the driver's image on the Windows host: the imports checked against this process's
//! exports first, then the image loaded by the system loader (Wine's), beside the replacement
//! ndis.sys, ntoskrnl.exe and hal.dll `cargo xtask kit` stages there. Those modules implement
//! nothing: each export jumps to the export of the same name of this process, the simulator's
//! (`xtask/src/kit.rs`), so there is one simulator whichever module the driver imports from.

use std::ffi::CString;

use object::read::pe::PeFile64;
use windows_sys::Win32::Foundation::GetLastError;
use windows_sys::Win32::System::LibraryLoader::{
    GetModuleHandleW, GetProcAddress, LOAD_WITH_ALTERED_SEARCH_PATH, LoadLibraryExW,
};

/// The address the loader put the image at, once loaded.
pub(super) static BASE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

/// Loads the image [`super::imp::IMAGE`] names; the address of its entry point.
pub(super) fn load() -> Result<usize, String> {
    let path = std::env::var(super::imp::IMAGE)
        .map_err(|_| format!("{} is not set: no driver image to load", super::imp::IMAGE))?;
    let bytes = std::fs::read(&path).map_err(|e| format!("{path}: {e}"))?;
    let file = PeFile64::parse(&*bytes).map_err(|e| format!("{path}: not an x64 PE image: {e}"))?;
    let missing = missing_exports(&file).map_err(|e| format!("{path}: {e}"))?;
    if !missing.is_empty() {
        return Err(format!(
            "{path} imports {} function(s) the simulator does not export: {}",
            missing.len(),
            missing.join(", ")
        ));
    }
    let entry_rva = file
        .nt_headers()
        .optional_header
        .address_of_entry_point
        .get(object::LittleEndian);
    let wide: Vec<u16> = path.encode_utf16().chain(Some(0)).collect();
    // SAFETY: a NUL-terminated path; no file handle; the flag makes the loader look for the
    // image's imports beside it, where the replacement modules are.
    let module = unsafe {
        LoadLibraryExW(
            wide.as_ptr(),
            std::ptr::null_mut(),
            LOAD_WITH_ALTERED_SEARCH_PATH,
        )
    };
    if module.is_null() {
        // SAFETY: no preconditions.
        let error = unsafe { GetLastError() };
        return Err(format!(
            "{path}: the loader refused the image (error {error}): are ndis.sys, ntoskrnl.exe and hal.dll beside it, and WINEDLLOVERRIDES set to take them?"
        ));
    }
    let base = module as usize;
    // Kept first: the entry point below is only found after it.
    let _ = BASE.set(base);
    base.checked_add(entry_rva as usize)
        .ok_or_else(|| format!("{path}: entry point outside the address space"))
}

/// The C runtime routines the replacement ntoskrnl.exe forwards to msvcrt.dll itself
/// (`xtask/src/kit.rs`): not the simulator's to export.
const C_RUNTIME: [&[u8]; 4] = [b"memcpy", b"memmove", b"memset", b"memcmp"];

/// `module!name` of every import of `file` this process does not export under that name.
fn missing_exports(file: &PeFile64<'_>) -> Result<Vec<String>, String> {
    let table = file
        .import_table()
        .map_err(|e| format!("import table: {e}"))?
        .ok_or("no import table")?;
    let mut descriptors = table.descriptors().map_err(|e| format!("imports: {e}"))?;
    // SAFETY: NULL asks for the module of the process's executable, which stays loaded.
    let exe = unsafe { GetModuleHandleW(std::ptr::null()) };
    let mut missing = Vec::new();
    while let Some(d) = descriptors.next().map_err(|e| format!("imports: {e}"))? {
        let module = table
            .name(d.name.get(object::LittleEndian))
            .map_err(|e| format!("imports: {e}"))?;
        let module = String::from_utf8_lossy(module).into_owned();
        let mut thunks = table
            .thunks(d.original_first_thunk.get(object::LittleEndian))
            .map_err(|e| format!("{module}: {e}"))?;
        while let Some(thunk) = thunks
            .next::<object::pe::ImageNtHeaders64>()
            .map_err(|e| format!("{module}: {e}"))?
        {
            let name = match table.import::<object::pe::ImageNtHeaders64>(thunk) {
                Ok(object::read::pe::Import::Name(_, name)) => name,
                Ok(object::read::pe::Import::Ordinal(n)) => {
                    missing.push(format!("{module}!#{n} (by ordinal)"));
                    continue;
                }
                Err(e) => return Err(format!("{module}: {e}")),
            };
            if module.eq_ignore_ascii_case("ntoskrnl.exe") && C_RUNTIME.contains(&name) {
                continue;
            }
            let c = CString::new(name).map_err(|_| format!("{module}: a name with a NUL"))?;
            // SAFETY: the executable's module handle and a NUL-terminated name.
            if unsafe { GetProcAddress(exe, c.as_ptr().cast()) }.is_none() {
                missing.push(format!("{module}!{}", String::from_utf8_lossy(name)));
            }
        }
    }
    Ok(missing)
}
