//! The kit's HTML report (`hlk --html FILE`): one self-contained page of a run. The summary
//! (failures first, linked), each group's cases with status, reason and notes, the figures the
//! cases recorded ([`crate::kit::record`]) as inline SVG drawn by plotters' SVG backend, each
//! beside a table of its data, the scenario's views as they print, and the run's settings.
//!
//! The page fetches nothing: its Content-Security-Policy (`default-src 'none'`) allows inline
//! style and script only, so a browser refuses, and reports, any request that a later change
//! might add. It reads without JavaScript (every group open); the small inline script only
//! filters the cases and opens or closes the groups. Every text from outside (names, reasons,
//! notes, views) is escaped. [`write()`] writes a temporary file beside the target and renames it
//! over the target, so that a reader never sees half a page.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::kit::{CaseReport, STATE_PAUSED, STATE_SENDING, Series, SeriesKind, Status, Totals};

/// The page's Content-Security-Policy: nothing but its own inline style and script.
pub const CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

/// The run's settings, shown on the page.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// The command line.
    pub command: String,
    /// The kit's (and driver's) version.
    pub version: String,
    /// The commit the kit was built from, when known.
    pub commit: String,
    /// What driver the kit ran (`sim::host::driver::describe`).
    pub driver: String,
    /// The environment variables that change the kit's defaults, as set for the run.
    pub environment: Vec<(String, String)>,
}

