//! The INF against the driver: `inf/dcbndk.inx` must offer exactly the keywords the driver reads
//! (`dcbndk_core::keywords::KEYWORDS`, the single source of their names, types, ranges, defaults
//! and choices) and follow the rules of a root-enumerated virtual NIC (spec §6.3, anchors §1.8,
//! §3.4).
//!
//! [`check`] returns every rule the INF breaks, each with the file and line; the tests below seed
//! one mistake at a time into an in-memory copy of the INF and expect exactly that rule back.
//!
//! The same rules hold for the INF `cargo xtask package` stamps from the template
//! ([`check_stamped`]: `xtask::stamp`, stampinf's changes), with what stamping changes checked as
//! infverif would check it. The infverif rules that can be checked off Windows for a
//! root-enumerated network INF, and where each is checked here:
//!
//! | rule | here | source |
//! |---|---|---|
//! | `[Version]` `Signature = "$WINDOWS NT$"`, `Class`/`ClassGuid` a known class, `Provider` set | Signature, Class, ClassGuid, Provider | "INF Version Section" |
//! | `PnpLockDown = 1` | PnpLockDown | "INF Version Section"; infverif /w (Windows Driver rules) |
//! | `DriverVer = mm/dd/yyyy,w.x.y.z`, a real date, each version part 0..=65535 | DriverVer | "INF DriverVer Directive" |
//! | `CatalogFile` names the package's catalog, a file name without a path | CatalogFile | "INF Version Section" (CatalogFile) |
//! | models sections decorated with the target architecture, `NTamd64` / `NTarm64`, and an OS version | ArchDecoration, Models | "INF Manufacturer Section", "INF Models Section" |
//! | no `$ARCH$` left in a section name or entry | ArchDecoration | "Stampinf" |
//! | every section a directive names exists | Sections | "INF DDInstall Section" (infverif's missing-section error) |
//! | every copied file is in `[SourceDisksFiles]` on a disk of `[SourceDisksNames]` | CopyFiles, SourceDisks | "INF SourceDisksFiles Section" |
//! | files go to DIRID 13 (run from the driver store) | DestinationDirs | "Run From Driver Store"; infverif /w isolation rules |
//! | a network adapter's `Characteristics`, `*IfType`, `*MediaType`, `*PhysicalMediaType` | Characteristics, IfType, MediaType, PhysicalMediaType | "INF Requirements for NDIS Drivers" (infverif errors for missing ones) |
//! | `AddService` with SPSVCINST_ASSOCSERVICE for the function driver | AddService | "INF AddService Directive" |

use crate::inf::{Inf, RegLine, Section, parse_number};
use dcbndk_core::keywords::{KEYWORDS, Keyword, KeywordType};
use std::collections::HashMap;
use std::fmt;

/// The INF as named in messages (relative to the workspace root).
const INF_FILE: &str = "inf/dcbndk.inx";
const SERVICE_NAME: &str = "dcbndk";
const DRIVER_FILE: &str = "dcbndk.sys";
const SERVICE_BINARY: &str = "%13%\\dcbndk.sys";
const NET_CLASS_GUID: &str = "{4d36e972-e325-11ce-bfc1-08002be10318}";
/// Models decoration: `NT$ARCH$` (stampinf fills in the architecture) and Windows 10 1709+.
const PLATFORM: &str = "NT$ARCH$";
const TARGET_OS: &str = ".10.0...16299";
const PARAMS_PREFIX: &str = "ndi\\params\\";
/// `SPSVCINST_ASSOCSERVICE`: the service is the device's function driver.
const ASSOC_SERVICE: u32 = 0x2;

/// A rule of the INF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    Parse,
    Signature,
    Class,
    ClassGuid,
    Provider,
    PnpLockDown,
    NoDriverVer,
    NoCatalogFile,
    DriverVer,
    CatalogFile,
    ArchDecoration,
    Models,
    Sections,
    ExcludeFromSelect,
    Characteristics,
    IfType,
    MediaType,
    PhysicalMediaType,
    NdiService,
    UpperRange,
    LowerRange,
    AddService,
    ServiceType,
    StartType,
    ErrorControl,
    ServiceBinary,
    CopyFiles,
    DestinationDirs,
    SourceDisks,
    KeywordMissing,
    KeywordUnknown,
    KeywordDescription,
    KeywordType,
    KeywordRange,
    KeywordDefault,
    KeywordOptional,
    KeywordEnum,
    KeywordRegType,
    KeywordExtraValue,
}

impl Rule {
    fn text(self) -> &'static str {
        match self {
            Self::Parse => "the INF must parse",
            Self::Signature => "[Version] Signature = \"$WINDOWS NT$\"",
            Self::Class => "[Version] Class = Net",
            Self::ClassGuid => "[Version] ClassGuid = {4d36e972-e325-11ce-bfc1-08002be10318}",
            Self::Provider => "[Version] Provider must be set",
            Self::PnpLockDown => "[Version] PnpLockDown = 1",
            Self::NoDriverVer => "no DriverVer: stampinf adds it",
            Self::NoCatalogFile => "no CatalogFile: stampinf adds it",
            Self::DriverVer => {
                "stamped: DriverVer = mm/dd/yyyy,w.x.y.z (a real date, parts 0..=65535)"
            }
            Self::CatalogFile => "stamped: CatalogFile = dcbndk.cat",
            Self::ArchDecoration => {
                "models are decorated NT$ARCH$ in the template, NT<arch> once stamped"
            }
            Self::Models => {
                "[Manufacturer] -> [<models>.NT$ARCH$.10.0...16299] -> hardware ids -> DDInstall"
            }
            Self::Sections => "every section a directive names must exist",
            Self::ExcludeFromSelect => "[ControlFlags] ExcludeFromSelect lists every hardware id",
            Self::Characteristics => "Characteristics = 0x1 (NCF_VIRTUAL)",
            Self::IfType => "*IfType = 6 (IF_TYPE_ETHERNET_CSMACD)",
            Self::MediaType => "*MediaType = 0 (NdisMedium802_3)",
            Self::PhysicalMediaType => "*PhysicalMediaType = 14 (NdisPhysicalMedium802_3)",
            Self::NdiService => "HKR, Ndi, Service = \"dcbndk\"",
            Self::UpperRange => "HKR, Ndi\\Interfaces, UpperRange = \"ndis5\"",
            Self::LowerRange => "HKR, Ndi\\Interfaces, LowerRange = \"ethernet\"",
            Self::AddService => {
                "<DDInstall>.Services: AddService = dcbndk, 0x2 (associated), <section>"
            }
            Self::ServiceType => "ServiceType = 1 (SERVICE_KERNEL_DRIVER)",
            Self::StartType => "StartType = 3 (SERVICE_DEMAND_START)",
            Self::ErrorControl => "ErrorControl = 1 (SERVICE_ERROR_NORMAL)",
            Self::ServiceBinary => "ServiceBinary = %13%\\dcbndk.sys",
            Self::CopyFiles => "DDInstall CopyFiles delivers dcbndk.sys",
            Self::DestinationDirs => "[DestinationDirs] sends the CopyFiles to 13 (driver store)",
            Self::SourceDisks => {
                "[SourceDisksFiles] lists dcbndk.sys on a disk of [SourceDisksNames]"
            }
            Self::KeywordMissing => "every keyword the driver reads is in Ndi\\params",
            Self::KeywordUnknown => "Ndi\\params offers only keywords the driver reads",
            Self::KeywordDescription => "ParamDesc is the keyword table's description",
            Self::KeywordType => "Type is the keyword table's type (enum/int/edit)",
            Self::KeywordRange => "Min/Max/Step (int) and LimitText (edit) are the table's",
            Self::KeywordDefault => "Default is the table's default",
            Self::KeywordOptional => "Optional is the table's optional flag",
            Self::KeywordEnum => "the enum choices and their descriptions are the table's",
            Self::KeywordRegType => "Ndi\\params values are REG_SZ (flags 0)",
            Self::KeywordExtraValue => "Ndi\\params holds only the values of the keyword's type",
        }
    }
}

