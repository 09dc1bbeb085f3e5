//! A small reader for Windows INF files, enough to check `inf/dcbndk.inx` against the keyword
//! table and the virtual-NIC rules (`conformance::inf`).
//!
//! What it understands, after the "General Syntax Rules for INF Files":
//! - `[Section]` headers; names are case-insensitive and a section named twice is one section
//!   (its entries are merged in file order, as Setup does);
//! - entries `key = value, value, ...` (directives) and `value, value, ...` (for example
//!   `HKR, subkey, name, flags, "value"`); [`RegLine`] reads the add-registry form;
//! - `"quoted"` fields, where `""` stands for one quote and `,`, `;` and `=` are plain text;
//! - `;` comments outside quotes;
//! - `\` as the last character of a line (comments removed) continues the entry on the next line;
//! - `%token%` replaced by its `[Strings]` value, after the line is split into fields, so a value
//!   that holds a comma stays one field; `%%` is a literal `%`, and `%13%` (a number: a DIRID)
//!   is left for Setup.
//!
//! Errors are values: [`InfError`] names the file, the line and the rule broken. The reader never
//! panics, whatever the input (a test feeds it every short string over the syntax characters).
//!
//! No INF crate on crates.io reads this syntax with line numbers and `[Strings]` substitution,
//! so the reader is ours.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

/// The syntax rule an INF text breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseRule {
    /// The file could not be read.
    Io,
    /// An entry before the first `[Section]` header.
    EntryOutsideSection,
    /// `[` without a closing `]`.
    UnterminatedSectionHeader,
    /// `[]` or `[   ]`.
    EmptySectionName,
    /// Text after the `]` of a section header.
    TextAfterSectionHeader,
    /// A `"` without its closing `"` on the same line.
    UnterminatedQuote,
    /// A `%` without its closing `%`.
    UnterminatedStringToken,
    /// A `%token%` that `[Strings]` does not define.
    UndefinedStringToken,
    /// A `[Strings]` key defined twice.
    DuplicateStringKey,
    /// `= value` with nothing before the `=`.
    EmptyKey,
    /// A `\` continuation on the last line of the file.
    ContinuationAtEndOfFile,
    /// An add-registry line with a `key =`, fewer than two fields or an unknown root.
    RegLineShape,
    /// An add-registry line whose flags field is not a number.
    RegLineFlags,
}

impl ParseRule {
    /// What the rule says, for messages.
    #[must_use]
    pub fn text(self) -> &'static str {
        match self {
            Self::Io => "the file must be readable",
            Self::EntryOutsideSection => "every entry must follow a [Section] header",
            Self::UnterminatedSectionHeader => "a section header must end with ']'",
            Self::EmptySectionName => "a section name must not be empty",
            Self::TextAfterSectionHeader => "nothing but a comment may follow a section header",
            Self::UnterminatedQuote => "a quoted string must end on the line it starts",
            Self::UnterminatedStringToken => "a %token% must end with '%' (write %% for '%')",
            Self::UndefinedStringToken => "every %token% must be defined in [Strings]",
            Self::DuplicateStringKey => "a [Strings] key must be defined once",
            Self::EmptyKey => "a directive needs a key before '='",
            Self::ContinuationAtEndOfFile => "a '\\' continuation needs a following line",
            Self::RegLineShape => {
                "an add-registry line is 'root, subkey[, name[, flags[, value]]]'"
            }
            Self::RegLineFlags => "add-registry flags must be a decimal or 0x hex number",
        }
    }
}

impl fmt::Display for ParseRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

/// Why an INF text could not be read: the file, the 1-based line (0 when there is no line), the
/// rule broken and what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InfError {
    /// The file as given to the reader.
    pub file: String,
    /// The 1-based line; 0 for errors about the whole file.
    pub line: usize,
    /// The rule broken.
    pub rule: ParseRule,
    /// What was found.
    pub detail: String,
}

impl fmt::Display for InfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.file, self.line, self.rule, self.detail
        )
    }
}

impl std::error::Error for InfError {}

/// One entry of a section, with `%tokens%` replaced and quotes removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The 1-based line the entry starts on.
    pub line: usize,
    /// The text before `=`, if the entry has one.
    pub key: Option<String>,
    /// The comma-separated fields after `=` (or of the whole entry), trimmed.
    pub fields: Vec<String>,
}

