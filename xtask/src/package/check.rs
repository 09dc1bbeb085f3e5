//! The checks of a written package, apart from the code that wrote it: the catalog is read back
//! with a generic DER walk (not the writer's structures), and every member's hash is recomputed
//! here, the image's Authenticode hash with an implementation of its own (Microsoft's
//! "Windows Authenticode Portable Executable Signature Format": the file's bytes less the
//! optional header's CheckSum, the Certificate Table entry of the data directory and the
//! certificate table) rather than the Authenticode crate the writer uses.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use der::asn1::AnyRef;
use der::{Decode, Reader, SliceReader, Tag, TagNumber, Tagged};
use sha2::{Digest, Sha256};

use super::Failure;
use super::catalog::{
    OID_CAT_NAMEVALUE, OID_CATALOG_LIST, OID_CATALOG_MEMBER_V2, OID_CTL, OID_SHA256,
    OID_SIGNED_DATA, OID_SPC_CAB_DATA, OID_SPC_INDIRECT_DATA, OID_SPC_PE_IMAGE_DATA,
};

/// One member as read back from a catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadMember {
    pub tag: Vec<u8>,
    /// Every NameValue of the member: (name, value).
    pub names: Vec<(String, String)>,
    /// The SpcIndirectDataContent's data type and digest.
    pub data_type: String,
    pub digest: Vec<u8>,
}

impl ReadMember {
    pub fn name(&self, key: &str) -> Option<&str> {
        self.names
            .iter()
            .find(|(n, _)| n == key)
            .map(|(_, v)| v.as_str())
    }
}

/// A catalog as read back.
#[derive(Debug, Clone)]
pub struct ReadCatalog {
    pub members: Vec<ReadMember>,
    /// The catalog's NameValues (OS, HWID1..n).
    pub attributes: Vec<(String, String)>,
    /// How many SignerInfos it has.
    pub signers: usize,
}

fn bad(what: &str) -> Failure {
    Failure::Check(format!("the catalog does not read back: {what}"))
}

/// The TLVs inside `content`, in order.
fn children(content: &[u8]) -> Result<Vec<AnyRef<'_>>, Failure> {
    let mut reader = SliceReader::new(content).map_err(|e| bad(&e.to_string()))?;
    let mut out = Vec::new();
    while !reader.is_finished() {
        out.push(AnyRef::decode(&mut reader).map_err(|e| bad(&e.to_string()))?);
    }
    Ok(out)
}

fn expect<'a>(any: &AnyRef<'a>, tag: Tag, what: &str) -> Result<&'a [u8], Failure> {
    if any.tag() != tag {
        return Err(bad(&format!(
            "{what}: {} where {tag} was expected",
            any.tag()
        )));
    }
    Ok(any.value())
}

fn context(number: u8, constructed: bool) -> Tag {
    Tag::ContextSpecific {
        constructed,
        number: TagNumber::new(number),
    }
}

fn oid(any: &AnyRef<'_>, what: &str) -> Result<String, Failure> {
    let bytes = expect(any, Tag::ObjectIdentifier, what)?;
    der::asn1::ObjectIdentifier::from_bytes(bytes)
        .map(|o| o.to_string())
        .map_err(|e| bad(&format!("{what}: {e}")))
}

fn get<'a, 'b>(
    items: &'b [AnyRef<'a>],
    index: usize,
    what: &str,
) -> Result<&'b AnyRef<'a>, Failure> {
    items
        .get(index)
        .ok_or_else(|| bad(&format!("{what} is missing")))
}

/// A NameValue's DER: SEQUENCE { BMPString, INTEGER, OCTET STRING (UTF-16LE, NUL) }.
fn name_value(der_bytes: &[u8]) -> Result<(String, String), Failure> {
    let outer = children(der_bytes)?;
    let seq = expect(get(&outer, 0, "NameValue")?, Tag::Sequence, "NameValue")?;
    let fields = children(seq)?;
    let name = utf16(
        expect(get(&fields, 0, "name")?, Tag::BmpString, "name")?,
        false,
    )?;
    let value = utf16(
        expect(get(&fields, 2, "value")?, Tag::OctetString, "value")?,
        true,
    )?;
    Ok((name, value))
}

