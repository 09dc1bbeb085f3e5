//! `cargo xtask package`: the driver package a test VM installs, made on any host.
//!
//! ```text
//! cargo xtask package [--arch x64|arm64|all] [--cert FILE.pfx --password-env VAR]
//! ```
//!
//! For each architecture it takes the release image of `cargo xtask pe`
//! (target/pe/<triple>/release/dcbndk.sys, built if absent) and writes target/package/<arch>/
//! holding exactly what `pnputil /add-driver` needs and Install-Dcbndk.ps1 takes:
//! - `dcbndk.inf`: inf/dcbndk.inx stamped as stampinf does (`crate::stamp`);
//! - `dcbndk.sys`: the image with an embedded Authenticode signature (osslsigncode, `sign`);
//! - `dcbndk.cat`: the catalog of the INF and the image (`catalog`), signed;
//! - `dcbndk-test.cer`: the signing certificate (DER), for the VM's Root and TrustedPublisher;
//!
//! and target/package/dcbndk-<version>-<arch>.zip with that folder and tests/windows/ beside it.
//! A package is written in a temporary folder under target/package/ and renamed into place only
//! once every check passed (`check`), so a failed run leaves the previous package, never half of a
//! new one. The checks: the catalog reads back and every member's hash, recomputed apart from the
//! writer, is its file's; the INF names exactly the files of the folder; the image's machine is
//! the architecture's; osslsigncode verifies the image, the catalog, and the image against the
//! catalog with the certificate as the only trusted one; the zip lists exactly the files.
//!
//! Exit status: 0 done, 2 bad input (a one-line message naming it: an unknown option or
//! architecture, an unreadable PFX or a wrong password, a certificate that cannot sign code, a
//! missing image that cannot be built, an INF naming a file the package lacks), 1 a failed check.

mod archive;
mod catalog;
mod cert;
mod check;
mod inf;
mod sign;

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Instant, SystemTime};

use sha2::{Digest, Sha256};

use crate::cross;
use crate::stamp::{self, Date, InfArch};
use crate::target::{Arch, Profile};

/// Why the command stopped.
#[derive(Debug)]
pub enum Failure {
    /// The user's input (arguments, certificate, template, missing image): exit 2.
    Input(String),
    /// A file could not be read or written: exit 1.
    Io(String),
    /// The package failed a check: exit 1.
    Check(String),
}

impl Failure {
    fn message(&self) -> &str {
        match self {
            Self::Input(m) | Self::Io(m) | Self::Check(m) => m,
        }
    }
}

const INF: &str = "dcbndk.inf";
const SYS: &str = "dcbndk.sys";
const CAT: &str = "dcbndk.cat";
const CER: &str = "dcbndk-test.cer";

/// What the package knows of an architecture.
struct Target {
    arch: Arch,
    /// `--arch` and the folder name.
    name: &'static str,
    inf: InfArch,
    /// The catalog's OS attribute (inf2cat `/os:10_X64`, `10_ARM64`).
    os: &'static str,
    /// IMAGE_FILE_MACHINE_AMD64, IMAGE_FILE_MACHINE_ARM64.
    machine: u16,
}

const TARGETS: [Target; 2] = [
    Target {
        arch: Arch::X64,
        name: "x64",
        inf: InfArch::Amd64,
        os: "_v100_X64",
        machine: 0x8664,
    },
    Target {
        arch: Arch::Arm64,
        name: "arm64",
        inf: InfArch::Arm64,
        os: "_v100_ARM64",
        machine: 0xaa64,
    },
];

/// The parsed command line.
struct Options {
    targets: Vec<&'static Target>,
    pfx: Option<(PathBuf, String)>,
}

fn usage_error(message: String) -> Failure {
    Failure::Input(format!(
        "{message} (usage: cargo xtask package [--arch x64|arm64|all] [--cert FILE.pfx --password-env VAR])"
    ))
}

