//! The linker's map file (lld-link `/MAP`, link.exe's format): the names of the image's code, so
//! that the stack table can say which functions a path runs through.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// Symbol names by RVA (the first name seen at an address wins; publics come before statics).
pub struct Symbols {
    by_rva: BTreeMap<u32, String>,
}

impl Symbols {
    /// Reads `path`, whose addresses are relative to `image_base`.
    pub fn read(path: &Path, image_base: u64) -> Result<Self, String> {
        let text = fs::read_to_string(path)
            .map_err(|error| format!("cannot read the map file {}: {error}", path.display()))?;
        let mut by_rva = BTreeMap::new();
        for line in text.lines() {
            // " 0001:000002a0       _RINv...   00000001800012a0     object"
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [section_offset, name, address, ..] = fields.as_slice() else {
                continue;
            };
            if !section_offset.contains(':') || name.starts_with("__imp_") {
                continue;
            }
            let Ok(address) = u64::from_str_radix(address, 16) else {
                continue;
            };
            let Some(rva) = address
                .checked_sub(image_base)
                .and_then(|rva| u32::try_from(rva).ok())
            else {
                continue;
            };
            by_rva.entry(rva).or_insert_with(|| demangle(name));
        }
        if by_rva.is_empty() {
            return Err(format!("{} names no symbol", path.display()));
        }
        Ok(Self { by_rva })
    }

    /// The name of the symbol at `rva`, or of the one before it with the offset.
    pub fn name(&self, rva: u32) -> String {
        match self.by_rva.range(..=rva).next_back() {
            Some((&start, name)) if start == rva => name.clone(),
            Some((&start, name)) => format!("{name}+{:#x}", rva - start),
            None => format!("rva {rva:#x}"),
        }
    }

    /// The RVA of the symbol called `name` (exactly, after demangling).
    pub fn rva(&self, name: &str) -> Option<u32> {
        self.by_rva
            .iter()
            .find_map(|(&rva, symbol)| (symbol == name).then_some(rva))
    }
}

/// A Rust symbol as a path without its hashes: `dcbndk::entry::initialize::miniport_initialize`.
fn demangle(symbol: &str) -> String {
    format!("{:#}", rustc_demangle::demangle(symbol))
}
