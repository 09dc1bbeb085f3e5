//! The code-signing certificate and key: a test certificate made (once) under target/, or the
//! user's PFX.
//!
//! The test certificate is what `makecert -r -pe -ss PrivateCertStore` or
//! `New-SelfSignedCertificate -Type CodeSigningCert` makes (Microsoft docs "Creating Test
//! Certificates"): X.509 v3, self-signed, RSA 2048, key usage digitalSignature, extended key usage
//! codeSigning (1.3.6.1.5.5.7.3.3), a subject that says it is a test certificate. A VM trusts it
//! once its `.cer` is in LocalMachine Root and TrustedPublisher (Install-Dcbndk.ps1 puts it there).
//! Its key is kept in target/package/test-signing/, never in the repository, so that every run
//! signs with the same certificate and a VM that trusts it once keeps trusting the packages.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, SystemTime};
use std::{fs, io};

use der::{Decode, Encode};
use rsa::RsaPrivateKey;
use rsa::pkcs1v15::SigningKey;
use rsa::pkcs8::{DecodePrivateKey, EncodePrivateKey, LineEnding};
use sha2::Sha256;
use x509_cert::Certificate;
use x509_cert::builder::{Builder, CertificateBuilder, Profile};
use x509_cert::der::asn1::ObjectIdentifier;
use x509_cert::ext::pkix::{ExtendedKeyUsage, KeyUsage};
use x509_cert::name::Name;
use x509_cert::serial_number::SerialNumber;
use x509_cert::spki::{EncodePublicKey, SubjectPublicKeyInfoOwned};
use x509_cert::time::Validity;

use super::Failure;

/// id-kp-codeSigning (RFC 5280 §4.2.1.12).
const OID_CODE_SIGNING: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.3");
/// id-ce-keyUsage, id-ce-extKeyUsage.
const OID_KEY_USAGE: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.15");
const OID_EXT_KEY_USAGE: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.37");

/// The subject of the test certificate.
pub const TEST_SUBJECT: &str = "CN=dcbndk test code signing (not trusted),O=dcbndk test";
/// How long a test certificate is valid; an expired one is replaced by a new one.
const TEST_VALIDITY: Duration = Duration::from_secs(5 * 365 * 24 * 3600);

/// A certificate and its private key, ready for osslsigncode.
pub struct Signer {
    /// The certificate, DER (what `dcbndk-test.cer` holds).
    pub cert_der: Vec<u8>,
    /// The private key, PKCS#8 PEM.
    pub key_pem: String,
    /// Where it came from, for messages.
    pub origin: String,
}

/// The key stays out of messages.
impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer")
            .field("origin", &self.origin)
            .field("cert_der", &self.cert_der.len())
            .finish_non_exhaustive()
    }
}

/// Where the test certificate and its key are kept.
pub fn test_dir(root: &Path) -> PathBuf {
    root.join("target").join("package").join("test-signing")
}

/// The test signer kept in `dir`, made there if absent or expired.
pub fn test_signer(dir: &Path, now: SystemTime) -> Result<Signer, Failure> {
    let cer = dir.join("dcbndk-test.cer");
    let key = dir.join("dcbndk-test.key");
    if cer.exists() && key.exists() {
        let cert_der = read(&cer)?;
        let key_pem = fs::read_to_string(&key)
            .map_err(|e| Failure::Input(format!("cannot read {}: {e}", key.display())))?;
        let signer = Signer {
            cert_der,
            key_pem,
            origin: cer.display().to_string(),
        };
        // A test certificate that has expired is made anew; one that is broken is an error, so
        // that a hand-edited file is not silently replaced.
        match check(&signer, now) {
            Ok(()) => return Ok(signer),
            Err(Failure::Input(message)) if message.contains("expired") => {}
            Err(other) => return Err(other),
        }
    }
    let signer = make_test_signer(now)?;
    fs::create_dir_all(dir)
        .map_err(|e| Failure::Io(format!("cannot create {}: {e}", dir.display())))?;
    write_private(&key, signer.key_pem.as_bytes())?;
    fs::write(&cer, &signer.cert_der)
        .map_err(|e| Failure::Io(format!("cannot write {}: {e}", cer.display())))?;
    Ok(Signer {
        origin: cer.display().to_string(),
        ..signer
    })
}