fn parse(flags: &[String]) -> Result<Options, Failure> {
    let mut arch: Option<String> = None;
    let mut cert: Option<PathBuf> = None;
    let mut password_env: Option<String> = None;
    let mut rest = flags.iter();
    while let Some(flag) = rest.next() {
        let mut value = || {
            rest.next()
                .cloned()
                .ok_or_else(|| usage_error(format!("{flag} needs a value")))
        };
        match flag.as_str() {
            "--arch" => arch = Some(value()?),
            "--cert" => cert = Some(PathBuf::from(value()?)),
            "--password-env" => password_env = Some(value()?),
            other => return Err(usage_error(format!("unknown option {other:?}"))),
        }
    }
    let targets: Vec<&'static Target> = match arch.as_deref() {
        None | Some("x64") => vec![&TARGETS[0]],
        Some("arm64") => vec![&TARGETS[1]],
        Some("all") => TARGETS.iter().collect(),
        Some(other) => {
            return Err(usage_error(format!(
                "unknown --arch {other:?}: x64, arm64 or all"
            )));
        }
    };
    let pfx = match (cert, password_env) {
        (None, None) => None,
        (Some(path), Some(var)) => {
            if !path.is_file() {
                return Err(Failure::Input(format!(
                    "--cert {}: no such file",
                    path.display()
                )));
            }
            let Ok(password) = env::var(&var) else {
                return Err(Failure::Input(format!(
                    "--password-env {var}: the environment variable is not set"
                )));
            };
            Some((path, password))
        }
        (Some(_), None) => {
            return Err(usage_error(
                "--cert needs --password-env VAR naming the variable that holds its password"
                    .to_owned(),
            ));
        }
        (None, Some(_)) => return Err(usage_error("--password-env needs --cert".to_owned())),
    };
    Ok(Options { targets, pfx })
}

/// `cargo xtask package ...`.
pub fn main(root: &Path, flags: &[String]) -> ExitCode {
    match run(root, flags) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("xtask package: {}", failure.message());
            match failure {
                Failure::Input(_) => ExitCode::from(2),
                Failure::Io(_) | Failure::Check(_) => ExitCode::FAILURE,
            }
        }
    }
}

/// SOURCE_DATE_EPOCH (reproducible builds' convention), if set.
fn source_date_epoch() -> Result<Option<i64>, Failure> {
    match env::var("SOURCE_DATE_EPOCH") {
        Ok(text) => text.trim().parse::<i64>().map(Some).map_err(|_| {
            Failure::Input(format!(
                "SOURCE_DATE_EPOCH {text:?} is not a number of seconds"
            ))
        }),
        Err(_) => Ok(None),
    }
}

fn now_unix() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

fn run(root: &Path, flags: &[String]) -> Result<(), Failure> {
    let options = parse(flags)?;
    let started = Instant::now();
    let out = root.join("target").join("package");
    // Every input is checked before anything is written: the test signer is made (and kept in
    // target/package/) only for a run whose arguments and environment are good.
    let inx_path = root.join("inf").join("dcbndk.inx");
    let inx = fs::read_to_string(&inx_path)
        .map_err(|e| Failure::Input(format!("cannot read {}: {e}", inx_path.display())))?;
    let fixed = source_date_epoch()?;
    let time = Time {
        unix: fixed.unwrap_or_else(now_unix),
        fixed: fixed.is_some(),
    };
    let signer = match &options.pfx {
        Some((path, password)) => cert::pfx_signer(path, password)?,
        None => cert::test_signer(&cert::test_dir(root), SystemTime::now())?,
    };
    cert::check(&signer, SystemTime::now())?;
    let version = stamp::driver_version(env!("CARGO_PKG_VERSION")).map_err(Failure::Input)?;
    for target in options.targets {
        let image = image(root, target)?;
        let staging = Staging::new(&out, target.name)?;
        let report = make(
            root,
            target,
            &signer,
            &inx,
            time,
            &version,
            &image,
            &staging.path,
        )?;
        staging.commit(&out, target.name)?;
        print!("{report}");
        println!(
            "xtask package: {} done {:.1} s after the start: {} and {}",
            target.name,
            started.elapsed().as_secs_f64(),
            out.join(target.name).display(),
            out.join(zip_name(target)).display()
        );
    }
    Ok(())
}

