//! The values the VM scripts expect Windows to show for the NDK side of an adapter
//! (`tests/windows/Test-DcbndkRdma.ps1`, table `$DcbndkRdmaExpected`) are the values the driver
//! gives NDIS: each row is compared with the `Get-NetAdapterRdma` view the simulated adapter
//! renders from its `NDIS_NDK_CAPABILITIES` and `NDK_ADAPTER_INFO` (`views::rdma`), first with
//! the INF's defaults, then with each keyword a row names set to another value (the row, and
//! only the rows bound to that keyword, must follow it). The keyword ranges and defaults the
//! scripts use (`Get-DcbndkKeywordValue -Keyword ... -Default ...`) must be the driver's
//! (`dcbndk_core::keywords::KEYWORDS`), and the counter list the `RdmaStatistics` view's.
//! The scripts cannot run here; this keeps what they compare with from drifting away from the
//! driver.

use std::collections::BTreeMap;
use std::path::Path;

use dcbndk_core::keywords::{KEYWORDS, KeywordType};

use crate::kit::{finish, started};
use crate::sim::Registry;
use crate::views::rdma::{RDMA_STATISTICS, get_net_adapter_rdma};

fn script(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("windows")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The lines of the list `<name> = @(` ... `)` of a script, up to the line that closes it
/// (a line ending in `)`; a line that is only `)` is not returned).
fn block<'a>(source: &'a str, name: &str) -> Vec<&'a str> {
    let opening = format!("{name} = @(");
    let mut lines = source.lines().skip_while(|l| l.trim() != opening);
    assert!(lines.next().is_some(), "no line '{opening}' in the script");
    let mut out = Vec::new();
    for line in lines {
        let trimmed = line.trim_end();
        if trimmed.trim() != ")" {
            out.push(line);
        }
        if trimmed.ends_with(')') {
            return out;
        }
    }
    panic!("the list {name} is not closed");
}

/// A value of a row: an integer or a boolean, as the view prints it.
fn value(text: &str) -> String {
    match text {
        "$true" => "True".to_string(),
        "$false" => "False".to_string(),
        n => {
            assert!(
                !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()),
                "not an integer, $true or $false: {n}"
            );
            n.to_string()
        }
    }
}

/// One row of `$DcbndkRdmaExpected`: `@{ Key = Value; ... }` as its keys and values (strings
/// unquoted).
fn rows(source: &str) -> Vec<BTreeMap<String, String>> {
    block(source, "$DcbndkRdmaExpected")
        .into_iter()
        .map(|line| {
            let inner = line
                .trim()
                .strip_prefix("@{")
                .and_then(|l| l.strip_suffix('}'))
                .unwrap_or_else(|| panic!("not a one-line hashtable: {line}"));
            inner
                .split(';')
                .map(|pair| {
                    let (k, v) = pair
                        .split_once('=')
                        .unwrap_or_else(|| panic!("not 'Key = Value': {pair}"));
                    let v = v.trim();
                    let v = v
                        .strip_prefix('\'')
                        .and_then(|v| v.strip_suffix('\''))
                        .map_or_else(|| value(v), str::to_string);
                    (k.trim().to_string(), v)
                })
                .collect()
        })
        .collect()
}

