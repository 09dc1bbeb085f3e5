//! The catalog writer: `dcbndk.cat`, the hashes of the package's files in a form Windows trusts
//! once the catalog is signed.
//!
//! No crate writes a Microsoft catalog (RustCrypto's cms writes the envelope, nothing writes the
//! Certificate Trust List inside it), so the CTL's structures are declared here with `der`'s
//! derive and the envelope is `cms`'s. The layout is the one read from a catalog Microsoft's
//! makecat wrote (osslsigncode's `tests/files/unsigned.cat`: CatalogVersion 2, SHA-256 members)
//! and Samba's ASN.1 of the format (`lib/mscat/mscat.asn`):
//!
//! ```text
//! ContentInfo { contentType signedData (1.2.840.113549.1.7.2), [0] EXPLICIT SignedData {
//!   version 1, digestAlgorithms SET {} (filled in by the signer),
//!   encapContentInfo { eContentType szOID_CTL (1.3.6.1.4.1.311.10.1), [0] EXPLICIT CTL },
//!   signerInfos SET {} (filled in by the signer) } }
//!
//! CTL ::= SEQUENCE {                                 -- wincrypt's CTL_INFO
//!   subjectUsage     SEQUENCE OF OID                 -- { szOID_CATALOG_LIST 1.3.6.1.4.1.311.12.1.1 }
//!   listIdentifier   OCTET STRING                    -- 16 bytes naming this list
//!   thisUpdate       UTCTime
//!   subjectAlgorithm AlgorithmIdentifier             -- szOID_CATALOG_LIST_MEMBER_V2 (.12.1.3), NULL
//!   trustedSubjects  SEQUENCE OF CatalogMember       -- sorted by tag, as makecat writes them
//!   extensions       [0] EXPLICIT SEQUENCE OF        -- the catalog's attributes
//!                      SEQUENCE { OID CAT_NAMEVALUE, OCTET STRING (DER of NameValue) } }
//!
//! CatalogMember ::= SEQUENCE {
//!   tag        OCTET STRING                          -- v2: the member's SHA-256 (for a PE file
//!                                                    -- its Authenticode image hash)
//!   attributes SET OF SEQUENCE { OID, SET OF ANY } }
//!
//! NameValue ::= SEQUENCE { name BMPString, flags INTEGER, value OCTET STRING (UTF-16LE, NUL) }
//! ```
//!
//! A member's attributes (each an X.501 Attribute):
//! - CAT_NAMEVALUE (1.3.6.1.4.1.311.12.2.1), twice: `File` = the file name in lower case, as
//!   inf2cat writes it, and `OSAttr` = `2:10.0` (inf2cat's value for `/os:10_X64`, `10_ARM64`);
//!   flags 0x10010001 (CRYPTCAT_ATTR_AUTHENTICATED | NAMEASCII | DATAASCII), as in makecat's file;
//! - CAT_MEMBERINFO2 (1.3.6.1.4.1.311.12.2.3): `[0]` for a PE file, `[2]` for a flat file
//!   (makecat's file);
//! - SPC_INDIRECT_DATA (1.3.6.1.4.1.311.2.1.4): SpcIndirectDataContent ("Windows Authenticode
//!   Portable Executable Signature Format"): for a PE file the data type is SPC_PE_IMAGE_DATA
//!   (1.3.6.1.4.1.311.2.1.15) and the digest is the Authenticode image hash; for any other file
//!   SPC_CAB_DATA (1.3.6.1.4.1.311.2.1.25, with an empty file link, as makecat writes it) and the
//!   hash of the whole file. The digest algorithm is the tag's, SHA-256.
//!
//! The catalog's own attributes are what inf2cat writes for a driver package: `OS` =
//! `_v100_X64` or `_v100_ARM64` and `HWID1`..`HWIDn`, the INF's hardware ids in lower case.

use cms::content_info::{CmsVersion, ContentInfo};
use cms::signed_data::{EncapsulatedContentInfo, SignedData};
use der::asn1::{
    Any, BitString, BmpString, ContextSpecific, Null, ObjectIdentifier, OctetString, SetOfVec,
    UtcTime,
};
use der::{Decode, Encode, Sequence, TagMode, TagNumber};
use x509_cert::attr::Attribute;
use x509_cert::ext::Extension;
use x509_cert::spki::AlgorithmIdentifierOwned;

