//! Signing and verifying with osslsigncode (Debian package `osslsigncode`), the tool of the field
//! for Authenticode off Windows: it embeds the image's signature (a WIN_CERTIFICATE of type
//! PKCS_SIGNED_DATA holding SpcIndirectDataContent with the image hash, signed attributes
//! contentType, messageDigest and the statement type individual code signing) and adds the
//! catalog's SignerInfo over its CTL. It makes no catalog: that is `catalog.rs`.

use std::path::Path;
use std::process::Command;

use super::Failure;

const TOOL: &str = "osslsigncode";

fn run(args: &[&std::ffi::OsStr]) -> Result<(bool, String), Failure> {
    let output = Command::new(TOOL).args(args).output().map_err(|e| {
        Failure::Input(format!(
            "cannot run {TOOL} ({e}): install it (Debian: apt-get install osslsigncode)"
        ))
    })?;
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    Ok((output.status.success(), text))
}

/// Signs `input` into `output` (a PE image or a catalog) with SHA-256. `time` (SOURCE_DATE_EPOCH)
/// fixes the signing time, the one part of an RSA PKCS#1 v1.5 signature that would differ from
/// one run to the next; without it the signing time is now.
pub fn sign(
    cert_pem: &Path,
    key_pem: &Path,
    input: &Path,
    output: &Path,
    time: Option<i64>,
) -> Result<(), Failure> {
    let time = time.map(|t| t.to_string());
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "sign".as_ref(),
        "-certs".as_ref(),
        cert_pem.as_os_str(),
        "-key".as_ref(),
        key_pem.as_os_str(),
        "-h".as_ref(),
        "sha256".as_ref(),
        "-n".as_ref(),
        "dcbndk".as_ref(),
        "-in".as_ref(),
        input.as_os_str(),
        "-out".as_ref(),
        output.as_os_str(),
    ];
    if let Some(time) = &time {
        args.push("-time".as_ref());
        args.push(time.as_ref());
    }
    let (ok, text) = run(&args)?;
    if !ok {
        return Err(Failure::Check(format!(
            "{TOOL} could not sign {}: {}",
            input.display(),
            last_line(&text)
        )));
    }
    Ok(())
}

/// osslsigncode's verdict on `file`'s signature against the trusted certificate `ca_pem`, or, with
/// `catalog`, on `file`'s hash being in that signed catalog. Its full output on success.
pub fn verify(ca_pem: &Path, file: &Path, catalog: Option<&Path>) -> Result<String, Failure> {
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "verify".as_ref(),
        "-CAfile".as_ref(),
        ca_pem.as_os_str(),
        "-in".as_ref(),
        file.as_os_str(),
    ];
    if let Some(catalog) = catalog {
        args.push("-catalog".as_ref());
        args.push(catalog.as_os_str());
    }
    let (ok, text) = run(&args)?;
    // "Succeeded" is its last line when every signature verified; it exits non-zero otherwise.
    if !ok || !text.lines().any(|l| l.trim() == "Succeeded") {
        let against = catalog.map_or(String::new(), |c| format!(" against {}", c.display()));
        return Err(Failure::Check(format!(
            "{TOOL} verify of {}{against} failed: {}",
            file.display(),
            last_line(&text)
        )));
    }
    Ok(text)
}

fn last_line(text: &str) -> String {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no output")
        .trim()
        .to_owned()
}