impl Settings {
    /// This process's settings: `command`, the version, the commit `git` reports for the
    /// current directory (`unknown` without one), and every `DCBNDK_*` variable and `CI`.
    #[must_use]
    pub fn of_this_run(command: String, driver: String) -> Self {
        let commit = std::process::Command::new("git")
            .args(["rev-parse", "--short=12", "HEAD"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map_or_else(|| "unknown".to_owned(), |s| s.trim().to_owned());
        let mut environment: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
            .filter(|(k, _)| k.starts_with("DCBNDK_") || k == "CI")
            .collect();
        environment.sort();
        Self {
            command,
            version: env!("CARGO_PKG_VERSION").to_owned(),
            commit,
            driver,
            environment,
        }
    }
}

/// One view of the scenario: the command that prints it and what it printed.
#[derive(Debug, Clone)]
pub struct View {
    /// `PS> Get-NetAdapterQos -Name ...`.
    pub command: String,
    /// Its output.
    pub text: String,
}

/// A page being built: the cases as they finish, each with its figures already drawn.
#[derive(Debug, Default)]
pub struct Page {
    /// The run's settings.
    pub settings: Settings,
    /// The groups that run, in order: name and description.
    pub groups: Vec<(String, String)>,
    /// The cases that ran, each with the HTML of its figures.
    cases: Vec<(CaseReport, String)>,
    /// The scenario's title and views.
    pub views: Option<(String, Vec<View>)>,
    /// Lines on the scenario's verdict (its problems, or that it held).
    pub scenario_verdict: Vec<String>,
    /// Whether the run is over (else the page says it stopped after its last case).
    pub complete: bool,
}

impl Page {
    /// An empty page of a run with `settings`.
    #[must_use]
    pub fn new(settings: Settings) -> Self {
        Self {
            settings,
            ..Self::default()
        }
    }

    /// Adds a case that finished, drawing its figures now (once).
    pub fn push(&mut self, report: CaseReport) {
        let figures = figures_html(&report.series, self.cases.len());
        self.cases.push((report, figures));
    }

    /// The cases so far.
    pub fn reports(&self) -> impl Iterator<Item = &CaseReport> {
        self.cases.iter().map(|(r, _)| r)
    }

    /// The page's HTML.
    #[must_use]
    pub fn render(&self) -> String {
        let mut h = String::with_capacity(64 * 1024);
        let total = Totals::of(self.reports());
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\
             <meta name=\"viewport\" content=\"width=device-width\">\
             <title>dcbndk kit: {} passed, {} failed, {} skipped</title><style>{STYLE}</style></head><body>\n",
            total.passed, total.failed, total.skipped
        );
        let _ = write!(
            h,
            "<header><h1>dcbndk HLK-style kit</h1><p class=\"totals\" id=\"totals\">{} passed, {} failed, {} skipped in {:.2} s</p>",
            total.passed,
            total.failed,
            total.skipped,
            total.time.as_secs_f64()
        );
        if !self.complete {
            let last = self.cases.last().map_or_else(
                || "before its first case".to_owned(),
                |(r, _)| format!("after {} / {}", r.group, r.name),
            );
            let _ = write!(
                h,
                "<p class=\"incomplete\" id=\"incomplete\"><strong>Incomplete:</strong> the run stopped {}; this page shows what ran.</p>",
                esc(&last)
            );
        }
        h.push_str(
            "<nav class=\"tools\" id=\"tools\" hidden><label>Filter cases <input id=\"filter\" type=\"search\"></label> \
             <label><input id=\"failed-only\" type=\"checkbox\"> failed only</label> \
             <button id=\"open-all\" type=\"button\">open all</button> <button id=\"close-all\" type=\"button\">close all</button></nav></header>\n",
        );
        self.failures(&mut h);
        self.summary(&mut h);
        self.groups_html(&mut h);
        self.views_html(&mut h);
        self.settings_html(&mut h);
        let _ = write!(h, "<script>{SCRIPT}</script>\n</body></html>\n");
        h
    }

    /// The failed cases, first on the page, each linked to its row.
    fn failures(&self, h: &mut String) {
        let failed: Vec<_> = self
            .cases
            .iter()
            .enumerate()
            .filter(|(_, (r, _))| r.status == Status::Fail)
            .collect();
        if failed.is_empty() && self.scenario_verdict.iter().all(|l| !l.starts_with("FAIL")) {
            return;
        }
        h.push_str("<section id=\"failures\" class=\"failures\"><h2>Failures</h2><ul>");
        for (i, (r, _)) in failed {
            let _ = write!(
                h,
                "<li><a href=\"#case-{i}\"><span class=\"group\">{}</span> / {}</a>: {}</li>",
                esc(&r.group),
                esc(&r.name),
                esc(&r.reason)
            );
        }
        for line in self
            .scenario_verdict
            .iter()
            .filter(|l| l.starts_with("FAIL"))
        {
            let _ = write!(h, "<li><a href=\"#views\">scenario</a>: {}</li>", esc(line));
        }
        h.push_str("</ul></section>\n");
    }

    /// The groups that ran, in the page's order: those with a failure first.
    fn group_order(&self) -> Vec<(usize, &str, &str)> {
        let mut names: Vec<(usize, &str, &str)> = Vec::new();
        for (r, _) in &self.cases {
            if !names.iter().any(|(_, n, _)| *n == r.group) {
                let description = self
                    .groups
                    .iter()
                    .find(|(n, _)| *n == r.group)
                    .map_or("", |(_, d)| d.as_str());
                names.push((names.len(), r.group.as_str(), description));
            }
        }
        let failed = |g: &str| {
            self.cases
                .iter()
                .any(|(r, _)| r.group == g && r.status == Status::Fail)
        };
        names.sort_by_key(|(i, n, _)| (!failed(n), *i));
        names
    }

    fn summary(&self, h: &mut String) {
        h.push_str(
            "<section id=\"summary\"><h2>Summary</h2><table class=\"summary\"><thead><tr><th scope=\"col\">group</th><th scope=\"col\">passed</th><th scope=\"col\">failed</th><th scope=\"col\">skipped</th><th scope=\"col\">time (s)</th></tr></thead><tbody>",
        );
        for (i, name, _) in self.group_order() {
            let t = Totals::of(self.reports().filter(|r| r.group == name));
            let class = if t.failed > 0 { " class=\"fail\"" } else { "" };
            let _ = write!(
                h,
                "<tr{class}><th scope=\"row\"><a href=\"#group-{i}\">{}</a></th><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td></tr>",
                esc(name),
                t.passed,
                t.failed,
                t.skipped,
                t.time.as_secs_f64()
            );
        }
        let t = Totals::of(self.reports());
        let _ = write!(
            h,
            "</tbody><tfoot><tr><th scope=\"row\">total</th><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td></tr></tfoot></table></section>",
            t.passed,
            t.failed,
            t.skipped,
            t.time.as_secs_f64()
        );
        h.push('\n');
    }

    fn groups_html(&self, h: &mut String) {
        for (gi, name, description) in self.group_order() {
            let t = Totals::of(self.reports().filter(|r| r.group == name));
            let _ = write!(
                h,
                "<section class=\"group\" id=\"group-{gi}\" data-group=\"{}\"><details open><summary><h2>{}</h2> <span class=\"counts\">{} passed, {} failed, {} skipped</span></summary><p class=\"description\">{}</p><table class=\"cases\"><thead><tr><th scope=\"col\">status</th><th scope=\"col\">case</th><th scope=\"col\">reason or notes</th><th scope=\"col\">time (s)</th></tr></thead>",
                esc(name),
                esc(name),
                t.passed,
                t.failed,
                t.skipped,
                esc(description)
            );
            for (i, (r, figures)) in self
                .cases
                .iter()
                .enumerate()
                .filter(|(_, (r, _))| r.group == name)
            {
                let (mark, class) = match r.status {
                    Status::Pass => ("PASS", "pass"),
                    Status::Fail => ("FAIL", "fail"),
                    Status::Skip => ("SKIP", "skip"),
                };
                let _ = write!(
                    h,
                    "<tbody class=\"case {class}\" id=\"case-{i}\"><tr><td class=\"status\">{mark}</td><th scope=\"row\" class=\"name\">{}</th><td class=\"reason\">{}</td><td class=\"time\">{:.3}</td></tr>",
                    esc(&r.name),
                    esc(&r.reason),
                    r.duration
                );
                if !figures.is_empty() {
                    let _ = write!(
                        h,
                        "<tr class=\"figures\"><td colspan=\"4\">{figures}</td></tr>"
                    );
                }
                h.push_str("</tbody>");
            }
            h.push_str("</table></details></section>\n");
        }
    }

    fn views_html(&self, h: &mut String) {
        let Some((title, views)) = &self.views else {
            return;
        };
        let _ = write!(h, "<section id=\"views\"><h2>Views: {}</h2>", esc(title));
        for v in views {
            let _ = write!(
                h,
                "<h3><code>{}</code></h3><pre>{}</pre>",
                esc(&v.command),
                esc(&v.text)
            );
        }
        for line in &self.scenario_verdict {
            let _ = write!(h, "<p class=\"verdict\">{}</p>", esc(line));
        }
        h.push_str("</section>\n");
    }

    fn settings_html(&self, h: &mut String) {
        let s = &self.settings;
        let _ = write!(
            h,
            "<section id=\"settings\"><h2>Settings</h2><table class=\"settings\"><tbody>\
             <tr><th scope=\"row\">command</th><td><code>{}</code></td></tr>\
             <tr><th scope=\"row\">version</th><td>{}</td></tr>\
             <tr><th scope=\"row\">commit</th><td>{}</td></tr>\
             <tr><th scope=\"row\">driver</th><td>{}</td></tr>",
            esc(&s.command),
            esc(&s.version),
            esc(&s.commit),
            esc(&s.driver)
        );
        if s.environment.is_empty() {
            h.push_str(
                "<tr><th scope=\"row\">environment</th><td>no variable changed a default</td></tr>",
            );
        }
        for (k, v) in &s.environment {
            let _ = write!(
                h,
                "<tr><th scope=\"row\">environment</th><td><code>{}={}</code></td></tr>",
                esc(k),
                esc(v)
            );
        }
        h.push_str("</tbody></table></section>\n");
    }
}

/// Writes `html` to `path`: into a temporary file beside it, then renamed over it.
///
/// # Errors
/// A one-line message naming the path.
pub fn write(path: &Path, html: &str) -> Result<(), String> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| format!("cannot write {}: not a file name", path.display()))?;
    let temp: PathBuf = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&temp, html)
        .and_then(|()| std::fs::rename(&temp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&temp);
            format!("cannot write {}: {e}", path.display())
        })
}

