//! The zip a test engineer copies to a VM: the package folder and the PowerShell scripts beside
//! it (`x64/dcbndk.inf`, ..., `windows/Install-Dcbndk.ps1`, ...), so that
//! `windows\Install-Dcbndk.ps1 -PackageDir ..\x64` runs from where it is unpacked.

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipArchive, ZipWriter};

use super::Failure;

fn io(path: &Path) -> impl Fn(std::io::Error) -> Failure + '_ {
    move |e| Failure::Io(format!("{}: {e}", path.display()))
}

/// Every file under `dir`, relative to it with `/` separators, sorted.
fn files_under(dir: &Path) -> Result<Vec<(String, PathBuf)>, Failure> {
    let mut out = Vec::new();
    let mut pending = vec![(String::new(), dir.to_path_buf())];
    while let Some((prefix, path)) = pending.pop() {
        for entry in fs::read_dir(&path).map_err(io(&path))? {
            let entry = entry.map_err(io(&path))?;
            let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
            let kind = entry.file_type().map_err(io(&path))?;
            if kind.is_dir() {
                pending.push((format!("{name}/"), entry.path()));
            } else {
                out.push((name, entry.path()));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Writes `zip` holding `folders` (name in the zip, folder on disk). Entries are dated `unix_time`
/// (the build's date or SOURCE_DATE_EPOCH) and sorted, so the same inputs give the same bytes.
/// Returns the names written.
pub fn write(
    zip: &Path,
    folders: &[(&str, &Path)],
    unix_time: i64,
) -> Result<Vec<String>, Failure> {
    let file = File::create(zip).map_err(io(zip))?;
    let mut writer = ZipWriter::new(file);
    let stamp = zip_time(unix_time);
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .last_modified_time(stamp)
        .unix_permissions(0o644);
    let mut names = Vec::new();
    for (name, dir) in folders {
        for (relative, path) in files_under(dir)? {
            let entry = format!("{name}/{relative}");
            let bytes = fs::read(&path).map_err(io(&path))?;
            writer
                .start_file(entry.as_str(), options)
                .map_err(|e| Failure::Io(format!("{}: {e}", zip.display())))?;
            writer.write_all(&bytes).map_err(io(zip))?;
            names.push(entry);
        }
    }
    writer
        .finish()
        .map_err(|e| Failure::Io(format!("{}: {e}", zip.display())))?;
    Ok(names)
}

/// The names `zip` holds, read back.
pub fn list(zip: &Path) -> Result<BTreeSet<String>, Failure> {
    let file = File::open(zip).map_err(io(zip))?;
    let mut archive = ZipArchive::new(file)
        .map_err(|e| Failure::Check(format!("{} does not read back: {e}", zip.display())))?;
    let mut names = BTreeSet::new();
    for i in 0..archive.len() {
        let entry = archive
            .by_index(i)
            .map_err(|e| Failure::Check(format!("{} does not read back: {e}", zip.display())))?;
        names.insert(entry.name().to_owned());
    }
    Ok(names)
}

/// A zip (MS-DOS) time of `unix_time`, clamped to the years zip can hold (1980..=2107).
fn zip_time(unix_time: i64) -> DateTime {
    let date = crate::stamp::Date::from_unix(unix_time);
    let seconds = unix_time.rem_euclid(86_400);
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    let fields = (
        u16::try_from(date.year.clamp(1980, 2107)).unwrap_or(1980),
        u8::try_from(date.month).unwrap_or(1),
        u8::try_from(date.day).unwrap_or(1),
        u8::try_from(h).unwrap_or(0),
        u8::try_from(m).unwrap_or(0),
        u8::try_from(s).unwrap_or(0),
    );
    DateTime::from_date_and_time(fields.0, fields.1, fields.2, fields.3, fields.4, fields.5)
        .unwrap_or_default()
}