impl Entry {
    /// Whether the entry's key is `key` (case-insensitive, as INF keys are).
    #[must_use]
    pub fn key_is(&self, key: &str) -> bool {
        self.key
            .as_deref()
            .is_some_and(|k| k.eq_ignore_ascii_case(key))
    }

    /// The first field, or `""`.
    #[must_use]
    pub fn value(&self) -> &str {
        self.fields.first().map_or("", String::as_str)
    }
}

/// One `[Section]`: its name as first written, its header line and its entries in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The name between the brackets, trimmed.
    pub name: String,
    /// The 1-based line of its first header.
    pub line: usize,
    /// Its entries, from every header of that name.
    pub entries: Vec<Entry>,
}

impl Section {
    /// The entries whose key is `key` (case-insensitive).
    pub fn directives<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a Entry> + 'a {
        self.entries.iter().filter(move |e| e.key_is(key))
    }

    /// The first entry whose key is `key`.
    #[must_use]
    pub fn directive(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key_is(key))
    }
}

/// A parsed INF file.
#[derive(Debug, Clone)]
pub struct Inf {
    file: String,
    sections: Vec<Section>,
    strings: HashMap<String, String>,
}

/// An add-registry line: `root, subkey, value-name, flags, value[, more values]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegLine {
    /// The 1-based line.
    pub line: usize,
    /// `HKR`, `HKLM`, ... as written.
    pub root: String,
    /// The subkey, `""` for the root key itself.
    pub subkey: String,
    /// The value name, `""` for the default value.
    pub value_name: String,
    /// The `FLG_ADDREG_*` flags (0, REG_SZ, when empty or absent).
    pub flags: u32,
    /// The value, if the line has one.
    pub value: Option<String>,
    /// Fields after the value (the rest of a REG_MULTI_SZ or binary value).
    pub more: Vec<String>,
}

const REG_ROOTS: &[&str] = &["HKR", "HKCR", "HKCU", "HKLM", "HKU"];

impl RegLine {
    /// Reads `entry` as an add-registry line of `file`.
    ///
    /// # Errors
    ///
    /// [`ParseRule::RegLineShape`] when the entry has a key, fewer than two fields or an unknown
    /// root; [`ParseRule::RegLineFlags`] when the flags are not a number.
    pub fn parse(file: &str, entry: &Entry) -> Result<Self, InfError> {
        let error = |rule, detail: String| InfError {
            file: file.to_string(),
            line: entry.line,
            rule,
            detail,
        };
        if let Some(key) = &entry.key {
            return Err(error(
                ParseRule::RegLineShape,
                format!("has a key '{key} ='"),
            ));
        }
        let root = entry.value();
        if entry.fields.len() < 2 {
            return Err(error(
                ParseRule::RegLineShape,
                format!("only {} field(s)", entry.fields.len()),
            ));
        }
        if !REG_ROOTS.iter().any(|r| r.eq_ignore_ascii_case(root)) {
            return Err(error(
                ParseRule::RegLineShape,
                format!("unknown registry root '{root}'"),
            ));
        }
        let field = |i: usize| entry.fields.get(i).cloned().unwrap_or_default();
        let flags_text = field(3);
        let flags = if flags_text.is_empty() {
            0
        } else {
            parse_number(&flags_text)
                .ok_or_else(|| error(ParseRule::RegLineFlags, format!("flags '{flags_text}'")))?
        };
        Ok(Self {
            line: entry.line,
            root: root.to_string(),
            subkey: field(1),
            value_name: field(2),
            flags,
            value: entry.fields.get(4).cloned(),
            more: entry
                .fields
                .get(5..)
                .map(<[String]>::to_vec)
                .unwrap_or_default(),
        })
    }
}