/// Escapes `text` for HTML text and attribute values.
#[must_use]
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters other than tab and newline are not text.
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// `text` without control characters (each replaced as [`esc`] replaces it), for the figures:
/// plotters escapes markup in its SVG text, not those.
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect()
}

/// The figures of one case's series (grouped by their `figure`, in first-seen order), each an
/// SVG with its data table beside it; `case` makes their ids unique on the page.
#[must_use]
pub fn figures_html(series: &[Series], case: usize) -> String {
    let mut titles: Vec<&str> = Vec::new();
    for s in series {
        if !titles.contains(&s.figure.as_str()) {
            titles.push(&s.figure);
        }
    }
    let mut h = String::new();
    for (k, title) in titles.into_iter().enumerate() {
        let members: Vec<&Series> = series.iter().filter(|s| s.figure == title).collect();
        let Some(first) = members.first() else {
            continue;
        };
        let id = format!("fig-{case}-{k}");
        let svg = match svg(title, &members) {
            Ok(svg) => svg,
            Err(e) => format!(
                "<p class=\"error\">the figure could not be drawn: {}</p>",
                esc(&e)
            ),
        };
        let names: Vec<String> = members.iter().map(|s| esc(&s.name)).collect();
        let _ = write!(
            h,
            "<figure class=\"figure\" id=\"{id}\" data-x=\"{}\" data-y=\"{}\" data-series=\"{}\" data-names=\"{}\"><figcaption>{}</figcaption><div class=\"plot\">{svg}<div class=\"data\">{}</div></div></figure>",
            esc(&first.x),
            esc(&first.y),
            members.len(),
            names.join("|"),
            esc(title),
            table(&members)
        );
    }
    h
}