fn utf16(bytes: &[u8], little_endian: bool) -> Result<String, Failure> {
    let units: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|c| {
            let pair = [
                c.first().copied().unwrap_or(0),
                c.get(1).copied().unwrap_or(0),
            ];
            if little_endian {
                u16::from_le_bytes(pair)
            } else {
                u16::from_be_bytes(pair)
            }
        })
        .collect();
    let text = String::from_utf16(&units).map_err(|_| bad("a string is not UTF-16"))?;
    Ok(text.trim_end_matches('\0').to_owned())
}

/// Reads a (signed or unsigned) catalog.
pub fn read_catalog(bytes: &[u8]) -> Result<ReadCatalog, Failure> {
    let top = children(bytes)?;
    if top.len() != 1 {
        return Err(bad("trailing bytes after the ContentInfo"));
    }
    let info = children(expect(
        get(&top, 0, "ContentInfo")?,
        Tag::Sequence,
        "ContentInfo",
    )?)?;
    if oid(get(&info, 0, "contentType")?, "contentType")? != OID_SIGNED_DATA.to_string() {
        return Err(bad("not a SignedData"));
    }
    let explicit = children(expect(
        get(&info, 1, "content")?,
        context(0, true),
        "content",
    )?)?;
    let signed = children(expect(
        get(&explicit, 0, "SignedData")?,
        Tag::Sequence,
        "SignedData",
    )?)?;
    let encap = children(expect(
        get(&signed, 2, "encapContentInfo")?,
        Tag::Sequence,
        "encap",
    )?)?;
    if oid(get(&encap, 0, "eContentType")?, "eContentType")? != OID_CTL.to_string() {
        return Err(bad("the content is not a CTL"));
    }
    let econtent = children(expect(
        get(&encap, 1, "eContent")?,
        context(0, true),
        "eContent",
    )?)?;
    let ctl = children(expect(get(&econtent, 0, "CTL")?, Tag::Sequence, "CTL")?)?;
    let signers = signed
        .last()
        .filter(|s| s.tag() == Tag::Set)
        .map_or(Ok(0), |s| children(s.value()).map(|c| c.len()))?;

    let usage = children(expect(
        get(&ctl, 0, "subjectUsage")?,
        Tag::Sequence,
        "usage",
    )?)?;
    if oid(get(&usage, 0, "subjectUsage")?, "subjectUsage")? != OID_CATALOG_LIST.to_string() {
        return Err(bad("subjectUsage is not szOID_CATALOG_LIST"));
    }
    let algorithm = children(expect(
        get(&ctl, 3, "subjectAlgorithm")?,
        Tag::Sequence,
        "alg",
    )?)?;
    if oid(get(&algorithm, 0, "subjectAlgorithm")?, "alg")? != OID_CATALOG_MEMBER_V2.to_string() {
        return Err(bad("the members are not v2 (SHA-256)"));
    }
    let mut members = Vec::new();
    for m in children(expect(get(&ctl, 4, "members")?, Tag::Sequence, "members")?)? {
        members.push(read_member(expect(&m, Tag::Sequence, "member")?)?);
    }
    let mut attributes = Vec::new();
    if let Some(ext) = ctl.get(5) {
        let list = children(expect(ext, context(0, true), "attributes")?)?;
        let list = children(expect(
            get(&list, 0, "attributes")?,
            Tag::Sequence,
            "attributes",
        )?)?;
        for a in list {
            let fields = children(expect(&a, Tag::Sequence, "attribute")?)?;
            if oid(get(&fields, 0, "attribute type")?, "attribute type")?
                != OID_CAT_NAMEVALUE.to_string()
            {
                continue;
            }
            let value = expect(
                get(&fields, 1, "attribute value")?,
                Tag::OctetString,
                "value",
            )?;
            attributes.push(name_value(value)?);
        }
    }
    Ok(ReadCatalog {
        members,
        attributes,
        signers,
    })
}