/// One broken rule: where and what.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Violation {
    rule: Rule,
    file: String,
    line: usize,
    detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {:?} ({}): {}",
            self.file,
            self.line,
            self.rule,
            self.rule.text(),
            self.detail
        )
    }
}

/// Which INF is checked: the template in the repository, or one stamped for an architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Template,
    /// Stamped with this `$ARCH$` (`amd64`, `arm64`).
    Stamped(&'static str),
}

/// The catalog `cargo xtask package` names in the stamped INF.
const CATALOG_FILE: &str = "dcbndk.cat";

struct Checker<'a> {
    inf: &'a Inf,
    out: Vec<Violation>,
    stage: Stage,
    /// The models decoration's platform: `NT$ARCH$`, or `NTamd64` once stamped.
    platform: String,
}

impl<'a> Checker<'a> {
    fn report(&mut self, rule: Rule, line: usize, detail: impl Into<String>) {
        self.out.push(Violation {
            rule,
            file: self.inf.file().to_string(),
            line,
            detail: detail.into(),
        });
    }

    /// The section called `name`, or a `Sections` violation at `line`.
    fn section(&mut self, name: &str, line: usize) -> Option<&'a Section> {
        let found = self.inf.section(name);
        if found.is_none() {
            self.report(Rule::Sections, line, format!("no section [{name}]"));
        }
        found
    }

    /// `key` in `section` must satisfy `ok`; missing or failing is a `rule` violation.
    fn directive(&mut self, section: &Section, key: &str, rule: Rule, ok: impl Fn(&str) -> bool) {
        match section.directive(key) {
            None => self.report(
                rule,
                section.line,
                format!("[{}] has no {key}", section.name),
            ),
            Some(e) if !ok(e.value()) => {
                self.report(rule, e.line, format!("{key} = {}", e.fields.join(", ")));
            }
            Some(_) => {}
        }
    }

    fn number(&mut self, section: &Section, key: &str, rule: Rule, expected: u32) {
        self.directive(section, key, rule, |v| parse_number(v) == Some(expected));
    }
}

/// Checks INF template `text` (named `file`) against `keywords` and the virtual-NIC rules.
fn check(file: &str, text: &str, keywords: &[Keyword]) -> Vec<Violation> {
    check_stage(file, text, keywords, Stage::Template)
}

/// Checks INF `text` stamped for `arch` (`amd64`, `arm64`) by the same rules, and what stamping
/// added as infverif would.
fn check_stamped(
    file: &str,
    text: &str,
    keywords: &[Keyword],
    arch: &'static str,
) -> Vec<Violation> {
    check_stage(file, text, keywords, Stage::Stamped(arch))
}

fn check_stage(file: &str, text: &str, keywords: &[Keyword], stage: Stage) -> Vec<Violation> {
    let inf = match Inf::parse(file, text) {
        Ok(inf) => inf,
        Err(e) => {
            return vec![Violation {
                rule: Rule::Parse,
                file: e.file.clone(),
                line: e.line,
                detail: e.to_string(),
            }];
        }
    };
    let platform = match stage {
        Stage::Template => PLATFORM.to_owned(),
        Stage::Stamped(arch) => format!("NT{arch}"),
    };
    let mut c = Checker {
        inf: &inf,
        out: Vec::new(),
        stage,
        platform,
    };
    if let Stage::Stamped(_) = stage {
        check_no_arch_left(&mut c);
    }
    check_version(&mut c);
    let models = check_models(&mut c);
    check_exclude_from_select(&mut c, &models);
    let mut done: Vec<String> = Vec::new();
    for model in &models {
        if done
            .iter()
            .any(|d| d.eq_ignore_ascii_case(&model.ddinstall))
        {
            continue;
        }
        done.push(model.ddinstall.clone());
        let section = [model.ddinstall.clone(), format!("{}.NT", model.ddinstall)]
            .iter()
            .find_map(|name| inf.section(name));
        match section {
            None => c.report(
                Rule::Models,
                model.line,
                format!("no DDInstall section [{}]", model.ddinstall),
            ),
            Some(section) => check_ddinstall(&mut c, section, keywords),
        }
    }
    c.out
}

fn check_version(c: &mut Checker<'_>) {
    let Some(version) = c.inf.section("Version") else {
        for rule in [
            Rule::Signature,
            Rule::Class,
            Rule::ClassGuid,
            Rule::Provider,
            Rule::PnpLockDown,
        ] {
            c.report(rule, 1, "no [Version] section");
        }
        return;
    };
    c.directive(version, "Signature", Rule::Signature, |v| {
        v.eq_ignore_ascii_case("$WINDOWS NT$")
    });
    c.directive(version, "Class", Rule::Class, |v| {
        v.eq_ignore_ascii_case("Net")
    });
    c.directive(version, "ClassGuid", Rule::ClassGuid, |v| {
        v.eq_ignore_ascii_case(NET_CLASS_GUID)
    });
    c.directive(version, "Provider", Rule::Provider, |v| {
        !v.trim().is_empty()
    });
    c.number(version, "PnpLockDown", Rule::PnpLockDown, 1);
    if let Stage::Stamped(_) = c.stage {
        // The reader splits the value at its comma: date, version.
        match version.directive("DriverVer") {
            None => c.report(Rule::DriverVer, version.line, "[Version] has no DriverVer"),
            Some(e) if !driver_ver_is_valid(&e.fields.join(",")) => {
                c.report(
                    Rule::DriverVer,
                    e.line,
                    format!("DriverVer = {}", e.fields.join(",")),
                );
            }
            Some(_) => {}
        }
        c.directive(version, "CatalogFile", Rule::CatalogFile, |v| {
            v.eq_ignore_ascii_case(CATALOG_FILE)
        });
        return;
    }
    for e in &version.entries {
        let key = e.key.as_deref().unwrap_or_default();
        if key.eq_ignore_ascii_case("DriverVer") {
            c.report(
                Rule::NoDriverVer,
                e.line,
                format!("DriverVer = {}", e.fields.join(",")),
            );
        }
        if key.len() >= 11
            && key
                .get(..11)
                .is_some_and(|k| k.eq_ignore_ascii_case("CatalogFile"))
        {
            c.report(
                Rule::NoCatalogFile,
                e.line,
                format!("{key} = {}", e.value()),
            );
        }
    }
}

/// One model line: a hardware id and the DDInstall section it installs.
struct Model {
    line: usize,
    hardware_id: String,
    ddinstall: String,
}

fn check_models(c: &mut Checker<'_>) -> Vec<Model> {
    let mut models = Vec::new();
    let Some(manufacturer) = c.inf.section("Manufacturer") else {
        c.report(Rule::Models, 1, "no [Manufacturer] section");
        return models;
    };
    if manufacturer.entries.is_empty() {
        c.report(Rule::Models, manufacturer.line, "[Manufacturer] is empty");
    }
    for entry in &manufacturer.entries {
        let base = entry.value().to_string();
        let decorations = entry.fields.get(1..).unwrap_or_default();
        if decorations.is_empty() {
            c.report(
                Rule::ArchDecoration,
                entry.line,
                format!("models section {base} has no {} decoration", c.platform),
            );
        }
        for decoration in decorations {
            let (platform, target) = match decoration.find('.') {
                Some(dot) => decoration.split_at(dot),
                None => (decoration.as_str(), ""),
            };
            if !platform.eq_ignore_ascii_case(&c.platform) {
                c.report(
                    Rule::ArchDecoration,
                    entry.line,
                    format!("decoration {decoration}"),
                );
                continue;
            }
            if target != TARGET_OS {
                c.report(
                    Rule::Models,
                    entry.line,
                    format!("decoration {decoration}: want {}{TARGET_OS}", c.platform),
                );
                continue;
            }
            let name = format!("{base}.{decoration}");
            let Some(section) = c.inf.section(&name) else {
                c.report(
                    Rule::Models,
                    entry.line,
                    format!("no models section [{name}]"),
                );
                continue;
            };
            if section.entries.is_empty() {
                c.report(
                    Rule::Models,
                    section.line,
                    format!("[{name}] lists no hardware id"),
                );
            }
            for model in &section.entries {
                match (model.key.as_deref(), model.fields.as_slice()) {
                    (Some(desc), [ddinstall, hardware_id, ..])
                        if !desc.is_empty() && !ddinstall.is_empty() && !hardware_id.is_empty() =>
                    {
                        models.push(Model {
                            line: model.line,
                            hardware_id: hardware_id.clone(),
                            ddinstall: ddinstall.clone(),
                        });
                    }
                    _ => c.report(
                        Rule::Models,
                        model.line,
                        "a model line is '%desc% = DDInstall, hardware-id'",
                    ),
                }
            }
        }
    }
    models
}

