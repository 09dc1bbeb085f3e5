//! The x64 layout table: `abi/ndis-x64.tsv` (the reference rows, copied unchanged) and
//! `abi/supplement.tsv` (rows this project adds or overrides, each with its source and reason).
//!
//! Columns: `kind` (struct | field | const), `name`, `value_or_offset`, `size`, `align`, `note`.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// What a row describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A struct or union: `size` and `align`.
    Struct,
    /// A member: `value_or_offset` is the offset, `size` the member size.
    Field,
    /// A constant: `value_or_offset` is the value, `size` the C type's size.
    Const,
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The kind of item.
    pub kind: Kind,
    /// The C name (`TYPE.member.path` for fields).
    pub name: String,
    /// Offset or value.
    pub value: Option<i128>,
    /// Size in bytes.
    pub size: Option<usize>,
    /// Alignment in bytes.
    pub align: Option<usize>,
    /// Provenance and remarks.
    pub note: String,
    /// `file:line` the row came from.
    pub origin: String,
}

/// A malformed table: the file, the line and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableError(pub String);

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TableError {}

/// The merged table.
#[derive(Debug, Default)]
pub struct Table {
    rows: HashMap<(Kind, String), Row>,
}

fn parse_number(text: &str) -> Option<i128> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        return i128::from_str_radix(hex, 16).ok();
    }
    text.parse().ok()
}

fn parse_rows(text: &str, file: &str) -> Result<Vec<Row>, TableError> {
    let mut rows = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        let origin = format!("{file}:{line_no}");
        if line.trim().is_empty()
            || line.starts_with('#')
            || (line_no == 1 && line.starts_with("kind\t"))
        {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 5 {
            return Err(TableError(format!(
                "{origin}: expected at least 5 tab-separated columns, found {}",
                cols.len()
            )));
        }
        let kind = match cols[0] {
            "struct" => Kind::Struct,
            "field" => Kind::Field,
            "const" => Kind::Const,
            other => {
                return Err(TableError(format!(
                    "{origin}: unknown kind {other:?} (struct, field or const)"
                )));
            }
        };
        let number = |col: usize, what: &str| -> Result<Option<i128>, TableError> {
            let text = cols[col].trim();
            if text.is_empty() {
                return Ok(None);
            }
            parse_number(text)
                .map(Some)
                .ok_or_else(|| TableError(format!("{origin}: {what} {text:?} is not a number")))
        };
        let value = number(2, "value_or_offset")?;
        let size = number(3, "size")?.map(|v| v as usize);
        let align = number(4, "align")?.map(|v| v as usize);
        rows.push(Row {
            kind,
            name: cols[1].to_string(),
            value,
            size,
            align,
            note: cols.get(5).copied().unwrap_or("").to_string(),
            origin,
        });
    }
    Ok(rows)
}

impl Table {
    /// Where the project keeps its copy of the table.
    #[must_use]
    pub fn dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("abi")
    }

    /// Loads `abi/ndis-x64.tsv` and applies `abi/supplement.tsv`.
    ///
    /// # Errors
    /// A [`TableError`] naming the file and line of the first malformed row, or a supplement row
    /// that silently duplicates a reference row.
    pub fn load_project() -> Result<Self, TableError> {
        let read = |name: &str| {
            let path = Self::dir().join(name);
            std::fs::read_to_string(&path)
                .map_err(|e| TableError(format!("{}: {e}", path.display())))
        };
        Self::from_texts(&read("ndis-x64.tsv")?, &read("supplement.tsv")?)
    }

    /// Builds the table from the reference text and the supplement text.
    ///
    /// A supplement row whose kind and name already exist in the reference must say why in its
    /// note, starting with `override:`; any other supplement row must not exist in the reference.
    ///
    /// # Errors
    /// See [`Table::load_project`].
    pub fn from_texts(reference: &str, supplement: &str) -> Result<Self, TableError> {
        let mut table = Self::default();
        for row in parse_rows(reference, "ndis-x64.tsv")? {
            table.rows.insert((row.kind, row.name.clone()), row);
        }
        for row in parse_rows(supplement, "supplement.tsv")? {
            let key = (row.kind, row.name.clone());
            let overrides = row.note.starts_with("override:");
            match (table.rows.contains_key(&key), overrides) {
                (true, false) => {
                    return Err(TableError(format!(
                        "{}: {} is already in ndis-x64.tsv; an override's note must start with \"override:\" and say why",
                        row.origin, row.name
                    )));
                }
                (false, true) => {
                    return Err(TableError(format!(
                        "{}: {} overrides nothing in ndis-x64.tsv",
                        row.origin, row.name
                    )));
                }
                _ => {}
            }
            table.rows.insert(key, row);
        }
        Ok(table)
    }

    /// The row for `name` of `kind`.
    #[must_use]
    pub fn get(&self, kind: Kind, name: &str) -> Option<&Row> {
        self.rows.get(&(kind, name.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REF: &str = "kind\tname\tvalue_or_offset\tsize\talign\tnote\nstruct\tA\t0\t8\t4\tx\nconst\tB\t0xC0000001\t4\t\tx\n";

    #[test]
    fn parses_hex_and_decimal() {
        let t = Table::from_texts(REF, "").unwrap();
        assert_eq!(t.get(Kind::Struct, "A").unwrap().size, Some(8));
        assert_eq!(t.get(Kind::Const, "B").unwrap().value, Some(0xC000_0001));
    }

    #[test]
    fn supplement_must_say_override() {
        let err = Table::from_texts(REF, "struct\tA\t0\t16\t4\tadded\n").unwrap_err();
        assert!(
            err.0.contains("supplement.tsv:1") && err.0.contains("override:"),
            "{err}"
        );
        let t = Table::from_texts(REF, "struct\tA\t0\t16\t4\toverride: because\n").unwrap();
        assert_eq!(t.get(Kind::Struct, "A").unwrap().size, Some(16));
        let err = Table::from_texts(REF, "struct\tZ\t0\t16\t4\toverride: nothing\n").unwrap_err();
        assert!(err.0.contains("overrides nothing"), "{err}");
    }

    #[test]
    fn malformed_rows_name_file_and_line() {
        let err = Table::from_texts(REF, "\nstruct\tA2\tzz\t1\t1\tn\n").unwrap_err();
        assert_eq!(
            err.0,
            "supplement.tsv:2: value_or_offset \"zz\" is not a number"
        );
        let err = Table::from_texts("kind\tname\nthing\tA\t0\t1\t1\n", "").unwrap_err();
        assert!(err.0.starts_with("ndis-x64.tsv:2: unknown kind"), "{err}");
        let err = Table::from_texts("struct\tA\t0\n", "").unwrap_err();
        assert!(
            err.0.contains("ndis-x64.tsv:1: expected at least 5"),
            "{err}"
        );
    }
}