fn read_member(content: &[u8]) -> Result<ReadMember, Failure> {
    let fields = children(content)?;
    let tag = expect(get(&fields, 0, "member tag")?, Tag::OctetString, "tag")?.to_vec();
    let mut member = ReadMember {
        tag,
        names: Vec::new(),
        data_type: String::new(),
        digest: Vec::new(),
    };
    let attributes = children(expect(
        get(&fields, 1, "member attributes")?,
        Tag::Set,
        "set",
    )?)?;
    for a in attributes {
        let parts = children(expect(&a, Tag::Sequence, "member attribute")?)?;
        let kind = oid(get(&parts, 0, "member attribute type")?, "type")?;
        let values = children(expect(get(&parts, 1, "values")?, Tag::Set, "values")?)?;
        let value = get(&values, 0, "member attribute value")?;
        if kind == OID_CAT_NAMEVALUE.to_string() {
            let mut der_bytes = Vec::new();
            der::Encode::encode_to_vec(value, &mut der_bytes).map_err(|e| bad(&e.to_string()))?;
            member.names.push(name_value(&der_bytes)?);
        } else if kind == OID_SPC_INDIRECT_DATA.to_string() {
            let indirect = children(expect(value, Tag::Sequence, "SpcIndirectDataContent")?)?;
            let data = children(expect(get(&indirect, 0, "data")?, Tag::Sequence, "data")?)?;
            member.data_type = oid(get(&data, 0, "data type")?, "data type")?;
            let digest = children(expect(
                get(&indirect, 1, "digest")?,
                Tag::Sequence,
                "digest",
            )?)?;
            let alg = children(expect(
                get(&digest, 0, "digest alg")?,
                Tag::Sequence,
                "alg",
            )?)?;
            if oid(get(&alg, 0, "digest algorithm")?, "alg")? != OID_SHA256.to_string() {
                return Err(bad("a member's digest is not SHA-256"));
            }
            member.digest = expect(get(&digest, 1, "digest")?, Tag::OctetString, "d")?.to_vec();
        }
    }
    Ok(member)
}

fn le32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn le16(bytes: &[u8], at: usize) -> Option<u16> {
    let b = bytes.get(at..at.checked_add(2)?)?;
    Some(u16::from_le_bytes([b[0], b[1]]))
}

/// The PE file's COFF Machine field.
pub fn machine(image: &[u8]) -> Option<u16> {
    let pe = usize::try_from(le32(image, 0x3c)?).ok()?;
    if image.get(pe..pe + 4)? != b"PE\0\0" {
        return None;
    }
    le16(image, pe + 4)
}

/// The Authenticode image hash (SHA-256) of `image`, written from the format's description.
pub fn authenticode_sha256(image: &[u8]) -> Option<[u8; 32]> {
    let pe = usize::try_from(le32(image, 0x3c)?).ok()?;
    let optional = pe.checked_add(24)?;
    let checksum = optional.checked_add(64)?;
    let directory = match le16(image, optional)? {
        0x20b => optional.checked_add(144)?, // PE32+
        0x10b => optional.checked_add(128)?, // PE32
        _ => return None,
    };
    let table = usize::try_from(le32(image, directory)?).ok()?;
    let size = usize::try_from(le32(image, directory + 4)?).ok()?;
    let table_end = if size == 0 {
        image.len()
    } else {
        table.checked_add(size)?
    };
    let table = if size == 0 { image.len() } else { table };
    if checksum + 4 > directory || directory + 8 > table || table_end > image.len() {
        return None;
    }
    let mut hash = Sha256::new();
    hash.update(image.get(..checksum)?);
    hash.update(image.get(checksum + 4..directory)?);
    hash.update(image.get(directory + 8..table)?);
    hash.update(image.get(table_end..)?);
    Some(hash.finalize().into())
}