fn check_exclude_from_select(c: &mut Checker<'_>, models: &[Model]) {
    let excluded: Vec<String> = c
        .inf
        .section("ControlFlags")
        .map(|s| {
            s.directives("ExcludeFromSelect")
                .flat_map(|e| e.fields.clone())
                .collect()
        })
        .unwrap_or_default();
    for model in models {
        let covered = excluded
            .iter()
            .any(|id| id == "*" || id.eq_ignore_ascii_case(&model.hardware_id));
        if !covered {
            c.report(
                Rule::ExcludeFromSelect,
                model.line,
                format!(
                    "hardware id {} is not excluded from select",
                    model.hardware_id
                ),
            );
        }
    }
}

fn check_ddinstall(c: &mut Checker<'_>, ddinstall: &Section, keywords: &[Keyword]) {
    c.number(ddinstall, "Characteristics", Rule::Characteristics, 0x1);
    c.number(ddinstall, "*IfType", Rule::IfType, 6);
    c.number(ddinstall, "*MediaType", Rule::MediaType, 0);
    c.number(ddinstall, "*PhysicalMediaType", Rule::PhysicalMediaType, 14);

    // The driver key's registry: every HKR line of every AddReg section.
    let mut reg: Vec<RegLine> = Vec::new();
    for directive in ddinstall.directives("AddReg") {
        for name in &directive.fields {
            let Some(section) = c.section(name, directive.line) else {
                continue;
            };
            for entry in &section.entries {
                match RegLine::parse(c.inf.file(), entry) {
                    Ok(line) if line.root.eq_ignore_ascii_case("HKR") => reg.push(line),
                    Ok(_) => {}
                    Err(e) => c.report(Rule::Parse, e.line, e.to_string()),
                }
            }
        }
    }
    let reg_value = |subkey: &str, name: &str| {
        reg.iter().rev().find(|r| {
            r.subkey.eq_ignore_ascii_case(subkey) && r.value_name.eq_ignore_ascii_case(name)
        })
    };
    for (subkey, name, rule, expected) in [
        ("Ndi", "Service", Rule::NdiService, SERVICE_NAME),
        ("Ndi\\Interfaces", "UpperRange", Rule::UpperRange, "ndis5"),
        (
            "Ndi\\Interfaces",
            "LowerRange",
            Rule::LowerRange,
            "ethernet",
        ),
    ] {
        match reg_value(subkey, name) {
            None => c.report(rule, ddinstall.line, format!("no HKR, {subkey}, {name}")),
            Some(r) if r.value.as_deref() != Some(expected) || r.flags != 0 => c.report(
                rule,
                r.line,
                format!("{subkey}\\{name} = {:?} (flags {:#x})", r.value, r.flags),
            ),
            Some(_) => {}
        }
    }
    check_params(c, ddinstall, &reg, keywords);
    check_files(c, ddinstall);
    check_service(c, ddinstall);
}

fn check_files(c: &mut Checker<'_>, ddinstall: &Section) {
    let mut delivered = false;
    let mut first_line = ddinstall.line;
    for (i, directive) in ddinstall.directives("CopyFiles").enumerate() {
        if i == 0 {
            first_line = directive.line;
        }
        for name in &directive.fields {
            if let Some(file) = name.strip_prefix('@') {
                delivered |= file.eq_ignore_ascii_case(DRIVER_FILE);
                continue;
            }
            let Some(section) = c.section(name, directive.line) else {
                continue;
            };
            delivered |= section
                .entries
                .iter()
                .any(|e| e.key.is_none() && e.value().eq_ignore_ascii_case(DRIVER_FILE));
            let destination = c
                .inf
                .section("DestinationDirs")
                .and_then(|d| d.directive(name).or_else(|| d.directive("DefaultDestDir")));
            match destination {
                None => c.report(
                    Rule::DestinationDirs,
                    directive.line,
                    format!("no destination for {name}"),
                ),
                Some(d) if d.value() != "13" => {
                    c.report(
                        Rule::DestinationDirs,
                        d.line,
                        format!("{name} goes to DIRID {}", d.value()),
                    );
                }
                Some(_) => {}
            }
        }
    }
    if !delivered {
        c.report(
            Rule::CopyFiles,
            first_line,
            format!("no CopyFiles delivers {DRIVER_FILE}"),
        );
    }

    let source = c
        .inf
        .sections()
        .iter()
        .filter(|s| starts_with_ignore_case(&s.name, "SourceDisksFiles"))
        .flat_map(|s| s.entries.iter())
        .find(|e| e.key_is(DRIVER_FILE));
    match source {
        None => c.report(
            Rule::SourceDisks,
            ddinstall.line,
            format!("[SourceDisksFiles] lacks {DRIVER_FILE}"),
        ),
        Some(file) => {
            let disk = file.value();
            let named = c
                .inf
                .sections()
                .iter()
                .filter(|s| starts_with_ignore_case(&s.name, "SourceDisksNames"))
                .flat_map(|s| s.entries.iter())
                .any(|e| e.key.as_deref() == Some(disk));
            if !named {
                c.report(
                    Rule::SourceDisks,
                    file.line,
                    format!("disk {disk:?} is not in [SourceDisksNames]"),
                );
            }
        }
    }
}

fn check_service(c: &mut Checker<'_>, ddinstall: &Section) {
    let services_name = format!("{}.Services", ddinstall.name);
    let Some(services) = c.inf.section(&services_name) else {
        c.report(
            Rule::AddService,
            ddinstall.line,
            format!("no [{services_name}]"),
        );
        return;
    };
    let add = services
        .directives("AddService")
        .find(|e| e.value().eq_ignore_ascii_case(SERVICE_NAME));
    let Some(add) = add else {
        let line = services
            .directive("AddService")
            .map_or(services.line, |e| e.line);
        c.report(
            Rule::AddService,
            line,
            format!("no AddService = {SERVICE_NAME}, ..."),
        );
        return;
    };
    let flags = add.fields.get(1).and_then(|f| parse_number(f)).unwrap_or(0);
    let Some(install) = add.fields.get(2).filter(|s| !s.is_empty()) else {
        c.report(
            Rule::AddService,
            add.line,
            "AddService names no service-install section",
        );
        return;
    };
    if flags & ASSOC_SERVICE == 0 {
        c.report(
            Rule::AddService,
            add.line,
            format!("flags {flags:#x} lack SPSVCINST_ASSOCSERVICE"),
        );
    }
    let Some(install) = c.section(&install.clone(), add.line) else {
        return;
    };
    c.number(install, "ServiceType", Rule::ServiceType, 1);
    c.number(install, "StartType", Rule::StartType, 3);
    c.number(install, "ErrorControl", Rule::ErrorControl, 1);
    c.directive(install, "ServiceBinary", Rule::ServiceBinary, |v| {
        v.eq_ignore_ascii_case(SERVICE_BINARY)
    });
}

