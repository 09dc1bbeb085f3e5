//! `hlk`: loads the dcbndk driver into the simulated ndis.sys and runs the HLK-style kit.
//!
//! ```text
//! hlk                      run every group
//! hlk --group Lifecycle    run one group (repeatable)
//! hlk --list               list the groups and their cases
//! hlk --json report.json   also write every case as JSON
//! ```
//! The exit status is 0 when every case passed (or was skipped), 1 when one failed, 2 on a usage
//! or I/O error.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Arg, ArgAction, Command};
use dcbndk_hlk::kit::{self, CaseReport, Status, Totals};
use dcbndk_hlk::sim::Sim;

/// The parsed command line.
struct Cli {
    group: Vec<String>,
    list: bool,
    json: Option<PathBuf>,
}

/// The command line, with clap's builder API: its derive macros emit an `allow` that the
/// workspace's forbidden unsafe lints refuse.
fn command() -> Command {
    Command::new("hlk")
        .version(env!("CARGO_PKG_VERSION"))
        .about("The dcbndk HLK-style conformance kit, run against the driver in the simulated ndis.sys")
        .arg(
            Arg::new("group")
                .long("group")
                .value_name("NAME")
                .action(ArgAction::Append)
                .help("Run only this group (may be given several times); see --list"),
        )
        .arg(Arg::new("list").long("list").action(ArgAction::SetTrue).help("List the groups and their cases, and exit"))
        .arg(
            Arg::new("json")
                .long("json")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .help("Write every case (group, name, status, reason, duration in seconds) to FILE as JSON"),
        )
}

fn parse() -> Cli {
    let m = command().get_matches();
    Cli {
        group: m
            .get_many::<String>("group")
            .map(|v| v.cloned().collect())
            .unwrap_or_default(),
        list: m.get_flag("list"),
        json: m.get_one::<PathBuf>("json").cloned(),
    }
}

fn main() -> ExitCode {
    let cli = parse();
    let groups = kit::groups();
    for name in &cli.group {
        if !groups.iter().any(|g| g.name.eq_ignore_ascii_case(name)) {
            let known: Vec<_> = groups.iter().map(|g| g.name).collect();
            eprintln!(
                "hlk: no group named {name:?}; the groups are: {}",
                known.join(", ")
            );
            return ExitCode::from(2);
        }
    }
    let selected: Vec<_> = groups
        .into_iter()
        .filter(|g| {
            cli.group.is_empty() || cli.group.iter().any(|n| g.name.eq_ignore_ascii_case(n))
        })
        .collect();

    if cli.list {
        for g in &selected {
            println!("{} — {}", g.name, g.description);
            for c in (g.cases)() {
                println!("  {}", c.name);
            }
        }
        return ExitCode::SUCCESS;
    }

    println!("dcbndk HLK-style kit: the driver runs in the simulated ndis.sys");
    match Sim::dcbndk() {
        Ok(d) => {
            let c = &d.characteristics;
            let handlers = [
                c.SetOptionsHandler.is_some(),
                c.InitializeHandlerEx.is_some(),
                c.HaltHandlerEx.is_some(),
                c.UnloadHandler.is_some(),
                c.PauseHandler.is_some(),
                c.RestartHandler.is_some(),
                c.OidRequestHandler.is_some(),
                c.SendNetBufferListsHandler.is_some(),
                c.ReturnNetBufferListsHandler.is_some(),
                c.CancelSendHandler.is_some(),
                c.CheckForHangHandlerEx.is_some(),
                c.ResetHandlerEx.is_some(),
                c.DevicePnPEventNotifyHandler.is_some(),
                c.ShutdownHandlerEx.is_some(),
                c.CancelOidRequestHandler.is_some(),
                c.DirectOidRequestHandler.is_some(),
                c.CancelDirectOidRequestHandler.is_some(),
            ]
            .iter()
            .filter(|h| **h)
            .count();
            let ndk = if dcbndk_hlk::sim::lock(&d.ndk).is_some() {
                ", NDK provider"
            } else {
                ""
            };
            println!(
                "DriverEntry registered an NDIS {}.{} miniport: characteristics revision {} ({} bytes), {handlers} handlers{ndk}\n",
                c.MajorNdisVersion, c.MinorNdisVersion, c.Header.Revision, c.Header.Size
            );
        }
        Err(e) => {
            eprintln!("hlk: the driver did not load: {e}");
            return ExitCode::from(1);
        }
    }

    let mut all: Vec<CaseReport> = Vec::new();
    let mut per_group = Vec::new();
    for g in &selected {
        println!("{} — {}", g.name, g.description);
        let reports = kit::run_group(g, |r| {
            let mark = match r.status {
                Status::Pass => "PASS",
                Status::Fail => "FAIL",
                Status::Skip => "SKIP",
            };
            if r.reason.is_empty() {
                println!("  {mark}  {}", r.name);
            } else {
                println!("  {mark}  {}\n        {}", r.name, r.reason);
            }
            let _ = std::io::stdout().flush();
        });
        per_group.push((g.name, Totals::of(&reports)));
        all.extend(reports);
        println!();
    }

    println!(
        "{:<14} {:>7} {:>7} {:>8} {:>9}",
        "group", "passed", "failed", "skipped", "time"
    );
    for (name, t) in &per_group {
        println!(
            "{:<14} {:>7} {:>7} {:>8} {:>8.2}s",
            name,
            t.passed,
            t.failed,
            t.skipped,
            t.time.as_secs_f64()
        );
    }
    let total = Totals::of(&all);
    println!(
        "{:<14} {:>7} {:>7} {:>8} {:>8.2}s",
        "total",
        total.passed,
        total.failed,
        total.skipped,
        total.time.as_secs_f64()
    );

    let failures: Vec<_> = all.iter().filter(|r| r.status == Status::Fail).collect();
    if !failures.is_empty() {
        println!("\nFailures:");
        for f in &failures {
            println!("  {} / {}: {}", f.group, f.name, f.reason);
        }
    }

    if let Some(path) = &cli.json {
        let written = serde_json::to_string_pretty(&all)
            .map_err(|e| e.to_string())
            .and_then(|text| std::fs::write(path, text + "\n").map_err(|e| e.to_string()));
        if let Err(e) = written {
            eprintln!(
                "hlk: cannot write the JSON report to {}: {e}",
                path.display()
            );
            return ExitCode::from(2);
        }
        println!("\nJSON report: {}", path.display());
    }
    println!(
        "\n{} passed, {} failed, {} skipped",
        total.passed, total.failed, total.skipped
    );
    if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
