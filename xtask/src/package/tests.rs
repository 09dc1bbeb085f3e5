//! The package's parts, each against what it must refuse: the catalog writer read back by the
//! checker and caught when a file changes, the two Authenticode hashes against each other, the
//! certificate rules, the INF's files, the command line.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};
use std::{env, fs};

use der::{Decode, Encode};
use sha2::{Digest, Sha256};

use super::*;

/// A folder of its own under the system's temporary folder, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let path = env::temp_dir().join(format!("dcbndk-xtask-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).unwrap();
        Self(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A minimal PE32+ image (headers only, no sections) followed by `tail`, with the certificate
/// table entry pointing at `certificate` bytes appended after `tail` when given.
fn tiny_pe(tail: &[u8], certificate: Option<&[u8]>) -> Vec<u8> {
    let mut image = vec![0u8; 0x200];
    image[0..2].copy_from_slice(b"MZ");
    image[0x3c..0x40].copy_from_slice(&0x40u32.to_le_bytes());
    let pe = 0x40;
    image[pe..pe + 4].copy_from_slice(b"PE\0\0");
    image[pe + 4..pe + 6].copy_from_slice(&0x8664u16.to_le_bytes()); // Machine
    image[pe + 20..pe + 22].copy_from_slice(&240u16.to_le_bytes()); // SizeOfOptionalHeader
    image[pe + 22..pe + 24].copy_from_slice(&0x2022u16.to_le_bytes()); // Characteristics
    let opt = pe + 24;
    image[opt..opt + 2].copy_from_slice(&0x20bu16.to_le_bytes()); // PE32+
    image[opt + 24..opt + 32].copy_from_slice(&0x1_4000_0000u64.to_le_bytes()); // ImageBase
    image[opt + 32..opt + 36].copy_from_slice(&0x1000u32.to_le_bytes()); // SectionAlignment
    image[opt + 36..opt + 40].copy_from_slice(&0x200u32.to_le_bytes()); // FileAlignment
    image[opt + 40..opt + 42].copy_from_slice(&10u16.to_le_bytes()); // OS version
    image[opt + 48..opt + 50].copy_from_slice(&10u16.to_le_bytes()); // subsystem version
    image[opt + 56..opt + 60].copy_from_slice(&0x1000u32.to_le_bytes()); // SizeOfImage
    image[opt + 60..opt + 64].copy_from_slice(&0x200u32.to_le_bytes()); // SizeOfHeaders
    image[opt + 64..opt + 68].copy_from_slice(&0x1234_5678u32.to_le_bytes()); // CheckSum
    image[opt + 68..opt + 70].copy_from_slice(&1u16.to_le_bytes()); // native subsystem
    image[opt + 108..opt + 112].copy_from_slice(&16u32.to_le_bytes()); // NumberOfRvaAndSizes
    image.extend_from_slice(tail);
    if let Some(cert) = certificate {
        let at = u32::try_from(image.len()).unwrap();
        let size = u32::try_from(cert.len()).unwrap();
        image[opt + 144..opt + 148].copy_from_slice(&at.to_le_bytes());
        image[opt + 148..opt + 152].copy_from_slice(&size.to_le_bytes());
        image.extend_from_slice(cert);
    }
    image
}

fn members(inf: &[u8], sys: &[u8]) -> Vec<catalog::Member> {
    vec![
        catalog::Member {
            name: "dcbndk.inf".to_owned(),
            kind: catalog::Kind::Flat,
            sha256: Sha256::digest(inf).into(),
        },
        catalog::Member {
            name: "DCBNDK.SYS".to_owned(),
            kind: catalog::Kind::PeImage,
            sha256: image_hash(sys, "dcbndk.sys").unwrap(),
        },
    ]
}

fn sample(inf: &[u8], sys: &[u8]) -> catalog::Catalog {
    catalog::Catalog {
        os: "_v100_X64".to_owned(),
        hardware_ids: vec!["root\\DCBNDK".to_owned(), "root\\dcbndk_b".to_owned()],
        members: members(inf, sys),
        unix_time: 1_772_841_600,
    }
}

/// One test signer for the whole test binary (an RSA key takes seconds to make unoptimized).
fn signer() -> &'static cert::Signer {
    static SIGNER: OnceLock<cert::Signer> = OnceLock::new();
    SIGNER.get_or_init(|| cert::make_test_signer(SystemTime::now()).unwrap())
}