/// Reads an INF number: `0x` hex or decimal, surrounding blanks ignored.
#[must_use]
pub fn parse_number(text: &str) -> Option<u32> {
    let text = text.trim();
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// A field before `%token%` substitution: its characters and whether each was quoted.
type RawField = Vec<(char, bool)>;

/// An entry before substitution.
struct RawEntry {
    line: usize,
    key: Option<RawField>,
    fields: Vec<RawField>,
}

struct RawSection {
    name: String,
    line: usize,
    entries: Vec<RawEntry>,
}

impl Inf {
    /// Parses `text`; `file` names it in errors.
    ///
    /// # Errors
    ///
    /// The first syntax rule the text breaks, with its line.
    pub fn parse(file: &str, text: &str) -> Result<Self, InfError> {
        let error = |line, rule, detail: String| InfError {
            file: file.to_string(),
            line,
            rule,
            detail,
        };
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut raw: Vec<RawSection> = Vec::new();
        let mut current: Option<usize> = None;
        for (line, logical) in logical_lines(text).map_err(|(l, r, d)| error(l, r, d))? {
            let trimmed = logical.trim();
            if trimmed.is_empty() {
                continue;
            }
            if let Some(rest) = trimmed.strip_prefix('[') {
                let Some((name, after)) = rest.split_once(']') else {
                    return Err(error(
                        line,
                        ParseRule::UnterminatedSectionHeader,
                        trimmed.into(),
                    ));
                };
                let name = name.trim();
                if name.is_empty() {
                    return Err(error(line, ParseRule::EmptySectionName, trimmed.into()));
                }
                if !after.trim().is_empty() {
                    return Err(error(
                        line,
                        ParseRule::TextAfterSectionHeader,
                        after.trim().into(),
                    ));
                }
                let index = match raw.iter().position(|s| s.name.eq_ignore_ascii_case(name)) {
                    Some(i) => i,
                    None => {
                        raw.push(RawSection {
                            name: name.into(),
                            line,
                            entries: Vec::new(),
                        });
                        raw.len() - 1
                    }
                };
                current = Some(index);
                continue;
            }
            let Some(section) = current.and_then(|i| raw.get_mut(i)) else {
                return Err(error(line, ParseRule::EntryOutsideSection, trimmed.into()));
            };
            let entry = split_entry(line, &logical).map_err(|(r, d)| error(line, r, d))?;
            section.entries.push(entry);
        }

        let mut strings = HashMap::new();
        if let Some(section) = raw.iter().find(|s| s.name.eq_ignore_ascii_case("Strings")) {
            for entry in &section.entries {
                let Some(key) = &entry.key else {
                    return Err(error(
                        entry.line,
                        ParseRule::EmptyKey,
                        "a [Strings] entry needs 'key ='".into(),
                    ));
                };
                let key = plain(key).to_ascii_lowercase();
                let value = entry.fields.iter().map(plain).collect::<Vec<_>>().join(",");
                if strings.insert(key.clone(), value).is_some() {
                    return Err(error(entry.line, ParseRule::DuplicateStringKey, key));
                }
            }
        }

        let mut sections = Vec::with_capacity(raw.len());
        for section in raw {
            let is_strings = section.name.eq_ignore_ascii_case("Strings");
            let mut entries = Vec::with_capacity(section.entries.len());
            for entry in section.entries {
                let subst = |f: &RawField| {
                    if is_strings {
                        Ok(plain(f))
                    } else {
                        substitute(&plain(f), &strings).map_err(|(r, d)| error(entry.line, r, d))
                    }
                };
                let key = entry.key.as_ref().map(subst).transpose()?;
                let fields = entry
                    .fields
                    .iter()
                    .map(subst)
                    .collect::<Result<Vec<_>, _>>()?;
                entries.push(Entry {
                    line: entry.line,
                    key,
                    fields,
                });
            }
            sections.push(Section {
                name: section.name,
                line: section.line,
                entries,
            });
        }
        Ok(Self {
            file: file.to_string(),
            sections,
            strings,
        })
    }

    /// Reads and parses the file at `path` (UTF-8, or UTF-16LE with its byte-order mark as in
    /// the Windows samples); `file` names it in errors.
    ///
    /// # Errors
    ///
    /// [`ParseRule::Io`] when the file cannot be read, else as [`Inf::parse`].
    pub fn load(path: &Path, file: &str) -> Result<Self, InfError> {
        let io_error = |detail: String| InfError {
            file: file.to_string(),
            line: 0,
            rule: ParseRule::Io,
            detail: format!("{}: {detail}", path.display()),
        };
        let bytes = std::fs::read(path).map_err(|e| io_error(e.to_string()))?;
        let text = decode(&bytes).map_err(io_error)?;
        Self::parse(file, &text)
    }

    /// The file name given to the reader.
    #[must_use]
    pub fn file(&self) -> &str {
        &self.file
    }

    /// Every section, in order of first appearance.
    #[must_use]
    pub fn sections(&self) -> &[Section] {
        &self.sections
    }

    /// The section called `name` (case-insensitive).
    #[must_use]
    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(name))
    }

    /// The `[Strings]` value of `key` (case-insensitive).
    #[must_use]
    pub fn string(&self, key: &str) -> Option<&str> {
        self.strings
            .get(&key.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// The entries of `section` read as add-registry lines.
    ///
    /// # Errors
    ///
    /// The first entry that is not an add-registry line.
    pub fn reg_lines(&self, section: &Section) -> Result<Vec<RegLine>, InfError> {
        section
            .entries
            .iter()
            .map(|e| RegLine::parse(&self.file, e))
            .collect()
    }
}

/// The text of an INF file: UTF-16LE when it starts with the FF FE byte-order mark, else UTF-8.
fn decode(bytes: &[u8]) -> Result<String, String> {
    match bytes {
        [0xFF, 0xFE, rest @ ..] => {
            if rest.len() % 2 != 0 {
                return Err("UTF-16LE text with an odd number of bytes".into());
            }
            let units: Vec<u16> = rest
                .chunks_exact(2)
                .map(|pair| match pair {
                    [lo, hi] => u16::from_le_bytes([*lo, *hi]),
                    _ => 0,
                })
                .collect();
            String::from_utf16(&units).map_err(|e| format!("UTF-16LE: {e}"))
        }
        _ => String::from_utf8(bytes.to_vec()).map_err(|e| format!("UTF-8: {e}")),
    }
}

type LineError = (usize, ParseRule, String);

/// Joins continued lines and removes comments: `(first line number, text)` per logical line.
fn logical_lines(text: &str) -> Result<impl Iterator<Item = (usize, String)>, LineError> {
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    let mut last = 0;
    for (index, physical) in text.lines().enumerate() {
        let line = index + 1;
        last = line;
        let code = strip_comment(physical).ok_or_else(|| {
            (
                line,
                ParseRule::UnterminatedQuote,
                physical.trim().to_string(),
            )
        })?;
        let code = code.trim_end();
        let (code, continues) = match code.strip_suffix('\\') {
            Some(head) => (head, true),
            None => (code, false),
        };
        let (start, mut joined) = pending.take().unwrap_or((line, String::new()));
        joined.push_str(code);
        if continues {
            pending = Some((start, joined));
        } else {
            out.push((start, joined));
        }
    }
    if let Some((start, _)) = pending {
        return Err((
            start,
            ParseRule::ContinuationAtEndOfFile,
            format!("continued up to line {last}"),
        ));
    }
    Ok(out.into_iter())
}

/// The line without its `;` comment; `None` if a quote is left open.
fn strip_comment(line: &str) -> Option<&str> {
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ';' if !quoted => return line.get(..i),
            _ => {}
        }
    }
    (!quoted).then_some(line)
}