/// `DriverVer = mm/dd/yyyy,w.x.y.z` ("INF DriverVer Directive"): a real date, each version part
/// 0..=65535.
fn driver_ver_is_valid(value: &str) -> bool {
    let Some((date, version)) = value.split_once(',') else {
        return false;
    };
    let date: Vec<&str> = date.trim().split('/').collect();
    let [month, day, year] = date.as_slice() else {
        return false;
    };
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(month, 2) || !digits(day, 2) || !digits(year, 4) {
        return false;
    }
    let (Ok(month), Ok(day), Ok(year)) = (
        month.parse::<u32>(),
        day.parse::<u32>(),
        year.parse::<u32>(),
    ) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    let parts: Vec<&str> = version.trim().split('.').collect();
    (1..=days).contains(&day)
        && year >= 1980
        && parts.len() == 4
        && parts.iter().all(|p| {
            !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok()
        })
}

/// A stamped INF keeps no `$ARCH$` in a section name or an entry.
fn check_no_arch_left(c: &mut Checker<'_>) {
    let inf = c.inf;
    for section in inf.sections() {
        if section.name.contains("$ARCH$") {
            c.report(
                Rule::ArchDecoration,
                section.line,
                format!("[{}] is not stamped", section.name),
            );
        }
        for e in &section.entries {
            let key = e.key.as_deref().unwrap_or_default();
            if key.contains("$ARCH$") || e.fields.iter().any(|f| f.contains("$ARCH$")) {
                c.report(Rule::ArchDecoration, e.line, "an entry is not stamped");
            }
        }
    }
}

fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.get(..prefix.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(prefix))
}

/// The INF's view of one keyword: its values and enum choices.
struct Param<'r> {
    name: String,
    line: usize,
    values: Vec<&'r RegLine>,
    choices: Vec<&'r RegLine>,
}

fn type_name(kind: &KeywordType) -> &'static str {
    match kind {
        KeywordType::Enum(_) => "enum",
        KeywordType::Int { .. } => "int",
        KeywordType::Edit { .. } => "edit",
    }
}

fn check_params(c: &mut Checker<'_>, ddinstall: &Section, reg: &[RegLine], keywords: &[Keyword]) {
    let mut params: Vec<Param<'_>> = Vec::new();
    for line in reg {
        let lower = line.subkey.to_ascii_lowercase();
        let Some(rest) = lower.strip_prefix(PARAMS_PREFIX) else {
            continue;
        };
        let (name, sub) = match rest.split_once('\\') {
            Some((name, sub)) => (name, Some(sub)),
            None => (rest, None),
        };
        let original = line.subkey.get(PARAMS_PREFIX.len()..).unwrap_or_default();
        let original = original.get(..name.len()).unwrap_or(original);
        let index = match params
            .iter()
            .position(|p| p.name.eq_ignore_ascii_case(name))
        {
            Some(i) => i,
            None => {
                params.push(Param {
                    name: original.to_string(),
                    line: line.line,
                    values: Vec::new(),
                    choices: Vec::new(),
                });
                params.len() - 1
            }
        };
        let Some(param) = params.get_mut(index) else {
            continue;
        };
        if line.flags != 0 {
            c.report(
                Rule::KeywordRegType,
                line.line,
                format!("{}: flags {:#x}", line.subkey, line.flags),
            );
        }
        match sub {
            None => param.values.push(line),
            Some("enum") => param.choices.push(line),
            Some(other) => c.report(
                Rule::KeywordExtraValue,
                line.line,
                format!("subkey {other} under {}", param.name),
            ),
        }
    }

    for param in &params {
        if !keywords
            .iter()
            .any(|k| k.name.eq_ignore_ascii_case(&param.name))
        {
            c.report(
                Rule::KeywordUnknown,
                param.line,
                format!("{} is not read by the driver (not in KEYWORDS)", param.name),
            );
        }
    }
    for keyword in keywords {
        match params
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(keyword.name))
        {
            None => c.report(
                Rule::KeywordMissing,
                ddinstall.line,
                format!(
                    "{} is missing; add to the Ndi\\params AddReg section:\n{}",
                    keyword.name,
                    expected_lines(keyword)
                ),
            ),
            Some(param) => check_param(c, keyword, param),
        }
    }
}

fn check_param(c: &mut Checker<'_>, k: &Keyword, p: &Param<'_>) {
    let value = |name: &str| {
        p.values
            .iter()
            .rev()
            .find(|r| r.value_name.eq_ignore_ascii_case(name))
            .map(|r| (r.line, r.value.clone().unwrap_or_default()))
    };
    let mut expect =
        |rule: Rule, name: &str, want: Option<&str>, found: Option<(usize, String)>| {
            let ok = match (&found, want) {
                (Some((_, got)), Some(want)) => got == want,
                (None, None) => true,
                (Some((_, got)), None) => got.is_empty(),
                (None, Some(_)) => false,
            };
            if !ok {
                let line = found.as_ref().map_or(p.line, |(l, _)| *l);
                let got = found.map_or_else(|| "absent".to_string(), |(_, v)| format!("{v:?}"));
                c.report(
                    rule,
                    line,
                    format!("{} {name}: INF {got}, driver {want:?}", k.name),
                );
            }
        };

    expect(
        Rule::KeywordDescription,
        "ParamDesc",
        Some(k.description),
        value("ParamDesc"),
    );
    let default = k.default.map(|d| d.to_string());
    expect(
        Rule::KeywordDefault,
        "Default",
        default.as_deref(),
        value("Default"),
    );
    let optional = value("Optional").or(Some((p.line, "0".to_string())));
    expect(
        Rule::KeywordOptional,
        "Optional",
        Some(if k.optional { "1" } else { "0" }),
        optional,
    );
    let ty = type_name(&k.kind);
    let found_ty = value("Type");
    if found_ty.as_ref().map(|(_, t)| t.as_str()) != Some(ty) {
        expect(Rule::KeywordType, "Type", Some(ty), found_ty);
        return; // the kind-specific values follow from the type: one mistake, one report
    }

    let mut allowed = vec!["ParamDesc", "Type", "Default", "Optional"];
    match k.kind {
        KeywordType::Int { min, max, step } => {
            allowed.extend(["Min", "Max", "Step"]);
            let (min, max, step) = (min.to_string(), max.to_string(), step.to_string());
            expect(Rule::KeywordRange, "Min", Some(&min), value("Min"));
            expect(Rule::KeywordRange, "Max", Some(&max), value("Max"));
            // Step defaults to 1 when absent.
            let found_step = value("Step").or(Some((p.line, "1".to_string())));
            expect(Rule::KeywordRange, "Step", Some(&step), found_step);
        }
        KeywordType::Edit { max_len } => {
            allowed.push("LimitText");
            expect(
                Rule::KeywordRange,
                "LimitText",
                Some(&max_len.to_string()),
                value("LimitText"),
            );
        }
        KeywordType::Enum(choices) => check_choices(c, k, p, choices),
    }
    for r in &p.values {
        if !allowed
            .iter()
            .any(|a| a.eq_ignore_ascii_case(&r.value_name))
        {
            c.report(
                Rule::KeywordExtraValue,
                r.line,
                format!(
                    "{} has value {:?}, not one of {allowed:?}",
                    k.name, r.value_name
                ),
            );
        }
    }
    if !matches!(k.kind, KeywordType::Enum(_)) {
        for r in &p.choices {
            c.report(
                Rule::KeywordExtraValue,
                r.line,
                format!("{} is not an enum", k.name),
            );
        }
    }
}