/// pkcs7-signedData (RFC 2315 §14).
pub const OID_SIGNED_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.2");
/// szOID_CTL: a Certificate Trust List is the signed content.
pub const OID_CTL: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.4.1.311.10.1");
/// szOID_CATALOG_LIST: the CTL is a catalog.
pub const OID_CATALOG_LIST: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.3.6.1.4.1.311.12.1.1");
/// szOID_CATALOG_LIST_MEMBER_V2: members tagged by SHA-256 (CatalogVersion 2).
pub const OID_CATALOG_MEMBER_V2: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.3.6.1.4.1.311.12.1.3");
/// CAT_NAMEVALUE_OBJID: a named attribute (a member's File, OSAttr; the catalog's OS, HWIDn).
pub const OID_CAT_NAMEVALUE: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.3.6.1.4.1.311.12.2.1");
/// CAT_MEMBERINFO2_OBJID: what kind of subject the member is.
pub const OID_CAT_MEMBERINFO2: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.3.6.1.4.1.311.12.2.3");
/// SPC_INDIRECT_DATA_OBJID: the member's SpcIndirectDataContent.
pub const OID_SPC_INDIRECT_DATA: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.3.6.1.4.1.311.2.1.4");
/// SPC_PE_IMAGE_DATAOBJ: the subject is a PE image, hashed the Authenticode way.
pub const OID_SPC_PE_IMAGE_DATA: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.3.6.1.4.1.311.2.1.15");
/// SPC_CAB_DATA_OBJID: the type makecat gives a flat file's SpcIndirectDataContent.
pub const OID_SPC_CAB_DATA: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.3.6.1.4.1.311.2.1.25");
/// id-sha256 (RFC 5754).
pub const OID_SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.1");

/// CRYPTCAT_ATTR_AUTHENTICATED | CRYPTCAT_ATTR_NAMEASCII | CRYPTCAT_ATTR_DATAASCII (mscat.h),
/// the flags of every NameValue in makecat's and inf2cat's catalogs.
pub const NAMEVALUE_FLAGS: u32 = 0x1001_0001;

/// The `OSAttr` of every member: Windows 10 and later (inf2cat's value for `10_X64`, `10_ARM64`).
pub const OS_ATTR: &str = "2:10.0";

/// How a member's file is hashed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A PE image: the tag and digest are its Authenticode image hash.
    PeImage,
    /// Any other file: the tag and digest are the SHA-256 of all its bytes.
    Flat,
}

/// One file of the package, with its hash computed by the caller.
#[derive(Clone, Debug)]
pub struct Member {
    /// The file's name in the package (written in lower case).
    pub name: String,
    pub kind: Kind,
    pub sha256: [u8; 32],
}

/// What the catalog says about the package as a whole.
#[derive(Clone, Debug)]
pub struct Catalog {
    /// `_v100_X64` or `_v100_ARM64`.
    pub os: String,
    /// The INF's hardware ids.
    pub hardware_ids: Vec<String>,
    pub members: Vec<Member>,
    /// thisUpdate, seconds since 1970 (the build's date, or SOURCE_DATE_EPOCH).
    pub unix_time: u64,
}

// ---- the CTL's structures (the table at the top of the module) ---------------------------------

#[derive(Sequence)]
struct CertificateTrustList {
    subject_usage: Vec<ObjectIdentifier>,
    list_identifier: OctetString,
    this_update: UtcTime,
    subject_algorithm: AlgorithmIdentifierOwned,
    trusted_subjects: Vec<CatalogMember>,
    #[asn1(context_specific = "0", tag_mode = "EXPLICIT")]
    extensions: Vec<Extension>,
}

#[derive(Sequence)]
struct CatalogMember {
    tag: OctetString,
    attributes: SetOfVec<Attribute>,
}

#[derive(Sequence)]
struct NameValue {
    name: BmpString,
    flags: u32,
    value: OctetString,
}

