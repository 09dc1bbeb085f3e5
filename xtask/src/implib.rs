//! Import libraries (`ndis.lib`, `ntoskrnl.lib`, `hal.lib`) made from the export lists kept in
//! `xtask/exports/<arch>/`, so that the driver links on a machine without the WDK. Each list names
//! its sources in its header; the writer is rustc's own (`ar_archive_writer`, a port of LLVM's
//! COFFImportFile), so a `.lib` made here is what `lib /def:` or `llvm-dlltool` would make.

use std::fs;
use std::io::Cursor;
use std::path::{Path, PathBuf};

use ar_archive_writer::{COFFShortExport, MachineTypes, write_import_library};

use crate::target::Arch;

/// The kernel modules a driver may import from, with the stem of their import library.
pub const MODULES: [(&str, &str); 3] = [
    ("ndis.sys", "ndis"),
    ("ntoskrnl.exe", "ntoskrnl"),
    ("hal.dll", "hal"),
];

/// The export list of `module` for `arch`: one name per line, `#` comments.
pub fn export_list(root: &Path, arch: Arch, module: &str) -> Result<Vec<String>, String> {
    let path = exports_path(root, arch, module);
    let text = fs::read_to_string(&path)
        .map_err(|error| format!("cannot read the export list {}: {error}", path.display()))?;
    let mut names = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if !line
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '@' || c == '?')
        {
            return Err(format!(
                "{}:{}: {line:?} is not an export name",
                path.display(),
                number + 1
            ));
        }
        names.push(line.to_owned());
    }
    if names.is_empty() {
        return Err(format!("{} lists no export", path.display()));
    }
    Ok(names)
}

/// Where the export list of `module` for `arch` lives.
pub fn exports_path(root: &Path, arch: Arch, module: &str) -> PathBuf {
    root.join("xtask")
        .join("exports")
        .join(arch.name())
        .join(format!("{module}.txt"))
}

/// Writes the three import libraries for `arch` into `dir`.
pub fn write_all(root: &Path, arch: Arch, dir: &Path) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|error| format!("cannot create {}: {error}", dir.display()))?;
    for (module, stem) in MODULES {
        let names = export_list(root, arch, module)?;
        let exports: Vec<COFFShortExport> = names
            .into_iter()
            .map(|name| COFFShortExport {
                name,
                ext_name: None,
                symbol_name: None,
                import_name: None,
                export_as: None,
                ordinal: 0,
                noname: false,
                data: false,
                private: false,
                constant: false,
            })
            .collect();
        let machine = match arch {
            Arch::X64 => MachineTypes::AMD64,
            Arch::Arm64 => MachineTypes::ARM64,
        };
        let mut bytes = Cursor::new(Vec::new());
        write_import_library(&mut bytes, module, &exports, machine, false, false, &[])
            .map_err(|error| format!("cannot make the import library of {module}: {error}"))?;
        let path = dir.join(format!("{stem}.lib"));
        fs::write(&path, bytes.into_inner())
            .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
    }
    Ok(())
}