fn check_choices(c: &mut Checker<'_>, k: &Keyword, p: &Param<'_>, choices: &[(u32, &str)]) {
    let mut seen: HashMap<u32, usize> = HashMap::new();
    for r in &p.choices {
        let Some(v) = parse_number(&r.value_name).filter(|_| !r.value_name.starts_with("0x"))
        else {
            c.report(
                Rule::KeywordEnum,
                r.line,
                format!("{} choice {:?} is not a number", k.name, r.value_name),
            );
            continue;
        };
        seen.insert(v, r.line);
        let got = r.value.clone().unwrap_or_default();
        match choices.iter().find(|(cv, _)| *cv == v) {
            None => c.report(
                Rule::KeywordEnum,
                r.line,
                format!("{} offers {v} ({got:?}), the driver does not", k.name),
            ),
            Some((_, want)) if got != *want => {
                c.report(
                    Rule::KeywordEnum,
                    r.line,
                    format!("{} choice {v}: INF {got:?}, driver {want:?}", k.name),
                );
            }
            Some(_) => {}
        }
    }
    for (v, want) in choices {
        if !seen.contains_key(v) {
            c.report(
                Rule::KeywordEnum,
                p.line,
                format!("{} lacks choice {v} ({want:?})", k.name),
            );
        }
    }
}

/// INF text for a quoted value: `"` doubled, `%` doubled.
fn quote(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\"").replace('%', "%%"))
}

/// The HKR lines that offer `k`, as the INF should have them.
fn expected_lines(k: &Keyword) -> String {
    let key = format!("Ndi\\params\\{}", k.name);
    let mut lines = vec![
        format!("HKR, {key}, ParamDesc, 0, {}", quote(k.description)),
        format!("HKR, {key}, Type,      0, {}", quote(type_name(&k.kind))),
        format!(
            "HKR, {key}, Default,   0, {}",
            quote(&k.default.map(|d| d.to_string()).unwrap_or_default())
        ),
        format!(
            "HKR, {key}, Optional,  0, {}",
            quote(if k.optional { "1" } else { "0" })
        ),
    ];
    match k.kind {
        KeywordType::Int { min, max, step } => {
            lines.push(format!(
                "HKR, {key}, Min,       0, {}",
                quote(&min.to_string())
            ));
            lines.push(format!(
                "HKR, {key}, Max,       0, {}",
                quote(&max.to_string())
            ));
            lines.push(format!(
                "HKR, {key}, Step,      0, {}",
                quote(&step.to_string())
            ));
        }
        KeywordType::Edit { max_len } => {
            lines.push(format!(
                "HKR, {key}, LimitText, 0, {}",
                quote(&max_len.to_string())
            ));
        }
        KeywordType::Enum(choices) => {
            for (v, desc) in choices {
                lines.push(format!(
                    "HKR, {key}\\enum, {}, 0, {}",
                    quote(&v.to_string()),
                    quote(desc)
                ));
            }
        }
    }
    lines.join("\n")
}

fn inf_text() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../inf/dcbndk.inx");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn report(violations: &[Violation]) -> String {
    violations.iter().map(|v| format!("\n  {v}")).collect()
}

/// The real check: the INF in the repository against the keyword table the driver reads.
#[test]
fn inf_offers_exactly_the_driver_keywords_and_follows_the_virtual_nic_rules() {
    let violations = check(INF_FILE, &inf_text(), KEYWORDS);
    assert!(
        violations.is_empty(),
        "{INF_FILE} breaks {} rule(s):{}",
        violations.len(),
        report(&violations)
    );
}

/// The template stamped as `cargo xtask package` stamps it, for `arch`.
fn stamped(arch: xtask::stamp::InfArch) -> String {
    let day = xtask::stamp::Date::from_unix(1_772_841_600);
    xtask::stamp::stamp(&inf_text(), arch, day, "0.1.0.0", CATALOG_FILE)
        .unwrap_or_else(|e| panic!("stamping {INF_FILE}: {e}"))
}

/// The INF of the package, for both architectures, passes every rule.
#[test]
fn the_stamped_inf_of_each_architecture_follows_the_same_rules() {
    use xtask::stamp::InfArch;
    for arch in [InfArch::Amd64, InfArch::Arm64] {
        let text = stamped(arch);
        let violations = check_stamped("dcbndk.inf", &text, KEYWORDS, arch.decoration());
        assert!(
            violations.is_empty(),
            "dcbndk.inf ({}) breaks {} rule(s):{}",
            arch.decoration(),
            violations.len(),
            report(&violations)
        );
        // What makes it a stamped INF is what the template check refuses.
        let as_template: Vec<Rule> = check(INF_FILE, &text, KEYWORDS)
            .iter()
            .map(|v| v.rule)
            .collect();
        assert!(as_template.contains(&Rule::NoDriverVer), "{as_template:?}");
        assert!(
            as_template.contains(&Rule::NoCatalogFile),
            "{as_template:?}"
        );
        assert!(
            as_template.contains(&Rule::ArchDecoration),
            "{as_template:?}"
        );
    }
}

/// One rule of the stamped INF broken by `edit`, expected at `line`.
fn assert_stamped_only(text: &str, rule: Rule, line: usize) {
    let violations = check_stamped("dcbndk.inf", text, KEYWORDS, "amd64");
    let rules: Vec<(Rule, usize)> = violations.iter().map(|v| (v.rule, v.line)).collect();
    assert_eq!(rules, [(rule, line)], "{}", report(&violations));
}

#[test]
fn a_stamped_inf_needs_a_valid_driver_ver_and_its_catalog() {
    let text = stamped(xtask::stamp::InfArch::Amd64);
    let line = directive_line(&text, "Version", "DriverVer");
    for bad in [
        "DriverVer = 13/01/2026,0.1.0.0",
        "DriverVer = 02/29/2027,0.1.0.0",
        "DriverVer = 2/1/2026,0.1.0.0",
        "DriverVer = 03/07/2026,0.1.0",
        "DriverVer = 03/07/2026,0.1.0.65536",
        "DriverVer = 03/07/2026",
    ] {
        assert_stamped_only(&replace_line(&text, line, bad), Rule::DriverVer, line);
    }
    let fine = replace_line(&text, line, "DriverVer = 02/29/2028,65535.0.0.1");
    assert!(check_stamped("dcbndk.inf", &fine, KEYWORDS, "amd64").is_empty());
    let line = directive_line(&text, "Version", "CatalogFile");
    let other = replace_line(&text, line, "CatalogFile = other.cat");
    assert_stamped_only(&other, Rule::CatalogFile, line);
}

#[test]
fn a_stamped_inf_is_decorated_for_its_own_architecture() {
    let text = stamped(xtask::stamp::InfArch::Arm64);
    let violations = check_stamped("dcbndk.inf", &text, KEYWORDS, "amd64");
    assert!(
        violations.iter().any(|v| v.rule == Rule::ArchDecoration),
        "{}",
        report(&violations)
    );
    // A $ARCH$ stampinf missed is caught wherever it is.
    let amd = stamped(xtask::stamp::InfArch::Amd64);
    let (left, line) = insert_after(
        &amd,
        directive_line(&amd, "Version", "Class"),
        "Extra = NT$ARCH$",
    );
    assert_stamped_only(&left, Rule::ArchDecoration, line);
}

// ---- Seeded mistakes -----------------------------------------------------------------------

/// Keywords of each type that the tests add to the table and the INF, so that every type's
/// rules are exercised whatever KEYWORDS holds.
fn synthetic() -> Vec<Keyword> {
    let base = KEYWORDS.first().copied().expect("KEYWORDS is not empty");
    vec![
        Keyword {
            name: "SynInt",
            description: "Synthetic Int",
            kind: KeywordType::Int {
                min: 2,
                max: 64,
                step: 2,
            },
            default: Some(8),
            optional: false,
            ..base
        },
        Keyword {
            name: "*SynEnum",
            description: "Synthetic Enum",
            kind: KeywordType::Enum(&[(0, "Zero & none"), (7, "Seven")]),
            default: Some(7),
            optional: true,
            ..base
        },
        Keyword {
            name: "SynEdit",
            description: "Synthetic 100% Edit",
            kind: KeywordType::Edit { max_len: 20 },
            default: None,
            optional: true,
            ..base
        },
    ]
}

