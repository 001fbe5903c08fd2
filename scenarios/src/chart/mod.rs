//! An SVG chart of a run: who holds the lock over time, as Redis sees it
//! and as each thread believes, with renewals and their outcomes, writes
//! and their tokens, lease-lost signals, unlock errors, labelled fault
//! windows and the instants invariants broke, and a legend. Made only
//! from virtual time, so it is as deterministic as the timeline.
//!
//! `layout` decides what is shown (unit-tested as data); this file draws
//! it. Every element carries its history record's index
//! (`data-record`), so the HTML report can link a mark to its timeline
//! line.

mod layout;

use std::fmt::Write as _;

use sim::{Run, SimTime};

use layout::{FAULT, Glyph, Layout, layout};

/// Chart geometry, in SVG user units: 1,400 wide.
const LEFT: f64 = 170.0;
const PLOT: f64 = 1_180.0;
const WIDTH: f64 = 1_400.0;
const LANE: f64 = 24.0;
/// The top of the first lane when violation labels take one row; each
/// further row of labels pushes the lanes down by `LABEL_ROW`.
const TOP: f64 = 44.0;
const LABEL_ROW: f64 = 14.0;
/// How a defect's rule is drawn, and an expected loss's.
const DEFECT: &str = "#e15759";
const EXPECTED: &str = "#79706e";

/// The chart of `run`, titled `title`.
pub fn render_chart(run: &Run, title: &str) -> String {
    draw(&layout(run), title)
}

fn draw(l: &Layout, title: &str) -> String {
    let end = l.end;
    let label_rows = l.rules.iter().map(|r| r.row + 1).max().unwrap_or(1);
    let top = TOP + LABEL_ROW * (label_rows - 1) as f64;
    let x = |t: SimTime| LEFT + PLOT * (t.0.min(end.0) as f64) / (end.0 as f64);
    let y = |lane: usize| top + LANE * lane as f64;
    let bottom = y(l.lanes.len());
    let rule_kinds = [true, false].map(|defect| l.rules.iter().any(|r| r.defect == defect));
    let mut key = String::new();
    let key_bottom = legend(&mut key, &l.glyphs, rule_kinds, bottom + 34.0);
    let height = key_bottom + 12.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH:.0}" height="{height:.0}" viewBox="0 0 {WIDTH:.0} {height:.0}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<title>{}</title>"#, escape(title));
    let _ = writeln!(
        s,
        r#"<text x="4" y="18" font-size="15">{}</text>"#,
        escape(title)
    );
    for (i, name) in l.lanes.iter().enumerate() {
        let _ = writeln!(
            s,
            r##"<text x="4" y="{:.1}">{}</text><line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#eeeeee"/>"##,
            y(i) + 16.0,
            escape(name),
            y(i) + LANE,
            LEFT + PLOT,
            y(i) + LANE
        );
    }
    axis(&mut s, end, &x, (top, bottom));
    for b in &l.bars {
        let (x0, x1) = (x(b.from), x(b.to));
        let _ = writeln!(
            s,
            r##"<g data-record="{}"><title>{}</title><rect x="{x0:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}" stroke="#ffffff" stroke-width="0.5"/>"##,
            b.record,
            escape(&b.title),
            y(b.lane) + 4.0,
            (x1 - x0).max(1.0),
            LANE - 8.0,
            b.color
        );
        if let Some(label) = &b.label {
            let _ = write!(
                s,
                r##"<text x="{:.1}" y="{:.1}" fill="#222">{}</text>"##,
                x0 + 3.0,
                y(b.lane) + 16.0,
                escape(label)
            );
        }
        s.push_str("</g>\n");
    }
    for m in &l.marks {
        let (cx, cy) = (x(m.at), y(m.lane) + LANE / 2.0);
        let _ = write!(
            s,
            r#"<g data-record="{}"><title>{} at {}</title>"#,
            m.record,
            escape(&m.title),
            m.at
        );
        glyph(&mut s, m.glyph, m.hollow, cx, cy);
        if let Some(label) = &m.label {
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="{:.1}" font-size="10">{}</text>"#,
                cx + 6.0,
                cy - 5.0,
                escape(label)
            );
        }
        s.push_str("</g>\n");
    }
    for r in &l.rules {
        rule(
            &mut s,
            r,
            x(r.at),
            TOP - 8.0 + LABEL_ROW * r.row as f64,
            bottom,
        );
    }
    s.push_str(&key);
    s.push_str("</svg>\n");
    s
}