/// The view of a started simulated adapter, as (view, property) -> text, with the properties
/// named as Windows' classes name them: `RdmaAdapterInfo` (`MSFT_NetAdapter_RdmaAdapterInfo`)
/// has `MajorVersionNumber`/`MinorVersionNumber` where the view prints `NDKVersion 1.2`, and
/// decimal `VendorId`/`DeviceId` where it prints hex.
fn shown(registry: Registry) -> BTreeMap<(String, String), String> {
    let adapter = started(registry).expect("the simulated adapter starts");
    let ndk = adapter.attributes().ndk.expect("NDK attributes registered");
    let text = get_net_adapter_rdma(
        "dcbndk",
        "dcbndk",
        ndk.enabled,
        &ndk.capabilities,
        &ndk.info,
    )
    .expect("a complete view");
    finish(adapter).expect("a clean halt");
    let mut out = BTreeMap::new();
    let mut view = "Rdma";
    for line in text.lines() {
        if line == "RdmaAdapterInfo:" {
            view = "AdapterInfo";
            continue;
        }
        let Some((key, val)) = line.split_once(" : ") else {
            continue;
        };
        let (key, val) = (key.trim(), val.trim());
        let hex = |v: &str| {
            u64::from_str_radix(v.trim_start_matches("0x"), 16)
                .map(|n| n.to_string())
                .unwrap_or_else(|e| panic!("{key} = {v}: {e}"))
        };
        match (view, key) {
            ("AdapterInfo", "NDKVersion") => {
                let (major, minor) = val.split_once('.').expect("major.minor");
                out.insert((view.into(), "MajorVersionNumber".into()), major.into());
                out.insert((view.into(), "MinorVersionNumber".into()), minor.into());
            }
            ("AdapterInfo", "VendorId" | "DeviceId") => {
                out.insert((view.into(), key.into()), hex(val));
            }
            // Not capabilities: the adapter's identity, the NDK switch, the nested objects.
            (
                "Rdma",
                "Name"
                | "InterfaceDescription"
                | "Enabled"
                | "RdmaAdapterInfo"
                | "RdmaMissingCounterInfo",
            ) => {}
            _ => {
                out.insert((view.into(), key.into()), val.into());
            }
        }
    }
    out
}

/// What a row expects with the registry at the INF's defaults but keyword `set` = `to`.
fn expected(row: &BTreeMap<String, String>, set: Option<(&str, u32)>) -> String {
    match (row.get("Keyword"), set) {
        (Some(k), Some((name, to))) if k == name => to.to_string(),
        (Some(_), _) => row["Default"].clone(),
        (None, _) => row["Value"].clone(),
    }
}

fn int_keyword(name: &str) -> (u32, u32, u32) {
    let keyword = KEYWORDS
        .iter()
        .find(|k| k.name == name)
        .unwrap_or_else(|| panic!("{name} is not a keyword of the driver"));
    let KeywordType::Int { min, max, .. } = keyword.kind else {
        panic!("{name} is not an integer keyword");
    };
    (min, max, keyword.default.expect("a default"))
}

#[test]
fn test_dcbndk_rdma_expects_what_the_simulated_adapter_shows() {
    let source = script("Test-DcbndkRdma.ps1");
    let rows = rows(&source);
    assert!(rows.len() >= 20, "the table was not read: {rows:?}");

    // With the INF's defaults: every row equals the view, and every capability of the view has
    // a row (a property the driver adds to its view must be expected on Windows too).
    let defaults = shown(Registry::inf_defaults());
    let mut covered = Vec::new();
    for row in &rows {
        let key = (row["View"].clone(), row["Property"].clone());
        let view = defaults
            .get(&key)
            .unwrap_or_else(|| panic!("{key:?} is not in the view: {defaults:?}"));
        assert_eq!(&expected(row, None), view, "{key:?}");
        covered.push(key);
    }
    for key in defaults.keys() {
        assert!(covered.contains(key), "{key:?} is shown but not expected");
    }

    // Each keyword a row names: its range and default are the driver's, and setting it moves
    // exactly its rows.
    let mut keywords: Vec<&str> = rows
        .iter()
        .filter_map(|r| r.get("Keyword").map(String::as_str))
        .collect();
    keywords.sort_unstable();
    keywords.dedup();
    assert!(keywords.len() >= 5, "{keywords:?}");
    for name in keywords {
        let (min, max, default) = int_keyword(name);
        for row in rows
            .iter()
            .filter(|r| r.get("Keyword").map(String::as_str) == Some(name))
        {
            assert_eq!(row["Min"], min.to_string(), "{name} Min");
            assert_eq!(row["Max"], max.to_string(), "{name} Max");
            assert_eq!(row["Default"], default.to_string(), "{name} Default");
        }
        let to = if min + 1 != default { min + 1 } else { min };
        let mut registry = Registry::inf_defaults();
        registry.set_sz(name, &to.to_string());
        let moved = shown(registry);
        for row in &rows {
            let key = (row["View"].clone(), row["Property"].clone());
            assert_eq!(
                expected(row, Some((name, to))),
                moved[&key],
                "{key:?} with {name} = {to}"
            );
        }
    }
}