/// The real INF plus the synthetic keywords (appended to the Ndi\params AddReg section, which
/// the reader merges), and the table that goes with it.
struct Fixture {
    text: String,
    table: Vec<Keyword>,
}

fn params_section(text: &str) -> String {
    let inf = Inf::parse(INF_FILE, text).unwrap_or_else(|e| panic!("{e}"));
    inf.sections()
        .iter()
        .find(|s| {
            inf.reg_lines(s).is_ok_and(|lines| {
                lines
                    .iter()
                    .any(|l| starts_with_ignore_case(&l.subkey, PARAMS_PREFIX))
            })
        })
        .map(|s| s.name.clone())
        .expect("an AddReg section with Ndi\\params lines")
}

fn fixture() -> Fixture {
    let mut text = inf_text();
    let syn = synthetic();
    let lines: Vec<String> = syn.iter().map(expected_lines).collect();
    text = append(&text, &lines.join("\n")).0;
    let mut table = KEYWORDS.to_vec();
    table.extend(syn);
    Fixture { text, table }
}

/// `text` with `lines` appended to the Ndi\params AddReg section; the first appended line's number.
fn append(text: &str, lines: &str) -> (String, usize) {
    let section = params_section(text);
    let mut out = text.trim_end().to_string();
    out.push_str(&format!("\n\n[{section}]\n"));
    let first = out.lines().count() + 1;
    out.push_str(lines);
    out.push('\n');
    (out, first)
}

fn replace_line(text: &str, line: usize, new: &str) -> String {
    assert!(line >= 1 && line <= text.lines().count(), "line {line}");
    let mut out: Vec<&str> = text.lines().collect();
    if let Some(slot) = out.get_mut(line - 1) {
        *slot = new;
    }
    out.join("\n") + "\n"
}

fn insert_after(text: &str, line: usize, new: &str) -> (String, usize) {
    let mut out: Vec<&str> = text.lines().collect();
    out.insert(line, new);
    (out.join("\n") + "\n", line + 1)
}

fn parsed(text: &str) -> Inf {
    Inf::parse(INF_FILE, text).unwrap_or_else(|e| panic!("{e}"))
}

/// The line of directive `key` in `section`.
fn directive_line(text: &str, section: &str, key: &str) -> usize {
    parsed(text)
        .section(section)
        .and_then(|s| s.directive(key))
        .map(|e| e.line)
        .unwrap_or_else(|| panic!("[{section}] {key}"))
}

/// The DDInstall section of the first model, and its header line.
fn ddinstall(text: &str) -> (String, usize) {
    let inf = parsed(text);
    let manufacturer = inf.section("Manufacturer").expect("[Manufacturer]");
    let entry = manufacturer.entries.first().expect("a manufacturer");
    let models = format!(
        "{}.{}",
        entry.value(),
        entry.fields.get(1).expect("decoration")
    );
    let model = inf
        .section(&models)
        .and_then(|s| s.entries.first())
        .expect("a model");
    let section = inf.section(model.value()).expect("DDInstall");
    (section.name.clone(), section.line)
}

/// The HKR lines of keyword `name` (its key and its enum subkey).
fn keyword_lines(text: &str, name: &str) -> Vec<RegLine> {
    let inf = parsed(text);
    let key = format!("{PARAMS_PREFIX}{name}").to_ascii_lowercase();
    inf.sections()
        .iter()
        .filter_map(|s| inf.reg_lines(s).ok())
        .flatten()
        .filter(|l| {
            let sub = l.subkey.to_ascii_lowercase();
            sub == key || sub == format!("{key}\\enum")
        })
        .collect()
}

fn keyword_value_line(text: &str, name: &str, value: &str) -> usize {
    keyword_lines(text, name)
        .iter()
        .find(|l| {
            !l.subkey.to_ascii_lowercase().ends_with("\\enum")
                && l.value_name.eq_ignore_ascii_case(value)
        })
        .map(|l| l.line)
        .unwrap_or_else(|| panic!("{name} {value}"))
}

fn reg(name: &str, value: &str, data: &str) -> String {
    format!("HKR, Ndi\\params\\{name}, {value}, 0, {}", quote(data))
}

fn keyword<'a>(table: &'a [Keyword], name: &str) -> &'a Keyword {
    table
        .iter()
        .find(|k| k.name == name)
        .expect("keyword in table")
}

/// `text` breaks exactly `rule`, once, at `line` of the INF.
#[track_caller]
fn assert_only(text: &str, table: &[Keyword], rule: Rule, line: usize) {
    let violations = check(INF_FILE, text, table);
    match violations.as_slice() {
        [v] if v.rule == rule && v.file == INF_FILE && v.line == line => {}
        _ => panic!(
            "want exactly {rule:?} at {INF_FILE}:{line}, got:{}",
            report(&violations)
        ),
    }
}

fn fixture_table() -> (String, Vec<Keyword>) {
    let f = fixture();
    (f.text, f.table)
}

#[test]
fn fixture_with_synthetic_keywords_is_clean() {
    let (text, table) = fixture_table();
    let violations = check(INF_FILE, &text, &table);
    assert!(violations.is_empty(), "{}", report(&violations));
}

/// Replaces directive `key` of `section` with `new` and expects `rule` at that line.
#[track_caller]
fn seed_directive(section: &str, key: &str, new: &str, rule: Rule) {
    let (text, table) = fixture_table();
    let line = directive_line(&text, section, key);
    assert_only(&replace_line(&text, line, new), &table, rule, line);
}

#[test]
fn unparsable_inf_is_reported_with_its_line() {
    let (text, table) = fixture_table();
    let line = directive_line(&text, "Version", "Provider");
    assert_only(
        &replace_line(&text, line, "Provider = %NoSuchString%"),
        &table,
        Rule::Parse,
        line,
    );
}

#[test]
fn signature_must_be_windows_nt() {
    seed_directive(
        "Version",
        "Signature",
        "Signature = \"$Chicago$\"",
        Rule::Signature,
    );
}

#[test]
fn class_must_be_net() {
    seed_directive("Version", "Class", "Class = NetService", Rule::Class);
}

#[test]
fn class_guid_must_be_the_net_class() {
    seed_directive(
        "Version",
        "ClassGuid",
        "ClassGuid = {4d36e975-e325-11ce-bfc1-08002be10318}",
        Rule::ClassGuid,
    );
}

#[test]
fn provider_must_be_set() {
    seed_directive("Version", "Provider", "Provider = \"\"", Rule::Provider);
}

#[test]
fn pnp_lock_down_must_be_1() {
    seed_directive(
        "Version",
        "PnpLockDown",
        "PnpLockDown = 0",
        Rule::PnpLockDown,
    );
}

#[test]
fn driver_ver_is_left_to_stampinf() {
    let (text, table) = fixture_table();
    let (text, line) = insert_after(
        &text,
        directive_line(&text, "Version", "Class"),
        "DriverVer = 01/01/2025,1.0.0.0",
    );
    assert_only(&text, &table, Rule::NoDriverVer, line);
}

#[test]
fn catalog_file_is_left_to_stampinf() {
    let (text, table) = fixture_table();
    let (text, line) = insert_after(
        &text,
        directive_line(&text, "Version", "Class"),
        "CatalogFile.NTamd64 = dcbndk.cat",
    );
    assert_only(&text, &table, Rule::NoCatalogFile, line);
}

