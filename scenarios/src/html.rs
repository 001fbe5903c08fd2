//! The report as one self-contained HTML page (`reports/index.html`): the
//! verdict matrix, then every run with its chart and timeline side by
//! side. No network and no external script: styles, charts and the few
//! lines of script that link them are inline, so the file opens from the
//! file system. Hovering a chart's mark shows its details; clicking it
//! highlights and scrolls to its line in the timeline.

use std::fmt::Write as _;

use lockcore::Release;

use crate::chart::escape;
use crate::{Scenario, Trial, render_chart, render_header, render_verdict};

const STYLE: &str = "body{font-family:sans-serif;margin:24px;max-width:1460px;color:#222}\
table.matrix{border-collapse:collapse}table.matrix td,table.matrix th{border:1px solid #ccc;padding:4px 10px}\
td.ok{background:#eaf5ea}td.bad{background:#fbe3e3}\
section.run{border-top:2px solid #ddd;margin-top:28px;padding-top:8px}\
pre{font-size:12px;background:#f7f7f7;padding:8px;overflow-x:auto;max-height:420px;overflow-y:auto}\
pre span.hit{background:#ffe08a}svg g[data-record]{cursor:pointer}\
section.defect{border-left:5px solid #e15759;padding-left:14px;margin-top:32px}\
table.facts th{text-align:left;padding-right:14px;vertical-align:top}code{background:#f0f0f0;padding:1px 4px}";

/// Clicking an element with `data-record` highlights its timeline line(s).
const SCRIPT: &str = "document.addEventListener('click',function(e){\
var g=e.target.closest('g[data-record]');if(!g)return;\
var sec=g.closest('section');if(!sec)return;\
sec.querySelectorAll('span.hit').forEach(function(s){s.classList.remove('hit')});\
var first=null;g.getAttribute('data-record').split(' ').forEach(function(i){\
var l=sec.querySelector('span[data-line=\"'+i+'\"]');if(l){l.classList.add('hit');first=first||l;}});\
if(first)first.scrollIntoView({block:'center'});});";

/// The page for `matrix`.
pub fn render_html(
    matrix: &[(Scenario, Vec<Trial>)],
    history: &[(Scenario, Vec<Trial>)],
) -> String {
    let mut s = page_start("locksim report");
    let _ = writeln!(
        s,
        "<h1>locksim report</h1><p>Every built-in scenario under every profile, each with its \
         scenario's seed. A cell shows the verdict and whether it is what the scenario expects \
         (✓) or not (✗); it links to the run below. Hover a chart's mark for its details; click \
         it to find its line in the timeline.</p>"
    );
    matrix_table(&mut s, matrix);
    history_table(&mut s, history);
    for (sc, trials) in matrix.iter().chain(history) {
        for t in trials {
            run_section(&mut s, sc, t);
        }
    }
    page_end(&mut s);
    s
}

/// A page's head, with the report's style, titled `title`.
pub(crate) fn page_start(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n",
        escape(title)
    )
}

/// A page's end, with the script that links marks to timeline lines.
pub(crate) fn page_end(s: &mut String) {
    let _ = writeln!(s, "<script>{SCRIPT}</script></body></html>");
}

/// The id of a run's section.
pub(crate) fn anchor(scenario: &str, profile: Release) -> String {
    format!("{scenario}.{}", crate::file_word(profile))
}