/// A figure's data: one row per point, the series' names as columns (a timeline's states by
/// name).
fn table(members: &[&Series]) -> String {
    let Some(first) = members.first() else {
        return String::new();
    };
    let mut h = String::from("<table class=\"figure-data\"><caption>data</caption><thead><tr>");
    let y = if first.kind == SeriesKind::Timeline {
        "state"
    } else {
        first.y.as_str()
    };
    let _ = write!(
        h,
        "<th scope=\"col\">series</th><th scope=\"col\">{}</th><th scope=\"col\">{}</th></tr></thead><tbody>",
        esc(&first.x),
        esc(y)
    );
    for s in members {
        for (i, p) in s.points.iter().enumerate() {
            let x = match (s.kind, s.labels.get(i)) {
                (_, Some(label)) => esc(label),
                (SeriesKind::Rule, None) => "(all)".to_owned(),
                _ => number(p[0]),
            };
            let y = if s.kind == SeriesKind::Timeline {
                state_name(p[1]).to_owned()
            } else {
                number(p[1])
            };
            let _ = write!(
                h,
                "<tr><th scope=\"row\">{}</th><td>{x}</td><td>{y}</td></tr>",
                esc(&s.name)
            );
        }
    }
    h.push_str("</tbody></table>");
    h
}

fn state_name(state: f64) -> &'static str {
    if state == STATE_PAUSED {
        "paused"
    } else if state == STATE_SENDING {
        "sending"
    } else {
        "idle"
    }
}

/// A value as the tables show it: up to 4 significant places, no exponent below 10^9.
fn number(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    if v == v.trunc() && v.abs() < 1e9 {
        return format!("{v:.0}");
    }
    let places = (3 - v.abs().log10().floor() as i32).clamp(0, 6);
    format!("{v:.*}", places as usize)
}

/// An axis value on a tick: short, with k, M and G above 1,000.
fn tick(v: f64) -> String {
    let a = v.abs();
    let (scaled, unit) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let text = format!("{scaled:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}{unit}")
}

/// Fills and strokes that stay apart in grey-scale: from dark to light, each series also with
/// its own marker.
const PALETTE: [RGBColor; 6] = [
    RGBColor(0x1a, 0x1a, 0x1a),
    RGBColor(0xe6, 0x9f, 0x00),
    RGBColor(0x00, 0x72, 0xb2),
    RGBColor(0xa0, 0xa0, 0xa0),
    RGBColor(0x56, 0xb4, 0xe9),
    RGBColor(0x7a, 0x3b, 0x8f),
];

fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Width and height of a figure, px.
const SIZE: (u32, u32) = (720, 360);