/// A new self-signed RSA 2048 code-signing certificate, valid from `now`.
pub fn make_test_signer(now: SystemTime) -> Result<Signer, Failure> {
    let internal = |what: &str| {
        let what = what.to_owned();
        move |e: String| Failure::Io(format!("cannot make the test certificate ({what}): {e}"))
    };
    let mut rng = rand::rngs::OsRng;
    let key = RsaPrivateKey::new(&mut rng, 2048).map_err(|e| internal("key")(e.to_string()))?;
    let public = key
        .to_public_key()
        .to_public_key_der()
        .map_err(|e| internal("public key")(e.to_string()))?;
    let spki = SubjectPublicKeyInfoOwned::from_der(public.as_bytes())
        .map_err(|e| internal("public key")(e.to_string()))?;
    let mut serial = [0u8; 16];
    rand::RngCore::fill_bytes(&mut rng, &mut serial);
    // A positive INTEGER with no leading zero byte.
    serial[0] = (serial[0] & 0x7f) | 0x40;
    let serial = SerialNumber::new(&serial).map_err(|e| internal("serial")(e.to_string()))?;
    let since = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        // Valid from a day before, so that a VM whose clock is a little behind accepts it.
        .saturating_sub(Duration::from_secs(24 * 3600));
    let validity = Validity {
        not_before: x509_cert::time::Time::try_from(SystemTime::UNIX_EPOCH + since)
            .map_err(|e| internal("validity")(e.to_string()))?,
        not_after: x509_cert::time::Time::try_from(SystemTime::UNIX_EPOCH + since + TEST_VALIDITY)
            .map_err(|e| internal("validity")(e.to_string()))?,
    };
    let subject = Name::from_str(TEST_SUBJECT).map_err(|e| internal("subject")(e.to_string()))?;
    let signing_key = SigningKey::<Sha256>::new(key.clone());
    // Profile::Leaf: key usage digitalSignature (with nonRepudiation), basic constraints CA false,
    // subject and authority key identifiers; issued by itself.
    let mut builder = CertificateBuilder::new(
        Profile::Leaf {
            issuer: subject.clone(),
            enable_key_agreement: false,
            enable_key_encipherment: false,
        },
        serial,
        validity,
        subject,
        spki,
        &signing_key,
    )
    .map_err(|e| internal("builder")(e.to_string()))?;
    builder
        .add_extension(&ExtendedKeyUsage(vec![OID_CODE_SIGNING]))
        .map_err(|e| internal("extended key usage")(e.to_string()))?;
    let cert = builder
        .build::<rsa::pkcs1v15::Signature>()
        .map_err(|e| internal("signature")(e.to_string()))?;
    let cert_der = cert
        .to_der()
        .map_err(|e| internal("encoding")(e.to_string()))?;
    let key_pem = key
        .to_pkcs8_pem(LineEnding::LF)
        .map_err(|e| internal("key encoding")(e.to_string()))?
        .to_string();
    Ok(Signer {
        cert_der,
        key_pem,
        origin: "a new test certificate".to_owned(),
    })
}

/// The signer of the user's PFX `path`, opened with `password`.
pub fn pfx_signer(path: &Path, password: &str) -> Result<Signer, Failure> {
    let data = read(path)?;
    let store = p12_keystore::KeyStore::from_pkcs12(&data, password).map_err(|e| {
        Failure::Input(format!(
            "{}: cannot open the PFX (wrong password or not a PKCS#12 file): {e}",
            path.display()
        ))
    })?;
    let Some((_, chain)) = store.private_key_chain() else {
        return Err(Failure::Input(format!(
            "{}: the PFX holds no private key with its certificate",
            path.display()
        )));
    };
    let Some(leaf) = chain.chain().first() else {
        return Err(Failure::Input(format!(
            "{}: the PFX's key has no certificate",
            path.display()
        )));
    };
    let key = RsaPrivateKey::from_pkcs8_der(chain.key()).map_err(|e| {
        Failure::Input(format!(
            "{}: the PFX's key is not an RSA key this tool can use: {e}",
            path.display()
        ))
    })?;
    let key_pem = key
        .to_pkcs8_pem(LineEnding::LF)
        .map_err(|e| Failure::Io(format!("cannot encode the PFX's key: {e}")))?
        .to_string();
    Ok(Signer {
        cert_der: leaf.as_der().to_vec(),
        key_pem,
        origin: path.display().to_string(),
    })
}

/// Whether `signer`'s certificate can sign a driver package at `now`: parses, is valid at `now`,
/// has the code-signing extended key usage and (if it has a key usage) digitalSignature.
pub fn check(signer: &Signer, now: SystemTime) -> Result<(), Failure> {
    let origin = &signer.origin;
    let cert = Certificate::from_der(&signer.cert_der)
        .map_err(|e| Failure::Input(format!("{origin}: the certificate does not parse: {e}")))?;
    let tbs = &cert.tbs_certificate;
    let not_before = tbs.validity.not_before.to_system_time();
    let not_after = tbs.validity.not_after.to_system_time();
    if now > not_after {
        return Err(Failure::Input(format!(
            "{origin}: the certificate expired on {}",
            tbs.validity.not_after
        )));
    }
    if now < not_before {
        return Err(Failure::Input(format!(
            "{origin}: the certificate is not valid before {}",
            tbs.validity.not_before
        )));
    }
    let extensions = tbs.extensions.as_deref().unwrap_or_default();
    let eku = extensions.iter().find(|e| e.extn_id == OID_EXT_KEY_USAGE);
    let code_signing = eku
        .and_then(|e| ExtendedKeyUsage::from_der(e.extn_value.as_bytes()).ok())
        .is_some_and(|usages| usages.0.contains(&OID_CODE_SIGNING));
    if !code_signing {
        return Err(Failure::Input(format!(
            "{origin}: the certificate lacks the code-signing extended key usage (1.3.6.1.5.5.7.3.3)"
        )));
    }
    if let Some(usage) = extensions.iter().find(|e| e.extn_id == OID_KEY_USAGE) {
        let digital_signature = KeyUsage::from_der(usage.extn_value.as_bytes())
            .is_ok_and(|usage| usage.digital_signature());
        if !digital_signature {
            return Err(Failure::Input(format!(
                "{origin}: the certificate's key usage lacks digitalSignature"
            )));
        }
    }
    Ok(())
}

fn read(path: &Path) -> Result<Vec<u8>, Failure> {
    fs::read(path).map_err(|e| Failure::Input(format!("cannot read {}: {e}", path.display())))
}

/// Writes a private key readable by its owner only.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    use std::io::Write;
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let result: io::Result<()> = options
        .open(path)
        .and_then(|mut file| file.write_all(bytes));
    result.map_err(|e| Failure::Io(format!("cannot write {}: {e}", path.display())))
}