/// Checks `folder`'s catalog against its files: every member's hash recomputed, the member set
/// equal to `expected` (the INF and the files it references), the catalog's attributes. Returns
/// the member list, one line each.
pub fn catalog_members(
    folder: &Path,
    catalog: &str,
    expected: &[String],
    os: &str,
    hardware_ids: &[String],
) -> Result<String, Failure> {
    let bytes = read(&folder.join(catalog))?;
    let catalog_read = read_catalog(&bytes)?;
    if catalog_read.signers != 1 {
        return Err(Failure::Check(format!(
            "{catalog} has {} signer(s), not 1",
            catalog_read.signers
        )));
    }
    let mut listed = BTreeSet::new();
    let mut report = String::new();
    for m in &catalog_read.members {
        let Some(file) = m.name("File") else {
            return Err(Failure::Check(format!("{catalog}: a member has no File")));
        };
        if m.name("OSAttr") != Some(super::catalog::OS_ATTR) {
            return Err(Failure::Check(format!(
                "{catalog}: {file} has no OSAttr 2:10.0"
            )));
        }
        let content = read(&folder.join(file))?;
        let (hash, kind, want_type) = if file.ends_with(".sys") {
            let hash = authenticode_sha256(&content).ok_or_else(|| {
                Failure::Check(format!("{file} is not a PE image with a readable header"))
            })?;
            (hash, "Authenticode", OID_SPC_PE_IMAGE_DATA)
        } else {
            (Sha256::digest(&content).into(), "flat", OID_SPC_CAB_DATA)
        };
        if m.tag != hash || m.digest != hash {
            return Err(Failure::Check(format!(
                "{catalog}: the hash of {file} is not its {kind} SHA-256 {}",
                hex(&hash)
            )));
        }
        if m.data_type != want_type.to_string() {
            return Err(Failure::Check(format!(
                "{catalog}: {file}'s indirect data is {}, not {want_type}",
                m.data_type
            )));
        }
        listed.insert(file.to_owned());
        let names: Vec<String> = m.names.iter().map(|(n, v)| format!("{n}={v}")).collect();
        let _ = writeln!(
            report,
            "  {file:<11} {kind:<12} sha256 {}  {} {}",
            hex(&hash),
            names.join(" "),
            m.data_type
        );
    }
    let want: BTreeSet<String> = expected.iter().map(|f| f.to_ascii_lowercase()).collect();
    if listed != want {
        return Err(Failure::Check(format!(
            "{catalog} lists {listed:?}, the package needs {want:?}"
        )));
    }
    let attribute = |name: &str| {
        catalog_read
            .attributes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    if attribute("OS").as_deref() != Some(os) {
        return Err(Failure::Check(format!("{catalog}: OS is not {os}")));
    }
    for (i, id) in hardware_ids.iter().enumerate() {
        let name = format!("HWID{}", i + 1);
        if attribute(&name).as_deref() != Some(id.to_ascii_lowercase().as_str()) {
            return Err(Failure::Check(format!("{catalog}: {name} is not {id}")));
        }
    }
    let attrs: Vec<String> = catalog_read
        .attributes
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    let _ = writeln!(report, "  catalog attributes: {}", attrs.join(" "));
    Ok(report)
}

/// The files of `folder`, by name.
pub fn folder_files(folder: &Path) -> Result<BTreeSet<String>, Failure> {
    let entries = fs::read_dir(folder)
        .map_err(|e| Failure::Io(format!("cannot list {}: {e}", folder.display())))?;
    let mut names = BTreeSet::new();
    for entry in entries {
        let entry =
            entry.map_err(|e| Failure::Io(format!("cannot list {}: {e}", folder.display())))?;
        names.insert(entry.file_name().to_string_lossy().into_owned());
    }
    Ok(names)
}

fn read(path: &Path) -> Result<Vec<u8>, Failure> {
    fs::read(path).map_err(|e| Failure::Check(format!("cannot read {}: {e}", path.display())))
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// contentType, messageDigest (RFC 5652 §11.1, §11.2).
const OID_CONTENT_TYPE: &str = "1.2.840.113549.1.9.3";
const OID_MESSAGE_DIGEST: &str = "1.2.840.113549.1.9.4";
/// SPC_SP_OPUS_INFO_OBJID, SPC_STATEMENT_TYPE_OBJID, SPC_INDIVIDUAL_SP_KEY_PURPOSE_OBJID.
const OID_SPC_SP_OPUS_INFO: &str = "1.3.6.1.4.1.311.2.1.12";
const OID_SPC_STATEMENT_TYPE: &str = "1.3.6.1.4.1.311.2.1.11";
const OID_INDIVIDUAL_CODE_SIGNING: &str = "1.3.6.1.4.1.311.2.1.21";

/// The embedded signature of a PE image: the PKCS#7 of its first WIN_CERTIFICATE, which must be
/// revision 0x0200, type WIN_CERT_TYPE_PKCS_SIGNED_DATA (2) ("Windows Authenticode Portable
/// Executable Signature Format", the Attribute Certificate Table).
pub fn embedded_signature(image: &[u8]) -> Result<&[u8], Failure> {
    let fail = |what: &str| Failure::Check(format!("the image's signature: {what}"));
    let pe = le32(image, 0x3c).and_then(|v| usize::try_from(v).ok());
    let directory = pe
        .map(|pe| pe + 24 + 144)
        .ok_or_else(|| fail("no PE header"))?;
    let at = le32(image, directory).and_then(|v| usize::try_from(v).ok());
    let size = le32(image, directory + 4).and_then(|v| usize::try_from(v).ok());
    let (Some(at), Some(size)) = (at, size) else {
        return Err(fail("no certificate table entry"));
    };
    if size == 0 {
        return Err(fail("the image is not signed"));
    }
    let length = le32(image, at).and_then(|v| usize::try_from(v).ok());
    let length = length
        .filter(|l| *l >= 8 && *l <= size)
        .ok_or_else(|| fail("bad length"))?;
    if le16(image, at + 4) != Some(0x0200) || le16(image, at + 6) != Some(0x0002) {
        return Err(fail("not a revision 2.0 PKCS_SIGNED_DATA WIN_CERTIFICATE"));
    }
    let body = image
        .get(at + 8..at + length)
        .ok_or_else(|| fail("cut short"))?;
    // The PKCS#7 is followed by padding to 8 bytes: take exactly its DER.
    let outer = AnyRef::from_der(body).or_else(|_| {
        let mut reader = SliceReader::new(body).map_err(|e| fail(&e.to_string()))?;
        AnyRef::decode(&mut reader).map_err(|e| fail(&e.to_string()))
    })?;
    let total = der::Encode::encoded_len(&outer)
        .ok()
        .and_then(|l| usize::try_from(u32::from(l)).ok())
        .ok_or_else(|| fail("bad DER"))?;
    body.get(..total).ok_or_else(|| fail("cut short"))
}

/// Checks that `pkcs7` is a signature of the shape Authenticode requires (spec'd in Microsoft's
/// Authenticode format): a SignedData of `content_type` with SHA-256, the signer's certificate,
/// one SignerInfo whose signed attributes are contentType (= `content_type`), messageDigest,
/// SpcSpOpusInfo and the statement type individual code signing. Returns the encapsulated
/// content's DER (the SpcIndirectDataContent of an image, the CTL of a catalog).
pub fn signature_structure(
    pkcs7: &[u8],
    content_type: &str,
    what: &str,
) -> Result<Vec<u8>, Failure> {
    let fail = |detail: &str| Failure::Check(format!("{what}'s signature: {detail}"));
    let wrap = |e: Failure| fail(e.message());
    let top = children(pkcs7).map_err(wrap)?;
    let info = children(
        expect(
            get(&top, 0, "ContentInfo").map_err(wrap)?,
            Tag::Sequence,
            "ContentInfo",
        )
        .map_err(wrap)?,
    )
    .map_err(wrap)?;
    let explicit = children(
        expect(
            get(&info, 1, "content").map_err(wrap)?,
            context(0, true),
            "content",
        )
        .map_err(wrap)?,
    )
    .map_err(wrap)?;
    let signed = children(
        expect(
            get(&explicit, 0, "SignedData").map_err(wrap)?,
            Tag::Sequence,
            "SignedData",
        )
        .map_err(wrap)?,
    )
    .map_err(wrap)?;
    let digests = children(
        expect(
            get(&signed, 1, "digestAlgorithms").map_err(wrap)?,
            Tag::Set,
            "digests",
        )
        .map_err(wrap)?,
    )
    .map_err(wrap)?;
    let sha256 = OID_SHA256.to_string();
    let digest_oid = |any: &AnyRef<'_>| -> Result<String, Failure> {
        let alg = children(expect(any, Tag::Sequence, "AlgorithmIdentifier")?)?;
        oid(get(&alg, 0, "algorithm")?, "algorithm")
    };
    if digests.len() != 1
        || digest_oid(get(&digests, 0, "digest").map_err(wrap)?).map_err(wrap)? != sha256
    {
        return Err(fail("digestAlgorithms is not { sha256 }"));
    }
    let encap = children(
        expect(
            get(&signed, 2, "encapContentInfo").map_err(wrap)?,
            Tag::Sequence,
            "encap",
        )
        .map_err(wrap)?,
    )
    .map_err(wrap)?;
    if oid(
        get(&encap, 0, "eContentType").map_err(wrap)?,
        "eContentType",
    )
    .map_err(wrap)?
        != content_type
    {
        return Err(fail(&format!("the content is not {content_type}")));
    }
    let econtent = children(
        expect(
            get(&encap, 1, "eContent").map_err(wrap)?,
            context(0, true),
            "eContent",
        )
        .map_err(wrap)?,
    )
    .map_err(wrap)?;
    let content = get(&econtent, 0, "eContent").map_err(wrap)?;
    let has_certificates = signed.iter().any(|a| a.tag() == context(0, true));
    if !has_certificates {
        return Err(fail("it carries no certificate"));
    }
    let signer_infos = signed
        .last()
        .filter(|a| a.tag() == Tag::Set)
        .ok_or_else(|| fail("no signerInfos"))?;
    let signers = children(signer_infos.value()).map_err(wrap)?;
    let [signer] = signers.as_slice() else {
        return Err(fail(&format!("{} SignerInfos, not 1", signers.len())));
    };
    let fields =
        children(expect(signer, Tag::Sequence, "SignerInfo").map_err(wrap)?).map_err(wrap)?;
    if digest_oid(get(&fields, 2, "digestAlgorithm").map_err(wrap)?).map_err(wrap)? != sha256 {
        return Err(fail("the signer's digest is not SHA-256"));
    }
    let signed_attrs = children(
        expect(
            get(&fields, 3, "signedAttrs").map_err(wrap)?,
            context(0, true),
            "signedAttrs",
        )
        .map_err(wrap)?,
    )
    .map_err(wrap)?;
    let mut found: Vec<String> = Vec::new();
    for attribute in &signed_attrs {
        let parts =
            children(expect(attribute, Tag::Sequence, "attribute").map_err(wrap)?).map_err(wrap)?;
        let kind = oid(get(&parts, 0, "type").map_err(wrap)?, "type").map_err(wrap)?;
        let values = children(
            expect(get(&parts, 1, "values").map_err(wrap)?, Tag::Set, "values").map_err(wrap)?,
        )
        .map_err(wrap)?;
        let value = get(&values, 0, "value").map_err(wrap)?;
        if kind == OID_CONTENT_TYPE && oid(value, "contentType").map_err(wrap)? != content_type {
            return Err(fail("the contentType attribute is not the content's type"));
        }
        if kind == OID_SPC_STATEMENT_TYPE {
            let purposes =
                children(expect(value, Tag::Sequence, "statement").map_err(wrap)?).map_err(wrap)?;
            let individual = purposes
                .iter()
                .any(|p| oid(p, "purpose").is_ok_and(|o| o == OID_INDIVIDUAL_CODE_SIGNING));
            if !individual {
                return Err(fail("the statement type is not individual code signing"));
            }
        }
        found.push(kind);
    }
    for (required, name) in [
        (OID_CONTENT_TYPE, "contentType"),
        (OID_MESSAGE_DIGEST, "messageDigest"),
        (OID_SPC_SP_OPUS_INFO, "SpcSpOpusInfo"),
        (OID_SPC_STATEMENT_TYPE, "SpcStatementType"),
    ] {
        if !found.iter().any(|f| f == required) {
            return Err(fail(&format!("no {name} signed attribute")));
        }
    }
    let mut content_der = Vec::new();
    der::Encode::encode_to_vec(content, &mut content_der).map_err(|e| fail(&e.to_string()))?;
    Ok(content_der)
}

/// The digest of an SpcIndirectDataContent (its DigestInfo's OCTET STRING) and its data type.
pub fn indirect_digest(content: &[u8]) -> Result<(String, Vec<u8>), Failure> {
    let top = children(content)?;
    let indirect = children(expect(
        get(&top, 0, "SpcIndirectDataContent")?,
        Tag::Sequence,
        "indirect",
    )?)?;
    let data = children(expect(get(&indirect, 0, "data")?, Tag::Sequence, "data")?)?;
    let kind = oid(get(&data, 0, "data type")?, "data type")?;
    let digest = children(expect(
        get(&indirect, 1, "digest")?,
        Tag::Sequence,
        "digest",
    )?)?;
    let alg = children(expect(
        get(&digest, 0, "algorithm")?,
        Tag::Sequence,
        "algorithm",
    )?)?;
    if oid(get(&alg, 0, "algorithm")?, "algorithm")? != OID_SHA256.to_string() {
        return Err(bad("the image digest is not SHA-256"));
    }
    let value = expect(get(&digest, 1, "digest")?, Tag::OctetString, "digest")?;
    Ok((kind, value.to_vec()))
}