/// The SVG of one figure.
fn svg(title: &str, members: &[&Series]) -> Result<String, String> {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        if members.iter().any(|s| s.kind == SeriesKind::Timeline) {
            timeline(&root, members)?;
        } else if members.iter().any(|s| s.kind == SeriesKind::Bar) {
            bars(&root, members)?;
        } else {
            lines(&root, members)?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    // The figure's title for screen readers, first in the SVG.
    let at = buf.find('>').map_or(0, |i| i + 1);
    buf.insert_str(at, &format!("<title>{}</title>", esc(title)));
    Ok(buf)
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// The range of `values` with a margin, never empty (all finite values only).
fn range(values: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        (lo, hi) = (0.0, 1.0);
    }
    if from_zero {
        lo = lo.min(0.0);
    }
    if hi - lo < 1e-9 {
        hi = lo + 1.0;
    }
    let pad = (hi - lo) * 0.05;
    (if from_zero && lo >= 0.0 { lo } else { lo - pad }, hi + pad)
}

/// Lines with markers, and rules across; a logarithmic x axis when it spans two decades or more
/// (message sizes), and y too.
fn lines(root: &Area<'_>, members: &[&Series]) -> Result<(), String> {
    let first = members.first().ok_or("no series")?;
    let xs = || {
        members
            .iter()
            .filter(|s| s.kind != SeriesKind::Rule)
            .flat_map(|s| s.points.iter().map(|p| p[0]))
    };
    let ys = || members.iter().flat_map(|s| s.points.iter().map(|p| p[1]));
    let log = |values: &mut dyn Iterator<Item = f64>| {
        let (mut lo, mut hi, mut positive) = (f64::MAX, f64::MIN, true);
        for v in values {
            positive &= v > 0.0;
            lo = lo.min(v);
            hi = hi.max(v);
        }
        positive && lo > 0.0 && hi / lo >= 100.0
    };
    let (log_x, log_y) = (log(&mut xs()), log(&mut ys()));
    let fx = move |v: f64| if log_x { v.log10() } else { v };
    let fy = move |v: f64| if log_y { v.log10() } else { v };
    let (x0, x1) = range(xs().map(fx), false);
    let (y0, y1) = range(ys().map(fy), !log_y);
    let y1 = headroom(y0, y1, members.len());
    let mut chart = ChartBuilder::on(root)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|e| e.to_string())?;
    let x_label = if log_x {
        format!("{} (log scale)", clean(&first.x))
    } else {
        clean(&first.x)
    };
    let y_label = if log_y {
        format!("{} (log scale)", clean(&first.y))
    } else {
        clean(&first.y)
    };
    // A logarithmic axis names its decades only (its other ticks stay unlabelled).
    let decade = |v: f64| {
        if (v - v.round()).abs() < 1e-6 {
            tick(10f64.powf(v.round()))
        } else {
            String::new()
        }
    };
    let unlog_x = move |v: &f64| if log_x { decade(*v) } else { tick(*v) };
    let unlog_y = move |v: &f64| if log_y { decade(*v) } else { tick(*v) };
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .x_labels(if log_x { 20 } else { 10 })
        .y_labels(if log_y { 20 } else { 10 })
        .x_label_formatter(&unlog_x)
        .y_label_formatter(&unlog_y)
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .axis_desc_style(("sans-serif", 14))
        .draw()
        .map_err(|e| e.to_string())?;
    for (i, s) in members.iter().enumerate() {
        let c = colour(i);
        let style = c.stroke_width(2);
        match s.kind {
            SeriesKind::Rule => {
                for p in &s.points {
                    let y = fy(p[1]);
                    chart
                        .draw_series(DashedLineSeries::new([(x0, y), (x1, y)], 8, 5, style))
                        .map_err(|e| e.to_string())?
                        .label(clean(&s.name))
                        .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], style));
                }
            }
            _ => {
                let points: Vec<(f64, f64)> =
                    s.points.iter().map(|p| (fx(p[0]), fy(p[1]))).collect();
                chart
                    .draw_series(LineSeries::new(points.iter().copied(), style))
                    .map_err(|e| e.to_string())?
                    .label(clean(&s.name))
                    .legend(move |(x, y)| {
                        EmptyElement::at((x + 8, y))
                            + PathElement::new([(-8, 0), (8, 0)], style)
                            + marker(i, c)
                    });
                chart
                    .draw_series(points.iter().map(|&p| EmptyElement::at(p) + marker(i, c)))
                    .map_err(|e| e.to_string())?;
            }
        }
    }
    legend(&mut chart)
}

/// The top of a y range `y0..y1` with room above the data for a legend of `entries` lines, so
/// that it covers none of it.
fn headroom(y0: f64, y1: f64, entries: usize) -> f64 {
    let plot_px = f64::from(SIZE.1) - 70.0;
    let fraction = ((18.0 * entries as f64 + 16.0) / plot_px).min(0.6);
    y0 + (y1 - y0) / (1.0 - fraction)
}

