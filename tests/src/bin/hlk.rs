//! `hlk`: loads the dcbndk driver into the simulated ndis.sys and runs the HLK-style kit.
//!
//! ```text
//! hlk                      run every group
//! hlk --group Lifecycle    run one group (repeatable)
//! hlk --list               list the groups and their cases
//! hlk --case "rate"        run only the cases whose name contains this (any case; repeatable)
//! hlk --json report.json   write every case as JSON here (default: target/hlk/report.json)
//! hlk --junit report.xml   write JUnit XML here (default: target/hlk/report.xml)
//! hlk --pcap DIR           write DIR/<group>.pcap: every frame on the wires of the groups
//!                          that capture (Dcbx, QosEts), for Wireshark
//! hlk --html FILE          write one self-contained HTML page of the run, with its figures
//!                          (rewritten after every case: a run that stops leaves what ran)
//! hlk scenario FILE        apply a scenario file, print the views and a diff against its own
//! ```
//! The exit status is 0 when every case passed (or was skipped; under `DCBNDK_REQUIRE_ALL=1` a
//! skip fails), 1 when one failed (or a scenario's views differ, or its request was refused
//! unexpectedly), 2 on a usage or I/O error (a `--pcap` directory or file or an `--html` file
//! that cannot be written among them) or a bad scenario file. Output has no colour: it
//! reads the same in a terminal and a CI log.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Arg, ArgAction, Command};
use dcbndk_hlk::html::{self, Page, Settings, View};
use dcbndk_hlk::kit::capture::{self, Sink};
use dcbndk_hlk::kit::{self, CaseReport, Status, Totals};
use dcbndk_hlk::scenario::{self, Scenario};
use dcbndk_hlk::sim::Sim;

/// The parsed command line.
struct Cli {
    group: Vec<String>,
    case: Vec<String>,
    list: bool,
    json: Option<PathBuf>,
    junit: Option<PathBuf>,
    pcap: Option<PathBuf>,
    html: Option<PathBuf>,
    scenario: Option<PathBuf>,
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
        .arg(
            Arg::new("case")
                .long("case")
                .value_name("TEXT")
                .action(ArgAction::Append)
                .help("Run only the cases whose name contains TEXT, ignoring case (may be given several times; with --group, within those groups); see --list"),
        )
        .arg(Arg::new("list").long("list").action(ArgAction::SetTrue).help("List the groups and their cases, and exit"))
        .arg(
            Arg::new("json")
                .long("json")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .help("Write every case (group, name, status, reason, seconds) as JSON [default: target/hlk/report.json]"),
        )
        .arg(
            Arg::new("junit")
                .long("junit")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .help("Write the cases as JUnit XML, one testsuite per group [default: target/hlk/report.xml]"),
        )
        .arg(
            Arg::new("pcap")
                .long("pcap")
                .value_name("DIR")
                .value_parser(clap::value_parser!(PathBuf))
                .help("Capture the virtual wires: write DIR/<group>.pcap (classic pcap, Ethernet, for Wireshark or tshark) for each group that captures (Dcbx, QosEts), every frame that crossed the wires of its cases, as a monitor adapter on each wire received it; DIR is made if missing")
                .long_help("Capture the virtual wires. For each group that captures (Dcbx, QosEts), write DIR/<group>.pcap: every frame that crossed the wires of its cases, one case after another, as a monitor adapter attached to each wire received it (another instance of the driver, *QOS 0, *NetworkDirect 0, promiscuous, its 802.1Q tags left in the frame). Classic libpcap format, LINKTYPE_ETHERNET, microsecond timestamps from the wire's virtual clock (millisecond resolution). MAC Control (PFC) frames are consumed by the receiving MAC and are not in it. DIR is made if missing. Without --pcap no monitor is attached."),
        )
        .arg(
            Arg::new("html")
                .long("html")
                .value_name("FILE")
                .global(true)
                .value_parser(clap::value_parser!(PathBuf))
                .help("Write one self-contained HTML page of the run (summary, cases, figures with their data, the scenario's views, settings); rewritten after every case, so a run that stops leaves the page of what ran"),
        )
        .subcommand(
            Command::new("scenario")
                .about("Apply a scenario file; print its views and a diff against the expected ones")
                .arg(
                    Arg::new("FILE")
                        .required(true)
                        .value_parser(clap::value_parser!(PathBuf))
                        .help("The scenario file; format in tests/scenarios/README.md"),
                ),
        )
        .after_help("Exit status: 0 all passed, 1 a case failed or a scenario differs, 2 usage, I/O error (a --pcap file or directory or the --html file among them) or bad scenario file. With DCBNDK_REQUIRE_ALL=1 in the environment a skipped case fails.")
}

