//! What the package needs to know of its stamped INF: the files it names and the hardware ids it
//! installs on. The full reader and the project's INF rules are the test suite's
//! (`tests/src/inf.rs`, `tests/src/conformance/inf.rs`, which also checks the stamped INF); this
//! one reads only sections, keys and comma-separated fields ("General Syntax Rules for INF
//! Files": `;` comments outside quotes, `"` quotes, case-insensitive section names).

/// One `key = a, b` or `a, b` line.
#[derive(Debug)]
pub struct Entry {
    pub key: Option<String>,
    pub fields: Vec<String>,
}

/// The sections of an INF, in file order (a section named twice is one section).
#[derive(Debug)]
pub struct Inf {
    sections: Vec<(String, Vec<Entry>)>,
}

impl Inf {
    pub fn parse(text: &str) -> Self {
        let mut sections: Vec<(String, Vec<Entry>)> = Vec::new();
        let mut current: Option<usize> = None;
        for line in text.lines() {
            let code = strip_comment(line).trim();
            if code.is_empty() {
                continue;
            }
            if let Some(rest) = code.strip_prefix('[') {
                let name = rest.split(']').next().unwrap_or_default().trim().to_owned();
                let found = sections
                    .iter()
                    .position(|(n, _)| n.eq_ignore_ascii_case(&name));
                current = Some(found.unwrap_or_else(|| {
                    sections.push((name, Vec::new()));
                    sections.len() - 1
                }));
                continue;
            }
            let Some((_, entries)) = current.and_then(|i| sections.get_mut(i)) else {
                continue;
            };
            let (key, rest) = match split_unquoted(code, '=').as_slice() {
                [key, rest] => (Some(unquote(key)), (*rest).to_owned()),
                _ => (None, code.to_owned()),
            };
            let fields = split_unquoted(&rest, ',')
                .iter()
                .map(|f| unquote(f))
                .collect();
            entries.push(Entry { key, fields });
        }
        Self { sections }
    }

    pub fn section(&self, name: &str) -> Option<&[Entry]> {
        self.sections
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, e)| e.as_slice())
    }

    fn sections_starting(&self, prefix: &str) -> impl Iterator<Item = &[Entry]> {
        self.sections
            .iter()
            .filter(move |(n, _)| {
                n.get(..prefix.len())
                    .is_some_and(|p| p.eq_ignore_ascii_case(prefix))
            })
            .map(|(_, e)| e.as_slice())
    }

    /// The value of `key` in `[Version]`.
    pub fn version_value(&self, key: &str) -> Option<&str> {
        self.section("Version")?
            .iter()
            .find(|e| {
                e.key
                    .as_deref()
                    .is_some_and(|k| k.eq_ignore_ascii_case(key))
            })
            .and_then(|e| e.fields.first())
            .map(String::as_str)
    }

    /// Every file the INF copies or lists as a source (CopyFiles sections and `@file` entries,
    /// `[SourceDisksFiles*]`), in lower case, each once.
    pub fn source_files(&self) -> Vec<String> {
        let mut files: Vec<String> = Vec::new();
        let mut add = |name: &str| {
            let name = name.trim().to_ascii_lowercase();
            if !name.is_empty() && !files.contains(&name) {
                files.push(name);
            }
        };
        for (_, entries) in &self.sections {
            for entry in entries {
                if !entry
                    .key
                    .as_deref()
                    .is_some_and(|k| k.eq_ignore_ascii_case("CopyFiles"))
                {
                    continue;
                }
                for field in &entry.fields {
                    if let Some(file) = field.strip_prefix('@') {
                        add(file);
                        continue;
                    }
                    for copy in self.section(field).unwrap_or_default() {
                        // destination[, source]: the source name is the second field when given.
                        let source = copy.fields.get(1).filter(|s| !s.is_empty());
                        if let Some(name) = source.or(copy.fields.first()) {
                            add(name);
                        }
                    }
                }
            }
        }
        for entries in self.sections_starting("SourceDisksFiles") {
            for entry in entries {
                if let Some(key) = &entry.key {
                    add(key);
                }
            }
        }
        files
    }

    /// The hardware ids of the models sections for `decoration` (`NTamd64`, `NTarm64`), in
    /// file order, each once.
    pub fn hardware_ids(&self, decoration: &str) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        for manufacturer in self.section("Manufacturer").unwrap_or_default() {
            let Some((base, decorations)) = manufacturer.fields.split_first() else {
                continue;
            };
            for d in decorations {
                let ours = d
                    .get(..decoration.len())
                    .is_some_and(|p| p.eq_ignore_ascii_case(decoration));
                if !ours {
                    continue;
                }
                for model in self.section(&format!("{base}.{d}")).unwrap_or_default() {
                    for id in model.fields.get(1..).unwrap_or_default() {
                        if !id.is_empty() && !ids.iter().any(|i| i.eq_ignore_ascii_case(id)) {
                            ids.push(id.clone());
                        }
                    }
                }
            }
        }
        ids
    }
}

fn strip_comment(line: &str) -> &str {
    let mut quoted = false;
    for (at, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ';' if !quoted => return line.get(..at).unwrap_or_default(),
            _ => {}
        }
    }
    line
}

/// `text` split at `separator` outside quotes; `=` splits once.
fn split_unquoted(text: &str, separator: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut quoted = false;
    let mut start = 0;
    for (at, c) in text.char_indices() {
        if c == '"' {
            quoted = !quoted;
        } else if c == separator && !quoted {
            parts.push(text.get(start..at).unwrap_or_default());
            start = at + 1;
            if separator == '=' {
                break;
            }
        }
    }
    parts.push(text.get(start..).unwrap_or_default());
    parts
}

fn unquote(field: &str) -> String {
    let field = field.trim();
    match field.strip_prefix('"').and_then(|f| f.strip_suffix('"')) {
        Some(inner) => inner.replace("\"\"", "\""),
        None => field.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INF: &str = "\
[Version]
CatalogFile = dcbndk.cat ; the catalog
[Manufacturer]
%M% = Standard, NTamd64.10.0...16299, NTarm64.10.0...16299
[Standard.NTamd64.10.0...16299]
%A% = Install, root\\dcbndk
%B% = Install, root\\dcbndk_b, root\\compat
[standard.NTarm64.10.0...16299]
%A% = Install, root\\arm_only
[Install]
CopyFiles = Files, @extra.dll
[Files]
dcbndk.sys,,,2
renamed.sys, source.sys
[SourceDisksFiles]
dcbndk.sys = 1,,
\"quoted;name.bin\" = 1
";

    #[test]
    fn files_hardware_ids_and_version_values() {
        let inf = Inf::parse(INF);
        assert_eq!(inf.version_value("catalogfile"), Some("dcbndk.cat"));
        assert_eq!(
            inf.source_files(),
            ["dcbndk.sys", "source.sys", "extra.dll", "quoted;name.bin"]
        );
        assert_eq!(
            inf.hardware_ids("NTamd64"),
            ["root\\dcbndk", "root\\dcbndk_b", "root\\compat"]
        );
        assert_eq!(inf.hardware_ids("NTarm64"), ["root\\arm_only"]);
        assert!(inf.hardware_ids("NTx86").is_empty());
    }
}