/// SpcIndirectDataContent ("Windows Authenticode Portable Executable Signature Format").
#[derive(Sequence)]
struct SpcIndirectDataContent {
    data: SpcAttributeTypeAndOptionalValue,
    message_digest: DigestInfo,
}

#[derive(Sequence)]
struct SpcAttributeTypeAndOptionalValue {
    kind: ObjectIdentifier,
    value: Any,
}

/// DigestInfo (RFC 2315 §9.4).
#[derive(Sequence)]
struct DigestInfo {
    digest_algorithm: AlgorithmIdentifierOwned,
    digest: OctetString,
}

/// SpcPeImageData ::= SEQUENCE { flags SpcPeImageFlags, file [0] EXPLICIT SpcLink }.
#[derive(Sequence)]
struct SpcPeImageData {
    flags: BitString,
    #[asn1(context_specific = "0", tag_mode = "EXPLICIT")]
    file: Any,
}

fn der_error(what: &str) -> impl Fn(der::Error) -> String + '_ {
    move |error| format!("cannot encode the catalog's {what}: {error}")
}

fn sha256_algorithm() -> AlgorithmIdentifierOwned {
    AlgorithmIdentifierOwned {
        oid: OID_SHA256,
        parameters: Some(Any::from(Null)),
    }
}

/// UTF-16LE with a terminating NUL: how a NameValue's value is stored.
fn utf16z(text: &str) -> Vec<u8> {
    text.encode_utf16()
        .chain([0])
        .flat_map(u16::to_le_bytes)
        .collect()
}

fn name_value(name: &str, value: &str) -> Result<Vec<u8>, String> {
    NameValue {
        name: BmpString::from_utf8(name).map_err(der_error("attribute name"))?,
        flags: NAMEVALUE_FLAGS,
        value: OctetString::new(utf16z(value)).map_err(der_error("attribute value"))?,
    }
    .to_der()
    .map_err(der_error("NameValue"))
}

fn attribute(oid: ObjectIdentifier, value: Any) -> Result<Attribute, String> {
    let values = SetOfVec::try_from(vec![value]).map_err(der_error("attribute"))?;
    Ok(Attribute { oid, values })
}

/// SpcLink `file [2] EXPLICIT SpcString`, SpcString `unicode [0] IMPLICIT BMPString`.
fn spc_file_link(text: &str) -> Result<Any, String> {
    let unicode = ContextSpecific {
        tag_number: TagNumber::N0,
        tag_mode: TagMode::Implicit,
        value: BmpString::from_utf8(text).map_err(der_error("SpcString"))?,
    };
    let file = ContextSpecific {
        tag_number: TagNumber::N2,
        tag_mode: TagMode::Explicit,
        value: unicode,
    };
    Any::encode_from(&file).map_err(der_error("SpcLink"))
}

/// An empty context-specific primitive `[n]`: CAT_MEMBERINFO2's value.
fn empty_context(number: TagNumber) -> Result<Any, String> {
    let tag = der::Tag::ContextSpecific {
        constructed: false,
        number,
    };
    Any::new(tag, Vec::new()).map_err(der_error("member info"))
}