fn zip_name(target: &Target) -> String {
    format!("dcbndk-{}-{}.zip", env!("CARGO_PKG_VERSION"), target.name)
}

/// The build's time: SOURCE_DATE_EPOCH's when `fixed`, else now.
#[derive(Clone, Copy)]
struct Time {
    unix: i64,
    fixed: bool,
}

impl Time {
    /// The signing time to give osslsigncode: only a fixed one.
    fn signing(self) -> Option<i64> {
        self.fixed.then_some(self.unix)
    }
}

/// The release image of `target`, built when absent.
fn image(root: &Path, target: &Target) -> Result<PathBuf, Failure> {
    let path = cross::image_paths(root, target.arch, Profile::Release).sys;
    if path.is_file() {
        return Ok(path);
    }
    eprintln!(
        "xtask package: no {}: building it (cargo xtask pe's release {} image)",
        path.display(),
        target.arch.label()
    );
    cross::build(root, target.arch, Profile::Release)
        .map(|image| image.sys)
        .map_err(|e| Failure::Input(format!("no {} and it cannot be built: {e}", path.display())))
}

/// A temporary folder under target/package/, removed unless committed.
struct Staging {
    path: PathBuf,
}

impl Staging {
    fn new(out: &Path, name: &str) -> Result<Self, Failure> {
        let path = out.join(format!(".staging-{name}-{}", std::process::id()));
        if path.exists() {
            fs::remove_dir_all(&path)
                .map_err(|e| Failure::Io(format!("cannot remove {}: {e}", path.display())))?;
        }
        fs::create_dir_all(path.join(name))
            .map_err(|e| Failure::Io(format!("cannot create {}: {e}", path.display())))?;
        Ok(Self { path })
    }

