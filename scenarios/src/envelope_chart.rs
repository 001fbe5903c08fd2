//! The envelope as a person reads it: a table, and an SVG chart of each
//! limit over `lockWatchdogTimeout` (log scale), with a legend.

use std::fmt::Write as _;

use crate::{Envelope, Probe};

/// Colours of the lines: one per probe, then the takeover delay.
const COLORS: [&str; 6] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#9c755f", "#e15759",
];

/// Chart geometry, in SVG user units.
const LEFT: f64 = 80.0;
const WIDTH: f64 = 900.0;
const TOP: f64 = 40.0;
const HEIGHT: f64 = 420.0;

impl Envelope {
    /// The table: one row per timeout, the longest surviving fault of each
    /// kind (`>=` when even the longest tried survived), and the takeover
    /// delay after a crash. Times in seconds.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "safety envelope of {} (latency {}-{} ms; worst of {} phases x {} seeds)",
            self.config.profile,
            self.config.latency.min_ms,
            self.config.latency.max_ms,
            self.config.phases,
            self.config.seeds
        );
        let _ = write!(s, "{:>12}", "watchdog");
        for p in Probe::ALL {
            let _ = write!(s, " {:>12}", p.name());
        }
        let _ = writeln!(s, " {:>12}", "takeover");
        for row in &self.rows {
            let _ = write!(s, "{:>12}", secs(row.watchdog_ms));
            for (_, l) in &row.limits {
                let text = if l.at_ceiling {
                    format!(">={}", secs(l.survives_ms))
                } else {
                    secs(l.survives_ms)
                };
                let _ = write!(s, " {text:>12}");
            }
            let _ = writeln!(s, " {:>12}", secs(row.takeover_ms));
        }
        let _ = writeln!(
            s,
            "columns: the longest fault of each kind the holder's lock survives (the key stays its own \
             until its unlock; a clock jump forward, by how much); takeover: the longest wait for \
             another client after the holder crashes."
        );
        s
    }
}

fn secs(ms: u64) -> String {
    format!("{}.{:03}s", ms / 1_000, ms % 1_000)
}

/// The chart: x is `lockWatchdogTimeout` on a log scale, y the limit in
/// seconds; one line per fault kind and one for the takeover delay.
pub fn render_envelope_chart(env: &Envelope) -> String {
    let mut series: Vec<(String, Vec<(u64, u64)>)> = Probe::ALL
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let points = env
                .rows
                .iter()
                .filter_map(|r| r.limits.get(k).map(|(_, l)| (r.watchdog_ms, l.survives_ms)))
                .collect();
            (format!("longest {} survived", p.name()), points)
        })
        .collect();
    series.push((
        "takeover after a crash".to_owned(),
        env.rows
            .iter()
            .map(|r| (r.watchdog_ms, r.takeover_ms))
            .collect(),
    ));
    let xs: Vec<f64> = env
        .rows
        .iter()
        .map(|r| (r.watchdog_ms as f64).ln())
        .collect();
    let (x0, x1) = bounds(&xs);
    let ymax = series
        .iter()
        .flat_map(|(_, pts)| pts.iter().map(|p| p.1))
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let x = |ms: u64| LEFT + ((ms as f64).ln() - x0) / (x1 - x0).max(1e-9) * WIDTH;
    let y = |ms: u64| TOP + HEIGHT - ms as f64 / ymax * HEIGHT;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="12">"#,
        LEFT + WIDTH + 260.0,
        TOP + HEIGHT + 60.0
    );
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="20" font-size="14">Safety envelope of {} (latency {}-{} ms)</text>"#,
        env.config.profile, env.config.latency.min_ms, env.config.latency.max_ms
    );
    axes(&mut s, env, &x, ymax);
    for (k, (label, points)) in series.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        let path: Vec<String> = points
            .iter()
            .map(|&(w, v)| format!("{:.1},{:.1}", x(w), y(v)))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
            path.join(" ")
        );
        for &(w, v) in points {
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"><title>{label}: {} at lockWatchdogTimeout {}</title></circle>"#,
                x(w),
                y(v),
                secs(v),
                secs(w)
            );
        }
        let ly = TOP + 16.0 * k as f64;
        let lx = LEFT + WIDTH + 20.0;
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{color}" stroke-width="2"/><text x="{}" y="{}">{label}</text>"#,
            lx + 20.0,
            lx + 26.0,
            ly + 4.0
        );
    }
    s.push_str("</svg>\n");
    s
}

fn bounds(xs: &[f64]) -> (f64, f64) {
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if lo.is_finite() && hi > lo {
        (lo, hi)
    } else {
        (lo.min(0.0), lo.max(0.0) + 1.0)
    }
}

fn axes(s: &mut String, env: &Envelope, x: &dyn Fn(u64) -> f64, ymax: f64) {
    let (bottom, right) = (TOP + HEIGHT, LEFT + WIDTH);
    let _ = writeln!(
        s,
        r##"<line x1="{LEFT}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#333"/><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{bottom}" stroke="#333"/>"##
    );
    for r in &env.rows {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            x(r.watchdog_ms),
            bottom + 16.0,
            secs(r.watchdog_ms)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">lockWatchdogTimeout (log scale)</text>"#,
        LEFT + WIDTH / 2.0,
        bottom + 40.0
    );
    for k in 0..=4 {
        let v = ymax * f64::from(k) / 4.0;
        let yy = bottom - HEIGHT * f64::from(k) / 4.0;
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{:.1}" text-anchor="end">{}</text><line x1="{LEFT}" y1="{yy:.1}" x2="{right}" y2="{yy:.1}" stroke="#ddd"/>"##,
            LEFT - 6.0,
            yy + 4.0,
            tick(v / 1_000.0)
        );
    }
}

/// An axis label in seconds, rounded for reading.
fn tick(seconds: f64) -> String {
    if seconds >= 10.0 {
        format!("{seconds:.0}s")
    } else {
        format!("{seconds:.1}s")
    }
}