/// The Manufacturer line and the models header, with the decoration replaced.
fn redecorate(text: &str, decoration: &str) -> (String, usize) {
    let inf = parsed(text);
    let manufacturer = inf.section("Manufacturer").expect("[Manufacturer]");
    let entry = manufacturer.entries.first().expect("a manufacturer");
    let base = entry.value().to_string();
    let old = entry.fields.get(1).expect("decoration").clone();
    let header = inf.section(&format!("{base}.{old}")).expect("models").line;
    let key = entry.key.clone().unwrap_or_default();
    // The key is a substituted %token%: write it back as a literal quoted name.
    let text = replace_line(
        text,
        entry.line,
        &format!("{} = {base}, {decoration}", quote(&key)),
    );
    (
        replace_line(&text, header, &format!("[{base}.{decoration}]")),
        entry.line,
    )
}

#[test]
fn models_must_be_decorated_with_arch() {
    let (text, table) = fixture_table();
    let (text, line) = redecorate(&text, "NTamd64.10.0...16299");
    assert_only(&text, &table, Rule::ArchDecoration, line);
}

#[test]
fn models_must_target_windows_10_1709() {
    let (text, table) = fixture_table();
    let (text, line) = redecorate(&text, "NT$ARCH$.6.3");
    assert_only(&text, &table, Rule::Models, line);
}

#[test]
fn models_section_must_exist() {
    let (text, table) = fixture_table();
    let inf = parsed(&text);
    let entry = inf
        .section("Manufacturer")
        .and_then(|s| s.entries.first())
        .expect("manufacturer");
    let models = format!(
        "{}.{}",
        entry.value(),
        entry.fields.get(1).expect("decoration")
    );
    let header = inf.section(&models).expect("models").line;
    assert_only(
        &replace_line(&text, header, "[SomethingElse]"),
        &table,
        Rule::Models,
        entry.line,
    );
}

#[test]
fn every_hardware_id_is_excluded_from_select() {
    let (text, table) = fixture_table();
    let inf = parsed(&text);
    let entry = inf
        .section("Manufacturer")
        .and_then(|s| s.entries.first())
        .expect("manufacturer");
    let models = format!(
        "{}.{}",
        entry.value(),
        entry.fields.get(1).expect("decoration")
    );
    let model = inf
        .section(&models)
        .and_then(|s| s.entries.last())
        .expect("a model");
    let id = model.fields.get(1).expect("hardware id").clone();
    let flags = inf.section("ControlFlags").expect("[ControlFlags]");
    let exclude = flags
        .directives("ExcludeFromSelect")
        .find(|e| e.fields.iter().any(|f| f.eq_ignore_ascii_case(&id)))
        .expect("ExcludeFromSelect for the last hardware id");
    let rest: Vec<&str> = exclude
        .fields
        .iter()
        .filter(|f| !f.eq_ignore_ascii_case(&id))
        .map(String::as_str)
        .collect();
    let new = if rest.is_empty() {
        String::new()
    } else {
        format!("ExcludeFromSelect = {}", rest.join(", "))
    };
    assert_only(
        &replace_line(&text, exclude.line, &new),
        &table,
        Rule::ExcludeFromSelect,
        model.line,
    );
}

#[test]
fn characteristics_must_be_ncf_virtual() {
    let (text, _) = fixture_table();
    seed_directive(
        &ddinstall(&text).0,
        "Characteristics",
        "Characteristics = 0x4 ; NCF_PHYSICAL",
        Rule::Characteristics,
    );
}

#[test]
fn if_type_must_be_ethernet() {
    let (text, _) = fixture_table();
    seed_directive(&ddinstall(&text).0, "*IfType", "*IfType = 71", Rule::IfType);
}

#[test]
fn media_type_must_be_802_3() {
    let (text, _) = fixture_table();
    seed_directive(
        &ddinstall(&text).0,
        "*MediaType",
        "*MediaType = 16",
        Rule::MediaType,
    );
}

#[test]
fn physical_media_type_must_be_802_3() {
    let (text, _) = fixture_table();
    seed_directive(
        &ddinstall(&text).0,
        "*PhysicalMediaType",
        "*PhysicalMediaType = 0",
        Rule::PhysicalMediaType,
    );
}

#[test]
fn a_missing_addreg_section_is_reported() {
    let (text, table) = fixture_table();
    let section = ddinstall(&text).0;
    let line = directive_line(&text, &section, "AddReg");
    let entry = parsed(&text)
        .section(&section)
        .and_then(|s| s.directive("AddReg"))
        .cloned()
        .expect("AddReg");
    let new = format!("AddReg = {}, No.Such.Reg", entry.fields.join(", "));
    assert_only(
        &replace_line(&text, line, &new),
        &table,
        Rule::Sections,
        line,
    );
}

/// Replaces the HKR line `subkey`/`name` with one whose value is `value`.
#[track_caller]
fn seed_reg(subkey: &str, name: &str, value: &str, rule: Rule) {
    let (text, table) = fixture_table();
    let inf = parsed(&text);
    let line = inf
        .sections()
        .iter()
        .filter_map(|s| inf.reg_lines(s).ok())
        .flatten()
        .find(|l| l.subkey.eq_ignore_ascii_case(subkey) && l.value_name.eq_ignore_ascii_case(name))
        .map(|l| l.line)
        .unwrap_or_else(|| panic!("HKR, {subkey}, {name}"));
    let new = format!("HKR, {subkey}, {name}, 0, {}", quote(value));
    assert_only(&replace_line(&text, line, &new), &table, rule, line);
}

#[test]
fn ndi_service_must_name_the_driver_service() {
    seed_reg("Ndi", "Service", "netvmini", Rule::NdiService);
}

#[test]
fn upper_range_must_be_ndis5() {
    seed_reg("Ndi\\Interfaces", "UpperRange", "noupper", Rule::UpperRange);
}

#[test]
fn lower_range_must_be_ethernet() {
    seed_reg("Ndi\\Interfaces", "LowerRange", "wan", Rule::LowerRange);
}

fn services_section(text: &str) -> String {
    format!("{}.Services", ddinstall(text).0)
}

fn service_install_section(text: &str) -> String {
    let inf = parsed(text);
    let add = inf
        .section(&services_section(text))
        .and_then(|s| s.directive("AddService"))
        .expect("AddService");
    add.fields.get(2).expect("service-install section").clone()
}

#[test]
fn add_service_must_associate_the_service() {
    let (text, _) = fixture_table();
    let services = services_section(&text);
    let install = service_install_section(&text);
    seed_directive(
        &services,
        "AddService",
        &format!("AddService = dcbndk, 0, {install}"),
        Rule::AddService,
    );
}

#[test]
fn add_service_must_install_dcbndk() {
    let (text, _) = fixture_table();
    let services = services_section(&text);
    let install = service_install_section(&text);
    seed_directive(
        &services,
        "AddService",
        &format!("AddService = other, 2, {install}"),
        Rule::AddService,
    );
}

#[test]
fn service_must_be_a_kernel_driver() {
    let (text, _) = fixture_table();
    seed_directive(
        &service_install_section(&text),
        "ServiceType",
        "ServiceType = 16",
        Rule::ServiceType,
    );
}

#[test]
fn service_must_start_on_demand() {
    let (text, _) = fixture_table();
    seed_directive(
        &service_install_section(&text),
        "StartType",
        "StartType = 1",
        Rule::StartType,
    );
}

#[test]
fn service_error_control_must_be_normal() {
    let (text, _) = fixture_table();
    seed_directive(
        &service_install_section(&text),
        "ErrorControl",
        "ErrorControl = 3",
        Rule::ErrorControl,
    );
}

#[test]
fn service_binary_must_run_from_the_driver_store() {
    let (text, _) = fixture_table();
    seed_directive(
        &service_install_section(&text),
        "ServiceBinary",
        "ServiceBinary = %12%\\dcbndk.sys",
        Rule::ServiceBinary,
    );
}