#[test]
fn the_two_authenticode_hashes_agree_and_leave_out_checksum_and_signature() {
    let plain = tiny_pe(b"code and data", None);
    let ours = check::authenticode_sha256(&plain).unwrap();
    assert_eq!(ours, image_hash(&plain, "plain").unwrap());
    // Neither the CheckSum nor an appended certificate table (nor its directory entry) counts.
    let signed = tiny_pe(b"code and data", Some(&[0xAB; 24]));
    let mut rechecked = signed.clone();
    rechecked[0x40 + 24 + 64] ^= 0xff;
    assert_eq!(check::authenticode_sha256(&signed).unwrap(), ours);
    assert_eq!(check::authenticode_sha256(&rechecked).unwrap(), ours);
    assert_eq!(image_hash(&signed, "signed").unwrap(), ours);
    // Any other byte does.
    let changed = tiny_pe(b"code and dat!", None);
    assert_ne!(check::authenticode_sha256(&changed).unwrap(), ours);
    assert_eq!(check::machine(&plain), Some(0x8664));
    assert_eq!(check::authenticode_sha256(b"MZ not a PE"), None);
}

#[test]
fn the_catalog_reads_back_with_every_member_and_attribute() {
    let inf = b"[Version]\r\nSignature = \"$WINDOWS NT$\"\r\n";
    let sys = tiny_pe(b"image", None);
    let der = catalog::write(&sample(inf, &sys)).unwrap();
    let read = check::read_catalog(&der).unwrap();
    assert_eq!(read.signers, 0, "unsigned until osslsigncode signs it");
    assert_eq!(read.members.len(), 2);
    let mut tags: Vec<&[u8]> = read.members.iter().map(|m| m.tag.as_slice()).collect();
    let sorted = {
        let mut t = tags.clone();
        t.sort();
        t
    };
    assert_eq!(tags, sorted, "members in the order of their tags");
    tags.clear();
    let inf_member = read
        .members
        .iter()
        .find(|m| m.name("File") == Some("dcbndk.inf"));
    let sys_member = read
        .members
        .iter()
        .find(|m| m.name("File") == Some("dcbndk.sys"));
    let (inf_member, sys_member) = (inf_member.unwrap(), sys_member.unwrap());
    let inf_hash: [u8; 32] = Sha256::digest(inf).into();
    assert_eq!(inf_member.tag, inf_hash);
    assert_eq!(inf_member.digest, inf_hash);
    assert_eq!(inf_member.data_type, "1.3.6.1.4.1.311.2.1.25");
    let sys_hash = check::authenticode_sha256(&sys).unwrap();
    assert_eq!(sys_member.tag, sys_hash);
    assert_eq!(sys_member.digest, sys_hash);
    assert_eq!(sys_member.data_type, "1.3.6.1.4.1.311.2.1.15");
    for m in &read.members {
        assert_eq!(m.name("OSAttr"), Some("2:10.0"));
    }
    assert_eq!(
        read.attributes,
        [
            ("HWID1".to_owned(), "root\\dcbndk".to_owned()),
            ("HWID2".to_owned(), "root\\dcbndk_b".to_owned()),
            ("OS".to_owned(), "_v100_X64".to_owned()),
        ]
    );
    // The same inputs give the same bytes (the list identifier is drawn from the members).
    assert_eq!(catalog::write(&sample(inf, &sys)).unwrap(), der);
    // And the reader refuses what is not a catalog.
    assert!(check::read_catalog(&der[..der.len() - 1]).is_err());
    assert!(check::read_catalog(&sys).is_err());
}

/// osslsigncode is a host tool, as the README's other test tools are: without it a test that signs
/// says why and skips, except under `CI=true`, where it fails.
fn have_osslsigncode(test: &str) -> bool {
    let found = std::process::Command::new("osslsigncode")
        .arg("--version")
        .output()
        .is_ok();
    if !found {
        assert!(
            env::var("CI").as_deref() != Ok("true"),
            "{test}: osslsigncode is not installed (CI=true)"
        );
        eprintln!("{test}: skipped, osslsigncode is not installed (apt-get install osslsigncode)");
    }
    found
}

