//! Explore's findings as one self-contained HTML page: the same content as
//! the Markdown (`findings`), with each case's chart inline beside its
//! timeline, in the style of `reports/index.html` (no network, no
//! external script; clicking a chart's mark finds its timeline line).

use std::fmt::Write as _;

use crate::chart::escape;
use crate::findings::{Case, DEFECTS_INTRO, DefectCase, Findings, LOSSES_INTRO};
use crate::html::{anchor, page_end, page_start, run_section};

/// The page.
pub(crate) fn render(f: &Findings) -> String {
    let mut s = page_start("locksim explore: findings");
    let _ = writeln!(
        s,
        "<h1>locksim explore: findings</h1>\n<p>{}</p>\n<p>Made by <code>{}</code>. Hover a \
         chart's mark for its details; click it to find its line in the timeline.</p>",
        escape(&f.headline()),
        escape(&f.command)
    );
    let _ = writeln!(
        s,
        "<h2 id=\"defects\">Defects</h2>\n<p>{}</p>",
        prose(DEFECTS_INTRO)
    );
    if f.defects.is_empty() {
        s.push_str("<p>No defect: every violation has an explanation.</p>\n");
    } else {
        contents(&mut s, &f.defects);
    }
    for (n, d) in f.defects.iter().enumerate() {
        defect(&mut s, n + 1, d);
    }
    if f.overflow > 0 {
        let _ = writeln!(
            s,
            "<p>And {} defective run(s) of further signatures.</p>",
            f.overflow
        );
    }
    let _ = writeln!(
        s,
        "<h2 id=\"expected-losses\">Expected losses</h2>\n<p>{}</p>",
        prose(LOSSES_INTRO)
    );
    losses(&mut s, f);
    for (what, case) in &f.examples {
        let _ = writeln!(
            s,
            "<h3>Example: {}</h3>\n<p>{} under {}, {}. Run it: <code>{}</code>.</p>",
            escape(what),
            escape(&case.scenario.name),
            case.trial.profile,
            escape(&case.shrink_note()),
            escape(&case.run_command())
        );
        case_html(&mut s, case);
    }
    let _ = writeln!(
        s,
        "<h2 id=\"counts\">Counts</h2>\n<p>explore's summary: runs by invariant and by worst \
         cause.</p>\n<pre>{}</pre>",
        escape(&f.summary)
    );
    page_end(&mut s);
    s
}

/// Markdown-ish prose as HTML: escaped, with `code` spans.
fn prose(text: &str) -> String {
    escape(text)
        .split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                format!("<code>{part}</code>")
            } else {
                part.to_owned()
            }
        })
        .collect()
}

/// A list of the defects, each linking to its section.
fn contents(s: &mut String, defects: &[DefectCase]) {
    s.push_str("<ol>\n");
    for (n, d) in defects.iter().enumerate() {
        let _ = writeln!(
            s,
            "<li><a href=\"#defect-{}\">{} under {}</a>: <code>{}</code> ({} run(s))</li>",
            n + 1,
            d.group.invariant,
            d.group.model,
            escape(&d.group.signature.to_string()),
            d.group.runs
        );
    }
    s.push_str("</ol>\n");
}

fn defect(s: &mut String, n: usize, d: &DefectCase) {
    let _ = writeln!(
        s,
        "<section class=\"defect\" id=\"defect-{n}\"><h3>{n}. {} under {}</h3>\n<table class=\"facts\">",
        d.group.invariant, d.group.model
    );
    for (k, v, code) in d.facts() {
        let v = if code {
            format!("<code>{}</code>", escape(&v))
        } else {
            escape(&v)
        };
        let _ = writeln!(s, "<tr><th>{k}</th><td>{v}</td></tr>");
    }
    s.push_str("</table>\n");
    case_html(s, &d.case);
    s.push_str("</section>\n");
}

/// The scenario file, then the run's settings, chart, timeline and verdict.
fn case_html(s: &mut String, case: &Case) {
    let _ = writeln!(
        s,
        "<details><summary>scenario file ({})</summary><pre>{}</pre></details>",
        escape(&case.file()),
        escape(&case.scenario.to_toml())
    );
    run_section(s, &case.scenario, &case.trial);
}

fn losses(s: &mut String, f: &Findings) {
    let rows = f.losses.rows(&f.models);
    if rows.is_empty() {
        s.push_str("<p>None.</p>\n");
        return;
    }
    s.push_str("<table class=\"matrix\"><tr><th>cause</th>");
    for m in &f.models {
        let _ = write!(s, "<th>{m}</th>");
    }
    s.push_str("<th>first run</th></tr>\n");
    for (cause, counts, first) in rows {
        let _ = write!(s, "<tr><td>{}</td>", escape(&cause));
        for c in counts {
            let _ = write!(s, "<td>{c}</td>");
        }
        let first = first.map_or_else(
            || "none".to_owned(),
            |f| format!("<code>{}</code>", escape(&f)),
        );
        let _ = writeln!(s, "<td>{first}</td></tr>");
    }
    s.push_str("</table>\n");
    // Anchors of the examples, so the table's reader can jump to them.
    if !f.examples.is_empty() {
        s.push_str("<p>Shrunk examples: ");
        let links: Vec<String> = f
            .examples
            .iter()
            .map(|(what, c)| {
                format!(
                    "<a href=\"#{}\">{}</a>",
                    anchor(&c.scenario.name, c.trial.profile),
                    escape(what)
                )
            })
            .collect();
        let _ = writeln!(s, "{}.</p>", links.join(", "));
    }
}
