//! Stamping the INF template (`inf/dcbndk.inx`) as the WDK's stampinf does, so that a package can
//! be made without the WDK.
//!
//! What stampinf changes, and nothing else (Microsoft docs "Stampinf", "INF Version Section",
//! "INF Manufacturer Section"):
//! - `DriverVer = mm/dd/yyyy,w.x.y.z` is added to `[Version]`: the date of the build (or of
//!   `SOURCE_DATE_EPOCH`, so that a package can be made again byte for byte) and the four-part
//!   version, each part 0..=65535;
//! - `CatalogFile = dcbndk.cat` is added to `[Version]`;
//! - `$ARCH$` is replaced by the target architecture, `amd64` or `arm64`, so that
//!   `NT$ARCH$.10.0...16299` becomes `NTamd64.10.0...16299`.
//!
//! The template keeps DriverVer and CatalogFile out on purpose (the project's INF checks refuse
//! them there), so finding either is an error, as is a template without `$ARCH$` or `[Version]`.
//! Comments are copied as they are: `$ARCH$` is replaced only in the text before a `;` that is not
//! inside quotes.

/// An architecture stampinf is told with `-a`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InfArch {
    /// x64 (`-a amd64`).
    Amd64,
    /// ARM64 (`-a arm64`).
    Arm64,
}

impl InfArch {
    /// What `$ARCH$` becomes (`stampinf -a`).
    #[must_use]
    pub const fn decoration(self) -> &'static str {
        match self {
            Self::Amd64 => "amd64",
            Self::Arm64 => "arm64",
        }
    }
}

/// A calendar date (UTC), as DriverVer writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Date {
    /// The year, e.g. 2026.
    pub year: i64,
    /// The month, 1 to 12.
    pub month: u32,
    /// The day of the month, 1 to 31.
    pub day: u32,
}

impl Date {
    /// The UTC date of `seconds` since 1970-01-01 (Howard Hinnant's `civil_from_days`).
    #[must_use]
    pub fn from_unix(seconds: i64) -> Self {
        let z = seconds.div_euclid(86_400) + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        Self {
            year,
            // Both are in range by construction (1..=31, 1..=12).
            month: u32::try_from(month).unwrap_or(1),
            day: u32::try_from(day).unwrap_or(1),
        }
    }
}

/// The four-part driver version `w.x.y.z` of a crate version: its numeric parts, 0 for the ones it
/// lacks (`0.1.0` -> `0.1.0.0`; a pre-release or build suffix is dropped). Each part must fit in
/// 16 bits ("INF DriverVer Directive").
pub fn driver_version(crate_version: &str) -> Result<String, String> {
    let core = crate_version.split(['-', '+']).next().unwrap_or_default();
    let mut parts: Vec<u16> = Vec::new();
    for part in core.split('.') {
        let value: u16 = part.parse().map_err(|_| {
            format!("version {crate_version:?}: {part:?} is not a number 0..=65535")
        })?;
        parts.push(value);
    }
    if parts.is_empty() || parts.len() > 4 {
        return Err(format!("version {crate_version:?} has not 1 to 4 parts"));
    }
    parts.resize(4, 0);
    Ok(parts
        .iter()
        .map(u16::to_string)
        .collect::<Vec<_>>()
        .join("."))
}

/// The stamped INF of template `inx` for `arch`, dated `date`, version `version` (w.x.y.z),
/// naming catalog `catalog`.
pub fn stamp(
    inx: &str,
    arch: InfArch,
    date: Date,
    version: &str,
    catalog: &str,
) -> Result<String, String> {
    let newline = if inx.contains("\r\n") { "\r\n" } else { "\n" };
    let mut out: Vec<String> = Vec::new();
    let mut section = String::new();
    let mut version_end: Option<usize> = None;
    let mut saw_arch = false;
    for (index, line) in inx.lines().enumerate() {
        let number = index + 1;
        let (code, comment) = split_comment(line);
        let trimmed = code.trim();
        if let Some(rest) = trimmed.strip_prefix('[') {
            section = rest.split(']').next().unwrap_or_default().trim().to_owned();
        } else if section.eq_ignore_ascii_case("Version") && !trimmed.is_empty() {
            let key = trimmed.split('=').next().unwrap_or_default().trim();
            if key.eq_ignore_ascii_case("DriverVer") || starts_with_ignore_case(key, "CatalogFile")
            {
                return Err(format!(
                    "line {number}: the template already has {key}: stampinf adds it"
                ));
            }
            version_end = Some(out.len());
        }
        saw_arch |= code.contains("$ARCH$");
        out.push(format!(
            "{}{comment}",
            code.replace("$ARCH$", arch.decoration())
        ));
    }
    let Some(after) = version_end else {
        return Err("the template has no [Version] section with entries".to_owned());
    };
    if !saw_arch {
        return Err("the template has no $ARCH$ decoration to fill in".to_owned());
    }
    let driver_ver = format!(
        "DriverVer   = {:02}/{:02}/{:04},{version}",
        date.month, date.day, date.year
    );
    let catalog_file = format!("CatalogFile = {catalog}");
    out.insert(after + 1, catalog_file);
    out.insert(after + 1, driver_ver);
    let mut text = out.join(newline);
    text.push_str(newline);
    Ok(text)
}