fn parse() -> Cli {
    let m = command().get_matches();
    Cli {
        group: m
            .get_many::<String>("group")
            .map(|v| v.cloned().collect())
            .unwrap_or_default(),
        case: m
            .get_many::<String>("case")
            .map(|v| v.cloned().collect())
            .unwrap_or_default(),
        list: m.get_flag("list"),
        json: m.get_one::<PathBuf>("json").cloned(),
        junit: m.get_one::<PathBuf>("junit").cloned(),
        pcap: m.get_one::<PathBuf>("pcap").cloned(),
        html: m.get_one::<PathBuf>("html").cloned().or_else(|| {
            m.subcommand_matches("scenario")
                .and_then(|s| s.get_one::<PathBuf>("html").cloned())
        }),
        scenario: m
            .subcommand_matches("scenario")
            .and_then(|s| s.get_one::<PathBuf>("FILE").cloned()),
    }
}

/// Prints a scenario's views, and puts them on `page`; `Ok(true)` when it held.
fn show_views(s: &Scenario, page: Option<&mut Page>) -> Result<bool, String> {
    println!("Scenario {}: {}", s.name, s.description);
    println!("  file: {}", s.path.display());
    let out = scenario::run(s)?;
    if let Some(page) = page {
        let mut views = vec![View {
            command: format!("PS> Get-NetAdapterQos -Name {}", s.adapter_name),
            text: if out.qos.is_empty() {
                "(nothing: the adapter registered no QoS capability)".into()
            } else {
                out.qos.clone()
            },
        }];
        if !out.rdma.is_empty() {
            views.push(View {
                command: format!(
                    "PS> Get-NetAdapterRdma -Name {} | Format-List *",
                    s.adapter_name
                ),
                text: out.rdma.clone(),
            });
        }
        if !out.rdma_statistics.is_empty() {
            views.push(View {
                command: format!(
                    "PS> (Get-NetAdapterStatistics -Name {}).RdmaStatistics | Format-List *",
                    s.adapter_name
                ),
                text: out.rdma_statistics.clone(),
            });
        }
        page.views = Some((format!("scenario {}: {}", s.name, s.description), views));
        page.scenario_verdict = out.problems.iter().map(|p| format!("FAIL  {p}")).collect();
        if out.passed() {
            page.scenario_verdict
                .push(format!("PASS  scenario {}", s.name));
        }
    }
    match &out.request_status {
        Some(status) => println!("  OID_QOS_PARAMETERS from the DCB component: {status}"),
        None => println!("  OID_QOS_PARAMETERS from the DCB component: not sent"),
    }
    if s.peer.is_some() {
        println!("  DCBX peer: its TLVs handed to the adapter");
    }
    println!("\nPS> Get-NetAdapterQos -Name {}\n", s.adapter_name);
    if out.qos.is_empty() {
        println!("(nothing: the adapter registered no QoS capability)");
    } else {
        print!("{}", out.qos);
    }
    if !out.rdma.is_empty() {
        println!(
            "\nPS> Get-NetAdapterRdma -Name {} | Format-List *\n",
            s.adapter_name
        );
        print!("{}", out.rdma);
    }
    if let Some(w) = &s.ndk {
        println!("\nNDK workload: {}", w.summary());
    }
    if !out.rdma_statistics.is_empty() {
        println!(
            "\nPS> (Get-NetAdapterStatistics -Name {}).RdmaStatistics | Format-List *\n",
            s.adapter_name
        );
        print!("{}", out.rdma_statistics);
    }
    println!();
    if s.expected_qos.is_none() && s.expected_rdma.is_none() && s.expected_rdma_statistics.is_none()
    {
        println!("(the file has no expected view to compare with)");
    }
    for p in &out.problems {
        println!("FAIL  {p}");
    }
    if out.passed() {
        println!("PASS  scenario {}", s.name);
    }
    Ok(out.passed())
}