/// The marker of series `i`: a shape of its own, so that lines stay apart without colour.
fn marker<DB: DrawingBackend>(i: usize, c: RGBColor) -> DynElement<'static, DB, (i32, i32)> {
    match i % 4 {
        0 => Circle::new((0, 0), 4, c.filled()).into_dyn(),
        1 => TriangleMarker::new((0, 0), 5, c.filled()).into_dyn(),
        2 => Rectangle::new([(-4, -4), (4, 4)], c.stroke_width(2)).into_dyn(),
        _ => Cross::new((0, 0), 4, c.stroke_width(2)).into_dyn(),
    }
}

fn legend<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
) -> Result<(), String>
where
    X: Ranged,
    Y: Ranged,
{
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(|e| e.to_string())
}

/// Bars side by side at each category (the first labelled series' labels name them), rules
/// across.
fn bars(root: &Area<'_>, members: &[&Series]) -> Result<(), String> {
    let first = members.first().ok_or("no series")?;
    let bar_series: Vec<&&Series> = members
        .iter()
        .filter(|s| s.kind == SeriesKind::Bar)
        .collect();
    let categories = bar_series
        .iter()
        .map(|s| s.points.len())
        .max()
        .unwrap_or(0)
        .max(1);
    let labels: Vec<String> = bar_series
        .iter()
        .find(|s| !s.labels.is_empty())
        .map(|s| s.labels.iter().map(|l| clean(l)).collect())
        .unwrap_or_default();
    let (_, y1) = range(
        members.iter().flat_map(|s| s.points.iter().map(|p| p[1])),
        true,
    );
    let y1 = headroom(0.0, y1, members.len());
    let x1 = categories as f64 - 0.5;
    let mut chart = ChartBuilder::on(root)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5..x1, 0.0..y1)
        .map_err(|e| e.to_string())?;
    let name_of = move |v: &f64| {
        let i = v.round();
        if (v - i).abs() > 0.01 || i < 0.0 {
            return String::new();
        }
        labels.get(i as usize).cloned().unwrap_or_else(|| tick(i))
    };
    chart
        .configure_mesh()
        .x_desc(clean(&first.x))
        .y_desc(clean(&first.y))
        .x_labels(categories * 4 + 1)
        .x_label_formatter(&name_of)
        .y_label_formatter(&|v| tick(*v))
        .disable_x_mesh()
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .axis_desc_style(("sans-serif", 14))
        .draw()
        .map_err(|e| e.to_string())?;
    let n = bar_series.len().max(1) as f64;
    let width = 0.8 / n;
    for (i, s) in members.iter().enumerate() {
        let c = colour(i);
        match s.kind {
            SeriesKind::Rule | SeriesKind::Line => {
                let style = c.stroke_width(2);
                for p in &s.points {
                    let y = p[1];
                    chart
                        .draw_series(DashedLineSeries::new([(-0.5, y), (x1, y)], 8, 5, style))
                        .map_err(|e| e.to_string())?
                        .label(clean(&s.name))
                        .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], style));
                }
            }
            _ => {
                let k = bar_series
                    .iter()
                    .position(|b| std::ptr::eq(**b, *s))
                    .unwrap_or(0) as f64;
                let rects = s.points.iter().map(move |p| {
                    let left = p[0] - 0.4 + k * width;
                    Rectangle::new([(left, 0.0), (left + width * 0.92, p[1])], c.filled())
                });
                chart
                    .draw_series(rects)
                    .map_err(|e| e.to_string())?
                    .label(clean(&s.name))
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled())
                    });
                // Outlines: a light bar stays visible on white paper.
                chart
                    .draw_series(s.points.iter().map(move |p| {
                        let left = p[0] - 0.4 + k * width;
                        Rectangle::new(
                            [(left, 0.0), (left + width * 0.92, p[1])],
                            BLACK.stroke_width(1),
                        )
                    }))
                    .map_err(|e| e.to_string())?;
            }
        }
    }
    legend(&mut chart)
}