/// Splits a logical line into key and fields, removing quotes and unquoted outer blanks.
fn split_entry(line: usize, text: &str) -> Result<RawEntry, (ParseRule, String)> {
    let mut parts: Vec<RawField> = vec![Vec::new()];
    let mut key: Option<RawField> = None;
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let first_part = parts.len() == 1;
        let part = parts
            .last_mut()
            .ok_or((ParseRule::EmptyKey, String::new()))?;
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                part.push(('"', true));
            }
            '"' => quoted = !quoted,
            ',' if !quoted => parts.push(Vec::new()),
            '=' if !quoted && key.is_none() && first_part => {
                let k = trim(std::mem::take(part));
                if k.is_empty() {
                    return Err((ParseRule::EmptyKey, text.trim().to_string()));
                }
                key = Some(k);
            }
            c => part.push((c, quoted)),
        }
    }
    if quoted {
        return Err((ParseRule::UnterminatedQuote, text.trim().to_string()));
    }
    let mut fields: Vec<RawField> = parts.into_iter().map(trim).collect();
    if key.is_none() && fields.len() == 1 && fields.first().is_some_and(Vec::is_empty) {
        fields.clear();
    }
    Ok(RawEntry { line, key, fields })
}

/// Removes unquoted blanks at both ends.
fn trim(mut field: RawField) -> RawField {
    while field.last().is_some_and(|&(c, q)| !q && c.is_whitespace()) {
        field.pop();
    }
    let lead = field
        .iter()
        .take_while(|&&(c, q)| !q && c.is_whitespace())
        .count();
    field.drain(..lead);
    field
}