fn scenario_command(path: &std::path::Path, html_path: Option<&std::path::Path>) -> ExitCode {
    let s = match Scenario::load(path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("hlk: bad scenario file: {e}");
            return ExitCode::from(2);
        }
    };
    let mut page = html_path.map(|_| Page::new(settings()));
    if let (Some(path), Some(page)) = (html_path, &page)
        && let Err(e) = html::write(path, &page.render())
    {
        eprintln!("hlk: --html: {e}");
        return ExitCode::from(2);
    }
    let held = show_views(&s, page.as_mut());
    if let (Some(path), Some(page)) = (html_path, &mut page) {
        if let Err(e) = &held {
            page.scenario_verdict = vec![format!("FAIL  the scenario did not run: {e}")];
        }
        page.complete = true;
        if let Err(e) = html::write(path, &page.render()) {
            eprintln!("hlk: --html: {e}");
            return ExitCode::from(2);
        }
        println!("HTML report: {}", path.display());
    }
    match held {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("hlk: the scenario did not run: {e}");
            ExitCode::from(1)
        }
    }
}

/// This run's settings for the HTML page.
fn settings() -> Settings {
    let command: Vec<String> = std::env::args().collect();
    Settings::of_this_run(command.join(" "), dcbndk_hlk::sim::host::driver::describe())
}