#[test]
fn copy_files_must_deliver_the_driver() {
    let (text, table) = fixture_table();
    let section = ddinstall(&text).0;
    let copy = directive_line(&text, &section, "CopyFiles");
    let list = parsed(&text)
        .section(&section)
        .and_then(|s| s.directive("CopyFiles"))
        .map(|e| e.value().to_string());
    let list = list.expect("CopyFiles section");
    let inf = parsed(&text);
    let file_line = inf
        .section(&list)
        .and_then(|s| {
            s.entries
                .iter()
                .find(|e| e.value().eq_ignore_ascii_case(DRIVER_FILE))
        })
        .map(|e| e.line)
        .expect("dcbndk.sys line");
    assert_only(
        &replace_line(&text, file_line, "other.sys,,,2"),
        &table,
        Rule::CopyFiles,
        copy,
    );
}

#[test]
fn driver_files_go_to_the_driver_store() {
    let (text, _) = fixture_table();
    let section = ddinstall(&text).0;
    let list = parsed(&text)
        .section(&section)
        .and_then(|s| s.directive("CopyFiles"))
        .map(|e| e.value().to_string());
    let list = list.expect("CopyFiles section");
    seed_directive(
        "DestinationDirs",
        &list,
        &format!("{list} = 12"),
        Rule::DestinationDirs,
    );
}

#[test]
fn driver_file_must_be_on_a_source_disk() {
    seed_directive(
        "SourceDisksFiles",
        DRIVER_FILE,
        "dcbndk.sys = 9,,",
        Rule::SourceDisks,
    );
}

#[test]
fn a_keyword_the_driver_reads_must_be_in_the_inf() {
    let (text, table) = fixture_table();
    let name = KEYWORDS.first().expect("a keyword").name;
    let mut seeded = text.clone();
    for line in keyword_lines(&text, name) {
        seeded = replace_line(&seeded, line.line, "");
    }
    assert_only(&seeded, &table, Rule::KeywordMissing, ddinstall(&text).1);
}

#[test]
fn a_keyword_added_to_the_driver_must_be_added_to_the_inf() {
    let (text, mut table) = fixture_table();
    let extra = Keyword {
        name: "NewKeyword",
        ..*keyword(&table, "SynInt")
    };
    table.push(extra);
    assert_only(&text, &table, Rule::KeywordMissing, ddinstall(&text).1);
    let message = check(INF_FILE, &text, &table)
        .first()
        .map(|v| v.detail.clone())
        .unwrap_or_default();
    assert!(
        message.contains("HKR, Ndi\\params\\NewKeyword, Type,      0, \"int\""),
        "{message}"
    );
}

#[test]
fn the_inf_must_not_offer_a_keyword_the_driver_ignores() {
    let (text, table) = fixture_table();
    let bogus = Keyword {
        name: "*Bogus",
        ..*keyword(&table, "*SynEnum")
    };
    let (text, line) = append(&text, &expected_lines(&bogus));
    assert_only(&text, &table, Rule::KeywordUnknown, line);
}

#[test]
fn keyword_type_must_match() {
    let (text, table) = fixture_table();
    for k in &table {
        let line = keyword_value_line(&text, k.name, "Type");
        let other = if matches!(k.kind, KeywordType::Enum(_)) {
            "int"
        } else {
            "enum"
        };
        assert_only(
            &replace_line(&text, line, &reg(k.name, "Type", other)),
            &table,
            Rule::KeywordType,
            line,
        );
    }
}

#[test]
fn int_range_must_match() {
    let (text, table) = fixture_table();
    for (value, wrong) in [("Min", "0"), ("Max", "63"), ("Step", "1")] {
        let line = keyword_value_line(&text, "SynInt", value);
        assert_only(
            &replace_line(&text, line, &reg("SynInt", value, wrong)),
            &table,
            Rule::KeywordRange,
            line,
        );
    }
}

#[test]
fn edit_limit_must_match() {
    let (text, table) = fixture_table();
    let line = keyword_value_line(&text, "SynEdit", "LimitText");
    assert_only(
        &replace_line(&text, line, &reg("SynEdit", "LimitText", "19")),
        &table,
        Rule::KeywordRange,
        line,
    );
}

#[test]
fn keyword_default_must_match() {
    let (text, table) = fixture_table();
    for k in &table {
        let line = keyword_value_line(&text, k.name, "Default");
        let wrong = k
            .default
            .map_or_else(|| "1".to_string(), |d| (d + 1).to_string());
        assert_only(
            &replace_line(&text, line, &reg(k.name, "Default", &wrong)),
            &table,
            Rule::KeywordDefault,
            line,
        );
    }
}

#[test]
fn keyword_optional_must_match() {
    let (text, table) = fixture_table();
    for k in &table {
        let line = keyword_value_line(&text, k.name, "Optional");
        let wrong = if k.optional { "0" } else { "1" };
        assert_only(
            &replace_line(&text, line, &reg(k.name, "Optional", wrong)),
            &table,
            Rule::KeywordOptional,
            line,
        );
    }
}

#[test]
fn keyword_description_must_match() {
    let (text, table) = fixture_table();
    for k in &table {
        let line = keyword_value_line(&text, k.name, "ParamDesc");
        let wrong = format!("{} ", k.description);
        assert_only(
            &replace_line(&text, line, &reg(k.name, "ParamDesc", &wrong)),
            &table,
            Rule::KeywordDescription,
            line,
        );
    }
}

#[test]
fn enum_choices_and_descriptions_must_match() {
    let (text, table) = fixture_table();
    for k in &table {
        let KeywordType::Enum(choices) = k.kind else {
            continue;
        };
        let lines = keyword_lines(&text, k.name);
        let choice_lines: Vec<&RegLine> = lines
            .iter()
            .filter(|l| l.subkey.to_ascii_lowercase().ends_with("\\enum"))
            .collect();
        let first = *choice_lines.first().expect("enum lines");
        let enum_key = first.subkey.clone();

        // A description differs.
        let new = format!(
            "HKR, {enum_key}, {}, 0, \"Something else\"",
            quote(&first.value_name)
        );
        assert_only(
            &replace_line(&text, first.line, &new),
            &table,
            Rule::KeywordEnum,
            first.line,
        );

        // A choice the driver does not accept.
        let unused = (0..)
            .find(|v| !choices.iter().any(|(c, _)| c == v))
            .expect("a free value");
        let (seeded, line) = insert_after(
            &text,
            first.line,
            &format!("HKR, {enum_key}, \"{unused}\", 0, \"Extra\""),
        );
        assert_only(&seeded, &table, Rule::KeywordEnum, line);

        // A choice is missing: reported at the keyword's first line.
        let param_line = lines.iter().map(|l| l.line).min().expect("a line");
        assert_only(
            &replace_line(&text, first.line, ""),
            &table,
            Rule::KeywordEnum,
            param_line,
        );
    }
}

#[test]
fn keyword_values_must_be_reg_sz() {
    let (text, table) = fixture_table();
    let name = KEYWORDS.first().expect("a keyword").name;
    let line = keyword_value_line(&text, name, "Default");
    let k = keyword(&table, name);
    let default = k.default.map(|d| d.to_string()).unwrap_or_default();
    let new = format!(
        "HKR, Ndi\\params\\{name}, Default, 0x00010001, {}",
        quote(&default)
    );
    assert_only(
        &replace_line(&text, line, &new),
        &table,
        Rule::KeywordRegType,
        line,
    );
}

#[test]
fn keyword_holds_only_the_values_of_its_type() {
    let (text, table) = fixture_table();
    for k in &table {
        // Min is an int value: extra on enum and edit keywords; Base is never used here.
        let value = if matches!(k.kind, KeywordType::Int { .. }) {
            "Base"
        } else {
            "Min"
        };
        let (seeded, line) = append(&text, &reg(k.name, value, "1"));
        assert_only(&seeded, &table, Rule::KeywordExtraValue, line);
    }
}