/// A broken invariant: a vertical rule from its label (at `label_y`)
/// down to the axis, solid red for a defect, dashed grey for an expected
/// loss, the label saying the invariant and its cause.
fn rule(s: &mut String, r: &layout::Rule, vx: f64, label_y: f64, bottom: f64) {
    let records: Vec<String> = r.records.iter().map(ToString::to_string).collect();
    let (color, line, weight) = if r.defect {
        (DEFECT, r#"stroke-width="2.5""#, "bold")
    } else {
        (
            EXPECTED,
            r#"stroke-width="1.5" stroke-dasharray="5 3""#,
            "normal",
        )
    };
    let (tx, anchor) = if r.leftward {
        (vx - 3.0, "end")
    } else {
        (vx + 3.0, "start")
    };
    let _ = writeln!(
        s,
        r#"<g data-record="{}" data-cause="{}"><title>{}</title><line x1="{vx:.1}" y1="{:.1}" x2="{vx:.1}" y2="{bottom:.1}" stroke="{color}" {line}/><text x="{tx:.1}" y="{label_y:.1}" text-anchor="{anchor}" fill="{color}" font-weight="{weight}">{}</text></g>"#,
        records.join(" "),
        if r.defect { "defect" } else { "expected" },
        escape(&r.title),
        label_y + 2.0,
        escape(&r.label)
    );
}

/// The time axis, in seconds: about ten ticks at a round spacing, from
/// the first lane's `top` to the last lane's `bottom`.
fn axis(s: &mut String, end: SimTime, x: &dyn Fn(SimTime) -> f64, (top, bottom): (f64, f64)) {
    let step_ms = tick_ms(end.as_ms());
    let mut t = 0;
    while t <= end.as_ms() {
        let tx = x(SimTime::from_ms(t));
        let label = if step_ms.is_multiple_of(1_000) {
            format!("{}s", t / 1_000)
        } else {
            format!("{}.{}s", t / 1_000, (t % 1_000) / 100)
        };
        let _ = writeln!(
            s,
            r##"<line x1="{tx:.1}" y1="{top:.1}" x2="{tx:.1}" y2="{bottom:.1}" stroke="#dddddd"/><text x="{tx:.1}" y="{:.1}" text-anchor="middle">{label}</text>"##,
            bottom + 14.0
        );
        t += step_ms;
    }
}

/// The legend: the bars, the kinds of broken invariant drawn (`rules`:
/// a defect, an expected loss), then every glyph the chart uses; returns
/// the baseline of its last row.
fn legend(s: &mut String, glyphs: &[Glyph], rules: [bool; 2], top: f64) -> f64 {
    let mut items: Vec<(String, Option<Glyph>, &str)> = vec![
        (
            "held on Redis / believed by a thread (client colour)".to_owned(),
            None,
            "#4e79a7",
        ),
        ("fault window".to_owned(), None, FAULT),
    ];
    if rules[0] {
        items.push((
            "invariant broken: defect (nothing in the run explains it)".to_owned(),
            None,
            "defect",
        ));
    }
    if rules[1] {
        items.push((
            "invariant broken: expected (beyond the guarantee, or misuse)".to_owned(),
            None,
            "expected",
        ));
    }
    items.extend(
        glyphs
            .iter()
            .map(|g| (g.meaning().to_owned(), Some(*g), "")),
    );
    let (mut gx, mut gy) = (LEFT, top);
    for (text, glyph_kind, color) in &items {
        // Items flow left to right, about 7 units per character, and wrap.
        let width = 30.0 + 7.0 * text.chars().count() as f64;
        if gx + width > LEFT + PLOT {
            gx = LEFT;
            gy += 20.0;
        }
        match (glyph_kind, *color) {
            (Some(g), _) => glyph(s, *g, false, gx + 6.0, gy - 4.0),
            (None, kind @ ("defect" | "expected")) => {
                let (c, line) = if kind == "defect" {
                    (DEFECT, r#"stroke-width="2.5""#)
                } else {
                    (EXPECTED, r#"stroke-width="1.5" stroke-dasharray="5 3""#)
                };
                let _ = write!(
                    s,
                    r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{c}" {line}/>"#,
                    gx + 6.0,
                    gy - 11.0,
                    gx + 6.0,
                    gy + 3.0
                );
            }
            (None, c) => {
                let _ = write!(
                    s,
                    r#"<rect x="{gx:.1}" y="{:.1}" width="14" height="9" fill="{c}"/>"#,
                    gy - 9.0
                );
            }
        }
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{gy:.1}">{}</text>"#,
            gx + 18.0,
            escape(text)
        );
        gx += width;
    }
    gy
}

/// Draws one glyph centred at (cx, cy).
fn glyph(s: &mut String, g: Glyph, hollow: bool, cx: f64, cy: f64) {
    let cross = |s: &mut String, r: f64, color: &str, width: f64| {
        let _ = write!(
            s,
            r#"<path d="M{:.1},{:.1}L{:.1},{:.1}M{:.1},{:.1}L{:.1},{:.1}" stroke="{color}" stroke-width="{width}"/>"#,
            cx - r,
            cy - r,
            cx + r,
            cy + r,
            cx - r,
            cy + r,
            cx + r,
            cy - r
        );
    };
    let _ = match g {
        Glyph::RenewSent if hollow => write!(
            s,
            r##"<circle cx="{cx:.1}" cy="{cy:.1}" r="2.5" fill="none" stroke="#888888"/>"##
        ),
        Glyph::RenewSent => write!(
            s,
            r##"<circle cx="{cx:.1}" cy="{cy:.1}" r="2.5" fill="#999999"/>"##
        ),
        Glyph::Renewed => write!(
            s,
            r##"<circle cx="{cx:.1}" cy="{cy:.1}" r="3.5" fill="#59a14f"/>"##
        ),
        Glyph::RenewMissed => write!(
            s,
            r##"<path d="M{cx:.1},{:.1}L{:.1},{:.1}L{:.1},{:.1}Z" fill="#f28e2b"/>"##,
            cy - 5.0,
            cx + 5.0,
            cy + 4.0,
            cx - 5.0,
            cy + 4.0
        ),
        Glyph::RenewError => {
            cross(s, 4.0, "#e15759", 2.0);
            Ok(())
        }
        Glyph::RenewStopped => write!(
            s,
            r##"<rect x="{:.1}" y="{:.1}" width="8" height="8" fill="#e15759"/>"##,
            cx - 4.0,
            cy - 4.0
        ),
        Glyph::LeaseLost => write!(
            s,
            r##"<path d="M{cx:.1},{:.1}L{:.1},{cy:.1}L{cx:.1},{:.1}L{:.1},{cy:.1}Z" fill="#b07aa1"/>"##,
            cy - 6.0,
            cx + 6.0,
            cy + 6.0,
            cx - 6.0
        ),
        Glyph::WriteAccepted => write!(
            s,
            r##"<rect x="{:.1}" y="{:.1}" width="7" height="7" fill="#222222"/>"##,
            cx - 3.5,
            cy - 3.5
        ),
        Glyph::WriteRejected => {
            cross(s, 5.0, "#e15759", 3.0);
            Ok(())
        }
        Glyph::UnlockError => write!(
            s,
            r##"<path d="M{:.1},{:.1}L{:.1},{:.1}L{cx:.1},{:.1}Z" fill="#e15759"/>"##,
            cx - 5.0,
            cy - 4.0,
            cx + 5.0,
            cy - 4.0,
            cy + 5.0
        ),
        Glyph::Crash => {
            cross(s, 6.0, "#222222", 3.0);
            Ok(())
        }
    };
}

/// A round tick spacing giving about ten ticks over `end_ms`.
fn tick_ms(end_ms: u64) -> u64 {
    const STEPS: [u64; 10] = [
        100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 60_000, 300_000,
    ];
    STEPS
        .into_iter()
        .find(|s| end_ms / s <= 12)
        .unwrap_or(3_600_000)
}

pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockcore::Release;

    /// The stw-pause chart (000, 002) draws both holders' beliefs, Redis's
    /// holders, the labelled pause window, the broken invariant named at
    /// its rule, and a legend; it is 1,400 wide and the same text on every
    /// run.
    #[test]
    fn chart_of_a_pause() {
        let s = crate::builtin("stw-pause").unwrap();
        let run = sim::run(&s.spec(None, Some(Release::FENCED))).unwrap();
        let svg = render_chart(&run, "stw-pause under fenced");
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains(r#"width="1400""#));
        for text in [
            ">redis holder<",
            ">A/t1<",
            ">B/t1<",
            ">A watchdog<",
            ">fault: pause A 45s<",
            ">pause A 45s<",
            ">mutual-exclusion: beyond guarantee (pause A 45s)<",
            "data-cause=\"expected\"",
            ">write rejected<",
            ">token 1<",
            ">fault window<",
        ] {
            assert!(svg.contains(text), "no {text}");
        }
        assert!(svg.contains("data-record=\""));
        assert_eq!(svg, render_chart(&run, "stw-pause under fenced"));
    }
}