fn main() -> ExitCode {
    let cli = parse();
    if let Some(path) = &cli.scenario {
        return scenario_command(path, cli.html.as_deref());
    }
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
        .filter(|g| {
            (g.cases)()
                .iter()
                .any(|c| kit::case_matches(&c.name, &cli.case))
        })
        .collect();
    if selected.is_empty() {
        eprintln!(
            "hlk: no case's name contains {:?}; see hlk --list",
            cli.case.join("\" or \"")
        );
        return ExitCode::from(2);
    }

    if cli.list {
        for g in &selected {
            println!("{} — {}", g.name, g.description);
            for c in (g.cases)()
                .iter()
                .filter(|c| kit::case_matches(&c.name, &cli.case))
            {
                println!("  {}", c.name);
            }
        }
        return ExitCode::SUCCESS;
    }

    if let Some(dir) = &cli.pcap
        && let Err(e) = capture::pcap_dir(dir)
    {
        eprintln!("hlk: {e}");
        return ExitCode::from(2);
    }

    // The page is written once before the first case: a path that cannot be written fails now,
    // not after the run.
    let mut page = cli.html.as_ref().map(|_| {
        let mut page = Page::new(settings());
        page.groups = selected
            .iter()
            .map(|g| (g.name.to_owned(), g.description.to_owned()))
            .collect();
        page
    });
    if let (Some(path), Some(page)) = (&cli.html, &page)
        && let Err(e) = html::write(path, &page.render())
    {
        eprintln!("hlk: --html: {e}");
        return ExitCode::from(2);
    }
    let mut html_failed = false;

    println!("dcbndk HLK-style kit: the driver runs in the simulated ndis.sys");
    println!(
        "driver under test: {}",
        dcbndk_hlk::sim::host::driver::describe()
    );
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
    let mut pcap_failed = false;
    let count = selected.len();
    for (index, g) in selected.iter().enumerate() {
        println!("{} — {}", g.name, g.description);
        // A sink per group (its file removed again if no case attached a capture).
        let sink = match cli
            .pcap
            .as_deref()
            .map(|dir| Sink::create(capture::group_file(dir, g.name)))
        {
            None => None,
            Some(Ok(sink)) => Some(sink),
            Some(Err(e)) => {
                eprintln!("hlk: --pcap: {e}");
                return ExitCode::from(2);
            }
        };
        let reports = capture::capturing(sink.as_ref(), || {
            kit::run_cases_matching(g, &cli.case, kit::require_all(), |r| {
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
                // After every case: a run that stops (a case that takes the process down)
                // leaves the page of what ran.
                if let (Some(path), Some(page)) = (&cli.html, &mut page) {
                    page.push(r.clone());
                    if !html_failed && let Err(e) = html::write(path, &page.render()) {
                        eprintln!("hlk: --html: {e}");
                        html_failed = true;
                    }
                }
            })
        });
        if let Some(sink) = &sink {
            match sink.close() {
                Ok(Some(frames)) => println!("  pcap: {} ({frames} frames)", sink.path().display()),
                Ok(None) => {}
                Err(e) => {
                    eprintln!("hlk: --pcap: {e}");
                    pcap_failed = true;
                }
            }
        }
        let t = Totals::of(&reports);
        println!(
            "[{}/{count}] {}: {} passed, {} failed, {} skipped in {:.2}s",
            index + 1,
            g.name,
            t.passed,
            t.failed,
            t.skipped,
            t.time.as_secs_f64()
        );
        per_group.push((g.name, t));
        all.extend(reports);
        println!();
    }

    // The name column fits the longest group name.
    let w = per_group
        .iter()
        .map(|(name, _)| name.len())
        .max()
        .unwrap_or(5)
        .max(5);
    println!(
        "{:<w$} {:>7} {:>7} {:>8} {:>9}",
        "group", "passed", "failed", "skipped", "time"
    );
    for (name, t) in &per_group {
        println!(
            "{:<w$} {:>7} {:>7} {:>8} {:>8.2}s",
            name,
            t.passed,
            t.failed,
            t.skipped,
            t.time.as_secs_f64()
        );
    }
    let total = Totals::of(&all);
    println!(
        "{:<w$} {:>7} {:>7} {:>8} {:>8.2}s",
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

    // Both reports are always written: where asked, else next to the binary (target/hlk/).
    let default_dir = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.join("hlk")))
        .unwrap_or_else(|| PathBuf::from("hlk-reports"));
    if (cli.json.is_none() || cli.junit.is_none())
        && let Err(e) = std::fs::create_dir_all(&default_dir)
    {
        eprintln!("hlk: cannot create {}: {e}", default_dir.display());
        return ExitCode::from(2);
    }
    let json = cli
        .json
        .clone()
        .unwrap_or_else(|| default_dir.join("report.json"));
    let junit = cli
        .junit
        .clone()
        .unwrap_or_else(|| default_dir.join("report.xml"));
    {
        let path = &json;
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
        println!("\nJSON report:  {}", path.display());
    }
    {
        let path = &junit;
        let written = dcbndk_hlk::junit::junit_xml(&all)
            .and_then(|xml| std::fs::write(path, xml).map_err(|e| e.to_string()));
        if let Err(e) = written {
            eprintln!(
                "hlk: cannot write the JUnit report to {}: {e}",
                path.display()
            );
            return ExitCode::from(2);
        }
        println!("JUnit report: {}", path.display());
    }

    // The default scenario's views, as a user would see them on Windows.
    let mut scenario_ok = true;
    if cli.group.is_empty() && cli.case.is_empty() {
        println!("\n{}", "-".repeat(80));
        scenario_ok = match Scenario::load(&scenario::default_scenario()) {
            Ok(s) => show_views(&s, page.as_mut()).unwrap_or_else(|e| {
                println!("FAIL  the default scenario did not run: {e}");
                false
            }),
            Err(e) => {
                println!("FAIL  {e}");
                false
            }
        };
    }
    if let (Some(path), Some(page)) = (&cli.html, &mut page) {
        page.complete = true;
        match html::write(path, &page.render()) {
            Ok(()) => println!("\nHTML report:  {}", path.display()),
            Err(e) => {
                eprintln!("hlk: --html: {e}");
                html_failed = true;
            }
        }
    }
    println!(
        "\n{} passed, {} failed, {} skipped",
        total.passed, total.failed, total.skipped
    );
    if pcap_failed || html_failed {
        eprintln!("hlk: a capture file or the HTML page could not be written (above)");
        ExitCode::from(2)
    } else if failures.is_empty() && scenario_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