fn matrix_table(s: &mut String, matrix: &[(Scenario, Vec<Trial>)]) {
    s.push_str("<table class=\"matrix\"><tr><th>scenario</th>");
    for p in Release::ERAS {
        let _ = write!(s, "<th>{p}</th>");
    }
    s.push_str("</tr>\n");
    for (sc, trials) in matrix {
        let _ = write!(
            s,
            "<tr><td title=\"{}\">{}</td>",
            escape(sc.description.trim()),
            escape(&sc.name)
        );
        for t in trials {
            let (class, mark) = if t.as_expected() {
                ("ok", "✓")
            } else {
                ("bad", "✗")
            };
            let _ = write!(
                s,
                "<td class=\"{class}\"><a href=\"#{}\">{} {mark}</a></td>",
                anchor(&sc.name, t.profile),
                t.verdict()
            );
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
}

/// Redisson's lock history: each row under its last affected and its
/// fixing release.
fn history_table(s: &mut String, history: &[(Scenario, Vec<Trial>)]) {
    if history.is_empty() {
        return;
    }
    s.push_str(
        "<h2>Redisson's lock history</h2><p>Each change of Redisson's lock that affects \
         safety or liveness, under the last release it affects and the release that fixed \
         it: whether the defect's invariant broke.</p>\n<table class=\"matrix\"><tr>\
         <th>scenario</th><th>switch</th><th>upstream</th><th>invariant</th>\
         <th>last affected</th><th>fixed</th></tr>\n",
    );
    for (sc, trials) in history {
        let Some(row) = &sc.history else { continue };
        let _ = write!(
            s,
            "<tr><td title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td>",
            escape(sc.description.trim()),
            escape(&sc.name),
            escape(&row.switch),
            escape(&row.issue),
            row.breaks
        );
        for t in trials {
            let broke = t.run.violations.iter().any(|v| v.invariant == row.breaks);
            let class = if t.as_expected() { "ok" } else { "bad" };
            let _ = write!(
                s,
                "<td class=\"{class}\"><a href=\"#{}\">{}: {}</a></td>",
                anchor(&sc.name, t.profile),
                t.profile,
                if broke { "broken" } else { "holds" }
            );
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
}

/// One run: its settings, chart, timeline and verdict, in a section that
/// the matrix links to as `#<scenario>.<profile>`.
pub(crate) fn run_section(s: &mut String, sc: &Scenario, t: &Trial) {
    let id = anchor(&sc.name, t.profile);
    let _ = writeln!(
        s,
        "<section class=\"run\" id=\"{id}\"><h2>{} under {}</h2>",
        escape(&sc.name),
        t.profile
    );
    let _ = writeln!(
        s,
        "<pre>{}</pre>",
        escape(&render_header(t, &sc.description, sc.source.as_deref()))
    );
    s.push_str(&render_chart(
        &t.run,
        &format!("{} under {}", sc.name, t.profile),
    ));
    s.push_str("<pre class=\"timeline\">");
    for (i, r) in t.run.history.iter().filter(|(_, r)| r.shown()) {
        let _ = writeln!(
            s,
            "<span data-line=\"{i}\">{}</span>",
            escape(&r.to_string())
        );
    }
    s.push_str("</pre>\n");
    let _ = writeln!(s, "<pre>{}</pre></section>", escape(&render_verdict(t)));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The page is self-contained (no external resource: the only URL is
    /// SVG's namespace), deterministic, links every run from the matrix,
    /// and gives each chart mark a timeline line to point at.
    #[test]
    fn page_is_self_contained_and_linked() {
        let scenarios: Vec<Scenario> = ["stw-pause"]
            .iter()
            .filter_map(|n| crate::builtin(n))
            .collect();
        let matrix = crate::run_matrix(&scenarios).unwrap();
        let history = crate::history_matrix(&crate::history()).unwrap();
        let page = render_html(&matrix, &history);
        assert_eq!(page, render_html(&matrix, &history));
        assert!(page.contains("href=\"#nil-unlock-stale-entry.3.12.0\""));
        let urls = page.matches("http").count();
        let namespaces = page.matches("xmlns=\"http://www.w3.org/2000/svg\"").count();
        assert_eq!(urls, namespaces, "an external reference");
        assert!(!page.contains("<script src") && !page.contains("<link"));
        for p in Release::ERAS {
            let id = anchor("stw-pause", p);
            assert!(page.contains(&format!("href=\"#{id}\"")), "{id} not linked");
            assert!(page.contains(&format!("id=\"{id}\"")), "{id} missing");
        }
        assert!(page.contains("<span data-line=\"0\">"));
        assert!(page.contains("data-record=\""));
    }
}