/// `line` split before its first `;` outside quotes (the INF comment rule).
fn split_comment(line: &str) -> (&str, &str) {
    let mut quoted = false;
    for (at, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ';' if !quoted => return line.split_at(at),
            _ => {}
        }
    }
    (line, "")
}

fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.get(..prefix.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEMPLATE: &str = "\
; comment naming $ARCH$ stays
[Version]
Signature = \"$WINDOWS NT$\"
PnpLockDown = 1

[Manufacturer]
%M% = Standard, NT$ARCH$.10.0...16299 ; models for $ARCH$

[Standard.NT$ARCH$.10.0...16299]
%D% = Dcbndk.ndi, root\\dcbndk

[Strings]
M = \"a;b $ARCH$\"
";

    const DAY: Date = Date {
        year: 2026,
        month: 3,
        day: 7,
    };

    #[test]
    fn adds_driver_ver_and_catalog_file_to_version_and_fills_in_arch() {
        let out = stamp(TEMPLATE, InfArch::Amd64, DAY, "0.1.0.0", "dcbndk.cat").unwrap();
        let expected = "\
; comment naming $ARCH$ stays
[Version]
Signature = \"$WINDOWS NT$\"
PnpLockDown = 1
DriverVer   = 03/07/2026,0.1.0.0
CatalogFile = dcbndk.cat

[Manufacturer]
%M% = Standard, NTamd64.10.0...16299 ; models for $ARCH$

[Standard.NTamd64.10.0...16299]
%D% = Dcbndk.ndi, root\\dcbndk

[Strings]
M = \"a;b amd64\"
";
        assert_eq!(out, expected);
        let arm = stamp(TEMPLATE, InfArch::Arm64, DAY, "1.2.3.4", "x.cat").unwrap();
        assert!(arm.contains("[Standard.NTarm64.10.0...16299]"));
        assert!(arm.contains("DriverVer   = 03/07/2026,1.2.3.4\nCatalogFile = x.cat\n"));
    }

    #[test]
    fn crlf_templates_stay_crlf() {
        let crlf = TEMPLATE.replace('\n', "\r\n");
        let out = stamp(&crlf, InfArch::Amd64, DAY, "0.1.0.0", "dcbndk.cat").unwrap();
        assert_eq!(out.matches("\r\n").count(), out.matches('\n').count());
        assert!(out.contains("PnpLockDown = 1\r\nDriverVer"));
    }

    #[test]
    fn refuses_templates_stampinf_would_not_stamp() {
        let with_ver =
            TEMPLATE.replace("PnpLockDown", "DriverVer = 01/01/2020,1.0.0.0\nPnpLockDown");
        let error = stamp(&with_ver, InfArch::Amd64, DAY, "0.1.0.0", "c.cat").unwrap_err();
        assert!(
            error.contains("line 4") && error.contains("DriverVer"),
            "{error}"
        );
        let with_cat = TEMPLATE.replace("PnpLockDown", "CatalogFile.NTamd64 = a.cat\nPnpLockDown");
        assert!(stamp(&with_cat, InfArch::Amd64, DAY, "0.1.0.0", "c.cat").is_err());
        let no_arch = TEMPLATE.replace("$ARCH$", "amd64");
        assert!(stamp(&no_arch, InfArch::Amd64, DAY, "0.1.0.0", "c.cat").is_err());
        let no_version = TEMPLATE.replace("[Version]", "[Other]");
        assert!(stamp(&no_version, InfArch::Amd64, DAY, "0.1.0.0", "c.cat").is_err());
    }

    #[test]
    fn dates_from_unix_seconds() {
        let date = |s| Date::from_unix(s);
        assert_eq!(
            date(0),
            Date {
                year: 1970,
                month: 1,
                day: 1
            }
        );
        assert_eq!(
            date(951_782_400),
            Date {
                year: 2000,
                month: 2,
                day: 29
            }
        );
        assert_eq!(date(1_772_841_600 + 86_399), DAY);
        assert_eq!(
            date(-1),
            Date {
                year: 1969,
                month: 12,
                day: 31
            }
        );
    }

    #[test]
    fn four_part_versions() {
        assert_eq!(driver_version("0.1.0").unwrap(), "0.1.0.0");
        assert_eq!(driver_version("1.2.3-rc.1").unwrap(), "1.2.3.0");
        assert_eq!(driver_version("1.2.3.4").unwrap(), "1.2.3.4");
        assert!(driver_version("1.70000.0").is_err());
        assert!(driver_version("1.2.3.4.5").is_err());
        assert!(driver_version("x").is_err());
    }
}