fn member(m: &Member) -> Result<CatalogMember, String> {
    let name = m.name.to_ascii_lowercase();
    let file = name_value("File", &name)?;
    let os = name_value("OSAttr", OS_ATTR)?;
    let (info, data) = match m.kind {
        // signtool and inf2cat write the obsolete file link "<<<Obsolete>>>" in SpcPeImageData.
        Kind::PeImage => (
            empty_context(TagNumber::N0)?,
            SpcAttributeTypeAndOptionalValue {
                kind: OID_SPC_PE_IMAGE_DATA,
                value: Any::encode_from(&SpcPeImageData {
                    flags: BitString::from_bytes(&[]).map_err(der_error("image flags"))?,
                    file: spc_file_link("<<<Obsolete>>>")?,
                })
                .map_err(der_error("SpcPeImageData"))?,
            },
        ),
        Kind::Flat => (
            empty_context(TagNumber::N2)?,
            SpcAttributeTypeAndOptionalValue {
                kind: OID_SPC_CAB_DATA,
                value: spc_file_link("")?,
            },
        ),
    };
    let indirect = SpcIndirectDataContent {
        data,
        message_digest: DigestInfo {
            digest_algorithm: sha256_algorithm(),
            digest: OctetString::new(m.sha256.to_vec()).map_err(der_error("digest"))?,
        },
    };
    let mut attributes = SetOfVec::new();
    for a in [
        attribute(OID_CAT_MEMBERINFO2, info)?,
        attribute(
            OID_CAT_NAMEVALUE,
            Any::from_der(&file).map_err(der_error("File"))?,
        )?,
        attribute(
            OID_CAT_NAMEVALUE,
            Any::from_der(&os).map_err(der_error("OSAttr"))?,
        )?,
        attribute(
            OID_SPC_INDIRECT_DATA,
            Any::encode_from(&indirect).map_err(der_error("SpcIndirectDataContent"))?,
        )?,
    ] {
        // SetOfVec keeps the DER order of a SET OF (X.690 §11.6).
        attributes
            .insert(a)
            .map_err(der_error("member attributes"))?;
    }
    Ok(CatalogMember {
        tag: OctetString::new(m.sha256.to_vec()).map_err(der_error("tag"))?,
        attributes,
    })
}

/// The catalog's 16-byte list identifier. makecat writes a random GUID; any value naming this
/// list will do, and one drawn from the member hashes keeps the catalog reproducible.
fn list_identifier(members: &[Member]) -> [u8; 16] {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    for m in members {
        hash.update(m.name.as_bytes());
        hash.update(m.sha256);
    }
    let digest = hash.finalize();
    let mut id = [0u8; 16];
    id.copy_from_slice(digest.get(..16).unwrap_or(&[0; 16]));
    id
}

/// The unsigned catalog's DER: a SignedData with no signer yet, which osslsigncode signs.
pub fn write(catalog: &Catalog) -> Result<Vec<u8>, String> {
    let mut members: Vec<CatalogMember> = catalog
        .members
        .iter()
        .map(member)
        .collect::<Result<_, _>>()?;
    // makecat writes the members in the order of their tags.
    members.sort_by(|a, b| a.tag.as_bytes().cmp(b.tag.as_bytes()));
    let mut extensions = Vec::new();
    let hwids = catalog.hardware_ids.iter().enumerate();
    let names: Vec<(String, String)> = hwids
        .map(|(i, id)| (format!("HWID{}", i + 1), id.to_ascii_lowercase()))
        .chain([("OS".to_owned(), catalog.os.clone())])
        .collect();
    for (name, value) in &names {
        extensions.push(Extension {
            extn_id: OID_CAT_NAMEVALUE,
            critical: false,
            extn_value: OctetString::new(name_value(name, value)?)
                .map_err(der_error("catalog attribute"))?,
        });
    }
    let time = der::DateTime::from_unix_duration(std::time::Duration::from_secs(catalog.unix_time))
        .map_err(der_error("date"))?;
    let ctl = CertificateTrustList {
        subject_usage: vec![OID_CATALOG_LIST],
        list_identifier: OctetString::new(list_identifier(&catalog.members).to_vec())
            .map_err(der_error("list identifier"))?,
        this_update: UtcTime::from_date_time(time).map_err(der_error("date"))?,
        subject_algorithm: AlgorithmIdentifierOwned {
            oid: OID_CATALOG_MEMBER_V2,
            parameters: Some(Any::from(Null)),
        },
        trusted_subjects: members,
        extensions,
    };
    let signed = SignedData {
        version: CmsVersion::V1,
        digest_algorithms: SetOfVec::new(),
        encap_content_info: EncapsulatedContentInfo {
            econtent_type: OID_CTL,
            econtent: Some(Any::encode_from(&ctl).map_err(der_error("CTL"))?),
        },
        certificates: None,
        crls: None,
        signer_infos: SetOfVec::new().into(),
    };
    ContentInfo {
        content_type: OID_SIGNED_DATA,
        content: Any::encode_from(&signed).map_err(der_error("SignedData"))?,
    }
    .to_der()
    .map_err(der_error("ContentInfo"))
}