/// One row per series; paused black, sending grey, idle left white.
fn timeline(root: &Area<'_>, members: &[&Series]) -> Result<(), String> {
    let first = members.first().ok_or("no series")?;
    let (x0, x1) = range(
        members.iter().flat_map(|s| s.points.iter().map(|p| p[0])),
        true,
    );
    let rows = members.len();
    let names: Vec<String> = members.iter().map(|s| clean(&s.name)).collect();
    let mut chart = ChartBuilder::on(root)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(90)
        .build_cartesian_2d(x0..x1, -0.5..headroom(-0.5, rows as f64 - 0.5, 2))
        .map_err(|e| e.to_string())?;
    let row_name = move |v: &f64| {
        let i = v.round();
        if (v - i).abs() > 0.01 || i < 0.0 {
            return String::new();
        }
        names.get(i as usize).cloned().unwrap_or_default()
    };
    chart
        .configure_mesh()
        .x_desc(clean(&first.x))
        .y_desc(clean(&first.y))
        .y_labels(rows * 4 + 1)
        .y_label_formatter(&row_name)
        .x_label_formatter(&|v| tick(*v))
        .disable_y_mesh()
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .axis_desc_style(("sans-serif", 14))
        .draw()
        .map_err(|e| e.to_string())?;
    let paused = BLACK;
    let sending = RGBColor(0xa8, 0xa8, 0xa8);
    let mut shown = [false; 2];
    for (row, s) in members.iter().enumerate() {
        let y = row as f64;
        for w in s.points.windows(2) {
            let (from, to, state) = (w[0][0], w[1][0], w[0][1]);
            let (c, k, label) = if state == STATE_PAUSED {
                (paused, 0, "paused (PFC quanta)")
            } else if state == STATE_SENDING {
                (sending, 1, "sending (frames received that ms)")
            } else {
                continue;
            };
            let drawn = chart
                .draw_series([Rectangle::new([(from, y - 0.3), (to, y + 0.3)], c.filled())])
                .map_err(|e| e.to_string())?;
            if !shown[k] {
                shown[k] = true;
                drawn.label(label).legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled())
                });
            }
        }
    }
    if shown.iter().any(|s| *s) {
        legend(&mut chart)?;
    }
    Ok(())
}

const STYLE: &str = "\
body{font-family:sans-serif;margin:1.5em;color:#111;background:#fff;max-width:1400px}\
h1{margin:0 0 .2em}h2{font-size:1.25em;margin:.2em 0;display:inline}section{margin:1.2em 0}\
.totals{font-size:1.1em;font-weight:bold}.incomplete{border:3px double #000;padding:.4em}\
table{border-collapse:collapse}th,td{border:1px solid #999;padding:.2em .45em;text-align:left;vertical-align:top}\
.summary td{text-align:right}tr.fail th,tbody.fail .status{font-weight:bold;text-decoration:underline}\
.failures{border:3px solid #000;padding:.5em 1em}.failures h2{display:block}\
.status{font-family:monospace;font-weight:bold}tbody.fail .status{background:#000;color:#fff}\
tbody.skip .status{background:#ddd}.reason{white-space:pre-wrap;word-break:break-word;max-width:60em}\
.cases{width:100%}.name{font-weight:normal}summary{cursor:pointer}.description{color:#333}\
.figure{margin:.4em 0 1em}.figure figcaption{font-weight:bold;margin-bottom:.2em}\
.plot{display:flex;gap:1em;align-items:flex-start;flex-wrap:wrap}.plot svg{border:1px solid #ccc;max-width:100%;height:auto}\
.data{max-height:360px;overflow:auto}.figure-data{font-size:.85em}.figure-data caption{text-align:left}\
pre{background:#f4f4f4;border:1px solid #ccc;padding:.5em;overflow:auto}\
.hidden{display:none}nav.tools{margin:.5em 0}\
@media print{nav.tools{display:none}.data{max-height:none}}";

/// Filtering and opening or closing the groups; the page is whole without it.
const SCRIPT: &str = "\
(function(){var t=document.getElementById('tools');t.hidden=false;\
var f=document.getElementById('filter'),o=document.getElementById('failed-only');\
function apply(){var q=f.value.toLowerCase(),only=o.checked;\
document.querySelectorAll('tbody.case').forEach(function(c){\
var show=(!only||c.classList.contains('fail'))&&(q===''||c.textContent.toLowerCase().indexOf(q)>=0);\
c.classList.toggle('hidden',!show);});}\
f.addEventListener('input',apply);o.addEventListener('change',apply);\
function all(open){document.querySelectorAll('section.group details').forEach(function(d){d.open=open;});}\
document.getElementById('open-all').addEventListener('click',function(){all(true);});\
document.getElementById('close-all').addEventListener('click',function(){all(false);});})();";

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