#[test]
fn a_file_changed_after_the_catalog_was_signed_is_caught() {
    if !have_osslsigncode("a_file_changed_after_the_catalog_was_signed_is_caught") {
        return;
    }
    let scratch = Scratch::new("tamper");
    let dir = &scratch.0;
    let inf = b"[Version]\nSignature = \"$WINDOWS NT$\"\n".to_vec();
    let sys = tiny_pe(b"image bytes", None);
    fs::write(dir.join("dcbndk.inf"), &inf).unwrap();
    fs::write(dir.join("dcbndk.sys"), &sys).unwrap();
    fs::write(
        dir.join("unsigned.cat"),
        catalog::write(&sample(&inf, &sys)).unwrap(),
    )
    .unwrap();
    let cert_pem = dir.join("cert.pem");
    let key_pem = dir.join("key.pem");
    fs::write(&cert_pem, pem("CERTIFICATE", &signer().cert_der).unwrap()).unwrap();
    fs::write(&key_pem, &signer().key_pem).unwrap();
    sign::sign(
        &cert_pem,
        &key_pem,
        &dir.join("unsigned.cat"),
        &dir.join("dcbndk.cat"),
        None,
    )
    .unwrap();
    sign::verify(&cert_pem, &dir.join("dcbndk.cat"), None).unwrap();
    // The signature has the shape Authenticode requires and signs the CTL as written; the
    // unsigned catalog has no signer, and a catalog is no image signature.
    let signed_cat = fs::read(dir.join("dcbndk.cat")).unwrap();
    let unsigned = fs::read(dir.join("unsigned.cat")).unwrap();
    let ctl_type = catalog::OID_CTL.to_string();
    let ctl = check::signature_structure(&signed_cat, &ctl_type, "dcbndk.cat").unwrap();
    assert!(unsigned.windows(ctl.len()).any(|w| w == ctl.as_slice()));
    assert!(check::signature_structure(&unsigned, &ctl_type, "unsigned.cat").is_err());
    let indirect = catalog::OID_SPC_INDIRECT_DATA.to_string();
    assert!(check::signature_structure(&signed_cat, &indirect, "dcbndk.cat").is_err());
    let files = ["dcbndk.inf".to_owned(), "dcbndk.sys".to_owned()];
    let ids = ["root\\dcbndk".to_owned(), "root\\dcbndk_b".to_owned()];
    let checked =
        |files: &[String]| check::catalog_members(dir, "dcbndk.cat", files, "_v100_X64", &ids);
    let report = checked(&files).unwrap();
    assert!(
        report.contains("dcbndk.sys") && report.contains("OS=_v100_X64"),
        "{report}"
    );

    // The image's CheckSum is outside its Authenticode hash; its code is not.
    let mut resummed = sys.clone();
    resummed[0x40 + 24 + 64] ^= 1;
    fs::write(dir.join("dcbndk.sys"), &resummed).unwrap();
    checked(&files).unwrap();
    let mut patched = sys.clone();
    *patched.last_mut().unwrap() ^= 1;
    fs::write(dir.join("dcbndk.sys"), &patched).unwrap();
    let error = checked(&files).unwrap_err();
    assert!(error.message().contains("dcbndk.sys"), "{error:?}");
    fs::write(dir.join("dcbndk.sys"), &sys).unwrap();

    let mut edited = inf.clone();
    edited.extend_from_slice(b"; one more line\n");
    fs::write(dir.join("dcbndk.inf"), &edited).unwrap();
    let error = checked(&files).unwrap_err();
    assert!(error.message().contains("dcbndk.inf"), "{error:?}");
    fs::write(dir.join("dcbndk.inf"), &inf).unwrap();

    // A catalog missing a file the package needs, or with a wrong OS, fails too.
    let more = [files.to_vec(), vec!["extra.dll".to_owned()]].concat();
    assert!(checked(&more).is_err());
    assert!(check::catalog_members(dir, "dcbndk.cat", &files, "_v100_ARM64", &ids).is_err());
    // osslsigncode, for its part, sees the catalog's signature broken by a changed byte.
    let mut cat = fs::read(dir.join("dcbndk.cat")).unwrap();
    let at = cat
        .windows(10)
        .position(|w| w == b"d\0c\0b\0n\0d\0")
        .unwrap();
    cat[at] = b'e';
    fs::write(dir.join("dcbndk.cat"), &cat).unwrap();
    assert!(sign::verify(&cert_pem, &dir.join("dcbndk.cat"), None).is_err());
}