fn plain(field: &RawField) -> String {
    field.iter().map(|&(c, _)| c).collect()
}

/// Replaces `%token%` with its `[Strings]` value; `%%` is `%`; numeric tokens (DIRIDs) stay.
fn substitute(
    text: &str,
    strings: &HashMap<String, String>,
) -> Result<String, (ParseRule, String)> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((before, after)) = rest.split_once('%') {
        out.push_str(before);
        if let Some(after_escape) = after.strip_prefix('%') {
            out.push('%');
            rest = after_escape;
            continue;
        }
        let Some((token, tail)) = after.split_once('%') else {
            return Err((ParseRule::UnterminatedStringToken, text.to_string()));
        };
        if !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) {
            out.push('%');
            out.push_str(token);
            out.push('%');
        } else {
            let value = strings
                .get(&token.to_ascii_lowercase())
                .ok_or_else(|| (ParseRule::UndefinedStringToken, format!("%{token}%")))?;
            out.push_str(value);
        }
        rest = tail;
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Inf {
        Inf::parse("t.inf", text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn parse_err(text: &str) -> InfError {
        match Inf::parse("t.inf", text) {
            Ok(inf) => panic!("parsed: {:?}", inf.sections()),
            Err(e) => e,
        }
    }

    #[test]
    fn sections_and_directives() {
        let inf = parse("[Version]\nClass = Net\nClassGuid={x}\n\n[Other]\nA = 1, 2 ,3\n");
        assert_eq!(inf.sections().len(), 2);
        let version = inf.section("version").expect("case-insensitive lookup");
        assert_eq!((version.name.as_str(), version.line), ("Version", 1));
        let class = version.directive("CLASS").expect("Class");
        assert_eq!((class.line, class.value()), (2, "Net"));
        assert_eq!(
            version.directive("ClassGuid").map(Entry::value),
            Some("{x}")
        );
        let a = inf
            .section("Other")
            .and_then(|s| s.directive("a"))
            .expect("A");
        assert_eq!(a.fields, ["1", "2", "3"]);
        assert_eq!(a.line, 6);
        assert!(inf.section("Missing").is_none());
    }

    #[test]
    fn a_section_named_twice_is_merged() {
        let inf = parse("[A]\nx = 1\n[B]\n[a]\ny = 2\n");
        assert_eq!(inf.sections().len(), 2);
        let a = inf.section("A").expect("A");
        assert_eq!(a.line, 1);
        let keys: Vec<_> = a.entries.iter().map(|e| (e.key.clone(), e.line)).collect();
        assert_eq!(keys, [(Some("x".into()), 2), (Some("y".into()), 5)]);
    }

    #[test]
    fn entries_without_key_and_empty_fields() {
        let inf = parse("[S]\ndcbndk.sys,,,2\n[R]\nHKR, , Name, 0x10001, 7\n");
        let first = inf
            .section("S")
            .and_then(|s| s.entries.first())
            .expect("entry");
        assert_eq!(first.key, None);
        assert_eq!(first.fields, ["dcbndk.sys", "", "", "2"]);
        let reg = inf
            .reg_lines(inf.section("R").expect("R"))
            .expect("reg lines");
        let [line] = reg.as_slice() else {
            panic!("{reg:?}")
        };
        assert_eq!(
            (line.subkey.as_str(), line.value_name.as_str()),
            ("", "Name")
        );
        assert_eq!((line.flags, line.value.as_deref()), (0x10001, Some("7")));
    }

    #[test]
    fn quotes_protect_commas_semicolons_equals_and_blanks() {
        let inf = parse("[S]\nK = \"a, b; c = d\" , \"  padded \", \"say \"\"hi\"\"\"\n");
        let k = inf.section("S").and_then(|s| s.directive("K")).expect("K");
        assert_eq!(k.fields, ["a, b; c = d", "  padded ", "say \"hi\""]);
        let inf = parse("[S]\n\"quoted key\" = 1\n");
        assert!(
            inf.section("S")
                .and_then(|s| s.directive("quoted key"))
                .is_some()
        );
    }

    #[test]
    fn comments_are_removed_outside_quotes_only() {
        let inf =
            parse("; header comment\n[S] ; after header\nA = 1 ; note\nB = \"x;y\" ; z\n;C = 3\n");
        let s = inf.section("S").expect("S");
        assert_eq!(s.entries.len(), 2);
        assert_eq!(s.directive("A").map(Entry::value), Some("1"));
        assert_eq!(s.directive("B").map(Entry::value), Some("x;y"));
    }

    #[test]
    fn strings_are_substituted_after_splitting() {
        let text = "[Version]\nProvider = %Prov%\n[S]\n%Desc% = Ddi, root\\x\nP = %13%\\a.sys, \"%%Root%%\\b\", %Comma%\n\
                    [Strings]\nprov = \"My Provider\"\nDesc = Device ; comment\nComma = \"a, b\"\n";
        let inf = parse(text);
        assert_eq!(
            inf.section("Version")
                .and_then(|s| s.directive("Provider"))
                .map(Entry::value),
            Some("My Provider")
        );
        let s = inf.section("S").expect("S");
        let model = s.directive("Device").expect("substituted key");
        assert_eq!(model.fields, ["Ddi", "root\\x"]);
        let p = s.directive("P").expect("P");
        assert_eq!(p.fields, ["%13%\\a.sys", "%Root%\\b", "a, b"]);
        assert_eq!(inf.string("COMMA"), Some("a, b"));
        assert_eq!(inf.string("missing"), None);
    }

    #[test]
    fn undefined_and_unterminated_tokens_are_errors_with_their_line() {
        let e = parse_err("[S]\nA = 1\nB = %Nope%\n[Strings]\nYes = 1\n");
        assert_eq!((e.line, e.rule), (3, ParseRule::UndefinedStringToken));
        assert!(e.detail.contains("%Nope%"), "{e}");
        let e = parse_err("[S]\nA = 50%\n");
        assert_eq!((e.line, e.rule), (2, ParseRule::UnterminatedStringToken));
    }

    #[test]
    fn continuation_joins_lines_and_keeps_the_first_line_number() {
        let inf = parse("[S]\nHKR, Ndi, \\\n    Service, 0, \"x\" ; c\n[T]\nB = 2\n");
        let reg = inf
            .reg_lines(inf.section("S").expect("S"))
            .expect("reg line");
        let [first] = reg.as_slice() else {
            panic!("{reg:?}")
        };
        assert_eq!(
            (
                first.line,
                first.value_name.as_str(),
                first.value.as_deref()
            ),
            (2, "Service", Some("x"))
        );
        assert_eq!(
            inf.section("T")
                .and_then(|s| s.directive("B"))
                .map(|e| e.line),
            Some(5)
        );
        let e = parse_err("[S]\nA = 1, \\\n");
        assert_eq!((e.line, e.rule), (2, ParseRule::ContinuationAtEndOfFile));
    }

    #[test]
    fn reg_line_fields() {
        let inf =
            parse("[R]\nHKR, Ndi\\params\\*QOS\\enum, \"0\", 0, \"Disabled\"\nHKLM, Software\\X\n");
        let lines = inf.reg_lines(inf.section("R").expect("R")).expect("reg");
        let [first, second] = lines.as_slice() else {
            panic!("{lines:?}")
        };
        assert_eq!(first.root, "HKR");
        assert_eq!(first.subkey, "Ndi\\params\\*QOS\\enum");
        assert_eq!((first.value_name.as_str(), first.flags), ("0", 0));
        assert_eq!(first.value.as_deref(), Some("Disabled"));
        assert_eq!(
            (
                second.value_name.as_str(),
                second.flags,
                second.value.as_deref()
            ),
            ("", 0, None)
        );
    }

    #[test]
    fn reg_line_errors_name_file_line_and_rule() {
        let check = |text: &str, line, rule| {
            let inf = parse(text);
            let e = inf
                .reg_lines(inf.section("R").expect("R"))
                .expect_err("must fail");
            assert_eq!(
                (e.file.as_str(), e.line, e.rule),
                ("t.inf", line, rule),
                "{e}"
            );
        };
        check(
            "[R]\nHKR, a, b, 0, x\nHKR, a, b, zero, x\n",
            3,
            ParseRule::RegLineFlags,
        );
        check("[R]\nHKX, a, b, 0, x\n", 2, ParseRule::RegLineShape);
        check("[R]\nHKR\n", 2, ParseRule::RegLineShape);
        check("[R]\nK = HKR, a, b, 0, x\n", 2, ParseRule::RegLineShape);
    }

    #[test]
    fn syntax_errors_name_file_line_and_rule() {
        let cases: &[(&str, usize, ParseRule)] = &[
            ("A = 1\n", 1, ParseRule::EntryOutsideSection),
            ("[S]\n[Unclosed\n", 2, ParseRule::UnterminatedSectionHeader),
            ("[S]\n\n[  ]\n", 3, ParseRule::EmptySectionName),
            ("[S] x\n", 1, ParseRule::TextAfterSectionHeader),
            ("[S]\nA = \"open\n", 2, ParseRule::UnterminatedQuote),
            ("[S]\n = 1\n", 2, ParseRule::EmptyKey),
            (
                "[Strings]\nA = 1\na = 2\n",
                3,
                ParseRule::DuplicateStringKey,
            ),
            ("[Strings]\nno key\n", 2, ParseRule::EmptyKey),
        ];
        for &(text, line, rule) in cases {
            let e = parse_err(text);
            assert_eq!(
                (e.file.as_str(), e.line, e.rule),
                ("t.inf", line, rule),
                "{text:?}: {e}"
            );
            let shown = e.to_string();
            assert!(
                shown.starts_with(&format!("t.inf:{line}: ")) && shown.contains(rule.text()),
                "{shown}"
            );
        }
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number("0x1"), Some(1));
        assert_eq!(parse_number(" 0X0001000a "), Some(0x1000a));
        assert_eq!(parse_number("14"), Some(14));
        assert_eq!(parse_number("0x"), None);
        assert_eq!(parse_number("-1"), None);
        assert_eq!(parse_number("1a"), None);
    }

    #[test]
    fn crlf_line_ends_and_byte_order_marks() {
        let inf = parse("\u{feff}[S]\r\nA = 1 ; c\r\nB = \"x\"\r\n");
        let s = inf.section("S").expect("S");
        assert_eq!(s.directive("A").map(Entry::value), Some("1"));
        assert_eq!(s.directive("B").map(|e| e.line), Some(3));
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain(
                "[S]\r\nA = \u{e9}\r\n"
                    .encode_utf16()
                    .flat_map(u16::to_le_bytes),
            )
            .collect();
        assert_eq!(decode(&utf16).as_deref(), Ok("[S]\r\nA = \u{e9}\r\n"));
        assert!(decode(&[0xFF, 0xFE, 0x41]).is_err());
        assert!(decode(&[0xC3]).is_err());
        assert_eq!(decode(b"[S]").as_deref(), Ok("[S]"));
    }

    #[test]
    fn load_reports_io_errors_as_values() {
        let e = Inf::load(Path::new("/nonexistent/dcbndk.inx"), "x.inx").expect_err("no such file");
        assert_eq!(
            (e.file.as_str(), e.line, e.rule),
            ("x.inx", 0, ParseRule::Io)
        );
    }

    /// Every string of up to five characters over the syntax characters: the reader returns a
    /// value (parsed or an error), never panics.
    #[test]
    fn never_panics_on_short_inputs() {
        const ALPHABET: &[char] = &['[', ']', '"', ';', '%', '\\', '=', ',', 'a', '\n', ' '];
        let mut current: Vec<usize> = Vec::new();
        let mut count = 0usize;
        loop {
            let text: String = current.iter().filter_map(|&i| ALPHABET.get(i)).collect();
            for prefix in ["", "[S]\n", "[Strings]\na=1\n[S]\n"] {
                let full = format!("{prefix}{text}");
                if let Ok(inf) = Inf::parse("f.inf", &full) {
                    for s in inf.sections() {
                        let _ = inf.reg_lines(s);
                    }
                }
                count += 1;
            }
            // Next string in length-then-lexicographic order.
            let mut i = current.len();
            loop {
                if i == 0 {
                    if current.len() == 5 {
                        assert!(count > 500_000, "{count}");
                        return;
                    }
                    current = vec![0; current.len() + 1];
                    break;
                }
                i -= 1;
                if let Some(digit) = current.get_mut(i) {
                    *digit += 1;
                    if *digit < ALPHABET.len() {
                        break;
                    }
                    *digit = 0;
                }
            }
        }
    }
}