    /// Moves the checked folder and zip into place, replacing the previous ones.
    fn commit(self, out: &Path, name: &str) -> Result<(), Failure> {
        let zip = format!("dcbndk-{}-{name}.zip", env!("CARGO_PKG_VERSION"));
        let moves = [
            (self.path.join(name), out.join(name)),
            (self.path.join(&zip), out.join(&zip)),
        ];
        for (from, to) in &moves {
            if to.is_dir() {
                fs::remove_dir_all(to)
            } else if to.exists() {
                fs::remove_file(to)
            } else {
                Ok(())
            }
            .map_err(|e| Failure::Io(format!("cannot replace {}: {e}", to.display())))?;
            fs::rename(from, to)
                .map_err(|e| Failure::Io(format!("cannot move {}: {e}", to.display())))?;
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    fs::write(path, bytes).map_err(|e| Failure::Io(format!("cannot write {}: {e}", path.display())))
}

fn pem(label: &str, der_bytes: &[u8]) -> Result<String, Failure> {
    der::pem::encode_string(label, der::pem::LineEnding::LF, der_bytes)
        .map_err(|e| Failure::Io(format!("cannot encode the certificate: {e}")))
}

/// The Authenticode image hash the catalog records, by Google's Authenticode crate (Microsoft's
/// algorithm: headers, then sections in file order, then what follows them).
fn image_hash(bytes: &[u8], name: &str) -> Result<[u8; 32], Failure> {
    let pe = object::read::pe::PeFile64::parse(bytes)
        .map_err(|e| Failure::Input(format!("{name} is not a PE32+ image: {e}")))?;
    let mut hash = Sha256::new();
    authenticode::authenticode_digest(&pe, &mut hash)
        .map_err(|e| Failure::Input(format!("{name}: {e}")))?;
    Ok(hash.finalize().into())
}

/// The stamped INF read, the files it copies (only the image) and its hardware ids for `arch`.
fn named_files(
    stamped: &str,
    arch: InfArch,
) -> Result<(inf::Inf, Vec<String>, Vec<String>), Failure> {
    let parsed = inf::Inf::parse(stamped);
    let sources = parsed.source_files();
    for file in &sources {
        if !file.eq_ignore_ascii_case(SYS) {
            return Err(Failure::Input(format!(
                "inf/dcbndk.inx copies {file}, which the package does not have (only {SYS})"
            )));
        }
    }
    if !sources.iter().any(|f| f == SYS) {
        return Err(Failure::Input(format!("inf/dcbndk.inx copies no {SYS}")));
    }
    let decoration = format!("NT{}", arch.decoration());
    let hardware_ids = parsed.hardware_ids(&decoration);
    if hardware_ids.is_empty() {
        return Err(Failure::Input(format!(
            "inf/dcbndk.inx has no hardware id for {decoration}"
        )));
    }
    Ok((parsed, sources, hardware_ids))
}

/// Writes and checks the package of `target` in `staging`; the report to print.
#[allow(
    clippy::too_many_arguments,
    reason = "each argument is a different input of the package; a struct would only rename them"
)]
fn make(
    root: &Path,
    target: &Target,
    signer: &cert::Signer,
    inx: &str,
    time: Time,
    version: &str,
    image: &Path,
    staging: &Path,
) -> Result<String, Failure> {
    let folder = staging.join(target.name);
    let work = staging.join("work");
    fs::create_dir_all(&work)
        .map_err(|e| Failure::Io(format!("cannot create {}: {e}", work.display())))?;
    let cert_pem = work.join("cert.pem");
    let key_pem = work.join("key.pem");
    write(&cert_pem, pem("CERTIFICATE", &signer.cert_der)?.as_bytes())?;
    cert::write_private(&key_pem, signer.key_pem.as_bytes())?;

    // The INF, and the files it names, which the package must hold.
    let stamped = stamp::stamp(inx, target.inf, Date::from_unix(time.unix), version, CAT)
        .map_err(|e| Failure::Input(format!("inf/dcbndk.inx: {e}")))?;
    write(&folder.join(INF), stamped.as_bytes())?;
    let (parsed, sources, hardware_ids) = named_files(&stamped, target.inf)?;

    // The image, signed.
    let image_bytes = fs::read(image)
        .map_err(|e| Failure::Input(format!("cannot read {}: {e}", image.display())))?;
    if check::machine(&image_bytes) != Some(target.machine) {
        return Err(Failure::Input(format!(
            "{} is not an {} image (machine {:#06x?})",
            image.display(),
            target.name,
            check::machine(&image_bytes)
        )));
    }
    sign::sign(
        &cert_pem,
        &key_pem,
        image,
        &folder.join(SYS),
        time.signing(),
    )?;
    let signed = fs::read(folder.join(SYS))
        .map_err(|e| Failure::Io(format!("cannot read the signed image: {e}")))?;

    // The catalog, signed: the INF's flat hash and the image's Authenticode hash (the same before
    // and after signing: the signature is outside what the hash covers).
    let members = vec![
        catalog::Member {
            name: INF.to_owned(),
            kind: catalog::Kind::Flat,
            sha256: Sha256::digest(stamped.as_bytes()).into(),
        },
        catalog::Member {
            name: SYS.to_owned(),
            kind: catalog::Kind::PeImage,
            sha256: image_hash(&signed, SYS)?,
        },
    ];
    let unsigned = catalog::write(&catalog::Catalog {
        os: target.os.to_owned(),
        hardware_ids: hardware_ids.clone(),
        members,
        unix_time: u64::try_from(time.unix).unwrap_or(0),
    })
    .map_err(Failure::Check)?;
    let unsigned_path = work.join("unsigned.cat");
    write(&unsigned_path, &unsigned)?;
    sign::sign(
        &cert_pem,
        &key_pem,
        &unsigned_path,
        &folder.join(CAT),
        time.signing(),
    )?;
    write(&folder.join(CER), &signer.cert_der)?;

    // The checks.
    let mut report = format!(
        "{}: signed with {}\n  catalog members:\n",
        target.name, signer.origin
    );
    let names: Vec<String> = [INF, SYS].iter().map(|s| (*s).to_owned()).collect();
    report.push_str(&check::catalog_members(
        &folder,
        CAT,
        &names,
        target.os,
        &hardware_ids,
    )?);
    let held = check::folder_files(&folder)?;
    let mut named: std::collections::BTreeSet<String> = sources.iter().cloned().collect();
    named.insert(INF.to_owned());
    named.insert(CER.to_owned());
    if parsed.version_value("CatalogFile") == Some(CAT) {
        named.insert(CAT.to_owned());
    }
    if held != named {
        return Err(Failure::Check(format!(
            "the folder holds {held:?}, the INF (with its .cer) names {named:?}"
        )));
    }
    // The signatures' shape, read apart from osslsigncode: the image's signs its own
    // Authenticode hash, the catalog's signs the CTL as written.
    let image_signature = check::embedded_signature(&signed)?;
    let indirect = check::signature_structure(
        image_signature,
        &catalog::OID_SPC_INDIRECT_DATA.to_string(),
        SYS,
    )?;
    let (kind, digest) = check::indirect_digest(&indirect)?;
    let own = check::authenticode_sha256(&signed);
    if kind != catalog::OID_SPC_PE_IMAGE_DATA.to_string()
        || own.as_ref().map(|h| &h[..]) != Some(&digest[..])
    {
        return Err(Failure::Check(format!(
            "{SYS}'s signature does not sign its Authenticode hash ({kind}, {})",
            check::hex(&digest)
        )));
    }
    let signed_catalog = fs::read(folder.join(CAT))
        .map_err(|e| Failure::Io(format!("cannot read the signed catalog: {e}")))?;
    let ctl = check::signature_structure(&signed_catalog, &catalog::OID_CTL.to_string(), CAT)?;
    if !unsigned.windows(ctl.len()).any(|w| w == ctl.as_slice()) {
        return Err(Failure::Check(format!("{CAT}: signing changed the CTL")));
    }
    report.push_str(&format!(
        "  signatures: {SYS} and {CAT} are SignedData (SHA-256, the certificate, one signer with contentType, messageDigest, SpcSpOpusInfo, individual code signing); {SYS}'s signs its Authenticode hash\n"
    ));
    for (file, catalog) in [(SYS, None), (CAT, None), (SYS, Some(CAT))] {
        let text = sign::verify(
            &cert_pem,
            &folder.join(file),
            catalog.map(|c| folder.join(c)).as_deref(),
        )?;
        let against = catalog.map_or(String::new(), |c| format!(" -catalog {c}"));
        report.push_str(&format!("  osslsigncode verify {file}{against}:\n"));
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            report.push_str(&format!("    {line}\n"));
        }
    }

    // The zip, then the folder alone is what stays next to it.
    fs::remove_dir_all(&work)
        .map_err(|e| Failure::Io(format!("cannot remove {}: {e}", work.display())))?;
    let zip = staging.join(zip_name(target));
    let scripts = root.join("tests").join("windows");
    let written = archive::write(
        &zip,
        &[(target.name, &folder), ("windows", &scripts)],
        time.unix,
    )?;
    let listed = archive::list(&zip)?;
    let expected: std::collections::BTreeSet<String> = written.iter().cloned().collect();
    let in_folder: std::collections::BTreeSet<String> = held
        .iter()
        .map(|f| format!("{}/{f}", target.name))
        .collect();
    if listed != expected || !in_folder.is_subset(&listed) {
        return Err(Failure::Check(format!(
            "{} lists {} files, not the {} written",
            zip.display(),
            listed.len(),
            expected.len()
        )));
    }
    report.push_str(&format!(
        "  {}: {} files ({} in {}/, {} in windows/)\n",
        zip_name(target),
        listed.len(),
        in_folder.len(),
        target.name,
        listed.len() - in_folder.len()
    ));
    Ok(report)
}

#[cfg(test)]
mod tests;