#[test]
fn certificates_that_cannot_sign_code_now_are_refused() {
    let now = SystemTime::now();
    let good = signer();
    cert::check(good, now).unwrap();
    // Expired: a certificate valid for five years, checked six years on.
    let later = now + Duration::from_secs(6 * 365 * 24 * 3600);
    let error = cert::check(good, later).unwrap_err();
    assert!(error.message().contains("expired"), "{error:?}");
    // Without the code-signing extended key usage.
    let mut parsed = x509_cert::Certificate::from_der(&good.cert_der).unwrap();
    let extensions = parsed.tbs_certificate.extensions.as_mut().unwrap();
    extensions.retain(|e| e.extn_id.to_string() != "2.5.29.37");
    let stripped = cert::Signer {
        cert_der: parsed.to_der().unwrap(),
        key_pem: good.key_pem.clone(),
        origin: "stripped.cer".to_owned(),
    };
    let error = cert::check(&stripped, now).unwrap_err();
    assert!(
        matches!(error, Failure::Input(_)) && error.message().contains("code-signing"),
        "{error:?}"
    );
}

#[test]
fn a_pfx_opens_with_its_password_only() {
    use rsa::pkcs8::DecodePrivateKey;
    let scratch = Scratch::new("pfx");
    let good = signer();
    let key = rsa::RsaPrivateKey::from_pkcs8_pem(&good.key_pem).unwrap();
    let key_der = rsa::pkcs8::EncodePrivateKey::to_pkcs8_der(&key).unwrap();
    let certificate = p12_keystore::Certificate::from_der(&good.cert_der).unwrap();
    let chain = p12_keystore::PrivateKeyChain::new(key_der.as_bytes(), [1u8; 20], [certificate]);
    let mut store = p12_keystore::KeyStore::new();
    store.add_entry(
        "dcbndk",
        p12_keystore::KeyStoreEntry::PrivateKeyChain(chain),
    );
    let pfx = scratch.0.join("signer.pfx");
    fs::write(&pfx, store.writer("right").write().unwrap()).unwrap();

    let opened = cert::pfx_signer(&pfx, "right").unwrap();
    assert_eq!(opened.cert_der, good.cert_der);
    cert::check(&opened, SystemTime::now()).unwrap();
    let error = cert::pfx_signer(&pfx, "wrong").unwrap_err();
    assert!(
        matches!(error, Failure::Input(_)) && error.message().contains("wrong password"),
        "{error:?}"
    );
    fs::write(&pfx, b"not a pfx").unwrap();
    assert!(matches!(
        cert::pfx_signer(&pfx, "right"),
        Err(Failure::Input(_))
    ));
}

#[test]
fn an_inf_copying_a_file_the_package_lacks_is_refused() {
    let inx =
        fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../inf/dcbndk.inx")).unwrap();
    let day = Date::from_unix(0);
    let stamped = stamp::stamp(&inx, InfArch::Amd64, day, "0.1.0.0", CAT).unwrap();
    let (_, sources, ids) = named_files(&stamped, InfArch::Amd64).unwrap();
    assert_eq!(sources, ["dcbndk.sys"]);
    assert_eq!(ids, ["root\\dcbndk", "root\\dcbndk_b"]);
    let more = stamped.replace("dcbndk.sys,,,2", "dcbndk.sys,,,2\nhelper.dll");
    let error = named_files(&more, InfArch::Amd64).unwrap_err();
    assert!(
        matches!(error, Failure::Input(_)) && error.message().contains("helper.dll"),
        "{error:?}"
    );
}

fn flags(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn the_command_line_names_what_is_wrong() {
    let error = |list: &[&str]| match parse(&flags(list)) {
        Err(Failure::Input(message)) => message,
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("{list:?} accepted"),
    };
    assert!(error(&["--arch", "x86"]).contains("unknown --arch \"x86\""));
    assert!(error(&["--arch"]).contains("--arch needs a value"));
    assert!(error(&["--sign"]).contains("unknown option \"--sign\""));
    let missing = "/nonexistent/dcbndk.pfx";
    assert!(error(&["--cert", missing, "--password-env", "PATH"]).contains("no such file"));
    let here = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let unset = "DCBNDK_TEST_PASSWORD_THAT_IS_NOT_SET";
    assert!(error(&["--cert", here, "--password-env", unset]).contains("is not set"));
    assert!(error(&["--cert", here]).contains("--password-env"));
    assert!(error(&["--password-env", "PATH"]).contains("needs --cert"));

    let all = parse(&flags(&["--arch", "all"])).unwrap();
    let names: Vec<&str> = all.targets.iter().map(|t| t.name).collect();
    assert_eq!(names, ["x64", "arm64"]);
    assert_eq!(
        parse(&[]).unwrap().targets.first().map(|t| t.name),
        Some("x64")
    );
}