#[test]
fn test_dcbndk_rdma_lists_the_rdma_statistics_counters() {
    let source = script("Test-DcbndkRdma.ps1");
    let names: Vec<String> = block(&source, "$DcbndkRdmaCounters")
        .iter()
        .flat_map(|line| line.split('\'').skip(1).step_by(2))
        .map(str::to_string)
        .collect();
    assert_eq!(names, RDMA_STATISTICS.map(str::to_string).to_vec());
}

/// Every `-Keyword '<name>' -Default <n>` with `-Min <a> -Max <b>` or `-Choices @(...)`
/// written out in a script: (script, keyword, default, range or choices).
fn keyword_calls(name: &str, source: &str) -> Vec<(String, String, u32, Vec<u32>)> {
    let mut out = Vec::new();
    for line in source.lines() {
        let Some((_, rest)) = line.split_once("-Keyword '") else {
            continue;
        };
        let Some((keyword, rest)) = rest.split_once('\'') else {
            continue;
        };
        let words: Vec<&str> = rest.split_whitespace().collect();
        let number = |w: &str| w.trim_matches(|c| c == ',' || c == ')').parse::<u32>().ok();
        let Some(default) = words
            .iter()
            .position(|w| *w == "-Default")
            .and_then(|i| words.get(i + 1))
            .and_then(|w| number(w))
        else {
            continue; // the table-driven call: its values are the table's
        };
        let bounds: Vec<u32> = if let Some(i) = words.iter().position(|w| *w == "-Choices") {
            let mut choices = Vec::new();
            for w in &words[i + 1..] {
                let n = number(w.trim_start_matches("@("))
                    .unwrap_or_else(|| panic!("{name}: {line}: choice {w}"));
                choices.push(n);
                if w.ends_with(')') {
                    break;
                }
            }
            choices
        } else {
            let get = |flag: &str| {
                words
                    .iter()
                    .position(|w| *w == flag)
                    .and_then(|i| words.get(i + 1))
                    .and_then(|w| number(w))
                    .unwrap_or_else(|| panic!("{name}: {line}: no {flag}"))
            };
            vec![get("-Min"), get("-Max")]
        };
        out.push((name.to_string(), keyword.to_string(), default, bounds));
    }
    out
}

#[test]
fn the_scripts_read_keywords_with_the_drivers_ranges_and_defaults() {
    let mut calls = Vec::new();
    for name in [
        "DcbndkRdmaCommon.ps1",
        "Test-DcbndkRdma.ps1",
        "Test-SmbDirect.ps1",
        "Invoke-TestNetStack.ps1",
    ] {
        calls.extend(keyword_calls(name, &script(name)));
    }
    assert!(calls.len() >= 4, "{calls:?}");
    for (file, keyword, default, bounds) in &calls {
        let k = KEYWORDS
            .iter()
            .find(|k| k.name == keyword)
            .unwrap_or_else(|| panic!("{file}: {keyword} is not a keyword of the driver"));
        assert_eq!(k.default, Some(*default), "{file}: {keyword} default");
        let want: Vec<u32> = match k.kind {
            KeywordType::Enum(choices) => choices.iter().map(|(v, _)| *v).collect(),
            KeywordType::Int { min, max, .. } => vec![min, max],
            KeywordType::Edit { .. } => panic!("{keyword} is not a number"),
        };
        assert_eq!(bounds, &want, "{file}: {keyword} range or choices");
    }
}
