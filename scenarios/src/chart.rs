//! An SVG chart of a run: who holds the lock over time, as Redis sees it
//! and as each thread believes, with renewals, writes, faults and broken
//! invariants marked. Made only from virtual time, so it is as
//! deterministic as the timeline.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use sim::{Phase, RecordKind, ReleaseCause, Run, SimTime};

/// Chart geometry, in SVG user units.
const LEFT: f64 = 120.0;
const PLOT: f64 = 900.0;
const LANE: f64 = 22.0;
const TOP: f64 = 30.0;

/// Colours of clients, by their order in the spec.
const PALETTE: [&str; 6] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948",
];

/// One horizontal bar: a lane, a time span, a colour and a tooltip.
struct Bar {
    lane: usize,
    from: SimTime,
    to: SimTime,
    color: &'static str,
    title: String,
}

/// One point mark: a lane, a time, a glyph colour and a tooltip.
struct Mark {
    lane: usize,
    at: SimTime,
    color: &'static str,
    title: String,
}

/// The chart of `run`, titled `title`.
pub fn render_chart(run: &Run, title: &str) -> String {
    let end = run.history.meta.horizon.max(SimTime(1));
    let clients: Vec<String> = run.spec.clients.iter().map(|c| c.name.clone()).collect();
    let color = |client: &str| -> &'static str {
        let i = clients.iter().position(|c| c == client).unwrap_or(0);
        PALETTE[i % PALETTE.len()]
    };

    // Lanes: faults, Redis, then each process (renewals) followed by its
    // threads (beliefs and writes), in order of first appearance.
    let mut lanes: Vec<String> = vec!["faults".to_owned(), "redis holder".to_owned()];
    let mut lane_of: BTreeMap<String, usize> = BTreeMap::new();
    let mut lane = |name: String, lanes: &mut Vec<String>| -> usize {
        *lane_of.entry(name.clone()).or_insert_with(|| {
            lanes.push(name);
            lanes.len() - 1
        })
    };

    let mut bars = Vec::new();
    let mut marks = Vec::new();
    let mut holding: BTreeMap<String, (SimTime, &'static str, String)> = BTreeMap::new();
    let mut redis: Option<(SimTime, &'static str, String)> = None;
    let mut faults: BTreeMap<String, SimTime> = BTreeMap::new();
    for r in &run.history.records {
        match &r.kind {
            RecordKind::Start { process, .. } => {
                lane(format!("{process} watchdog"), &mut lanes);
            }
            RecordKind::Hold { who, token, .. } => {
                lane(who.to_string(), &mut lanes);
                let t = token.map(|t| format!(" token {t}")).unwrap_or_default();
                holding.insert(
                    who.to_string(),
                    (
                        r.at,
                        color(&who.client),
                        format!("{who} believes it holds{t}"),
                    ),
                );
            }
            RecordKind::Release { who, cause, .. } => {
                if let Some((from, c, title)) = holding.remove(&who.to_string()) {
                    let l = lane(who.to_string(), &mut lanes);
                    let why = match cause {
                        ReleaseCause::Unlock => "unlock",
                        ReleaseCause::Crash => "crash",
                        ReleaseCause::LeaseLost => "lease lost",
                    };
                    bars.push(Bar {
                        lane: l,
                        from,
                        to: r.at,
                        color: c,
                        title: format!("{title} (until {why})"),
                    });
                }
            }
            RecordKind::Server { holder, .. } => {
                if let Some((from, c, title)) = redis.take() {
                    bars.push(Bar {
                        lane: 1,
                        from,
                        to: r.at,
                        color: c,
                        title,
                    });
                }
                if let Some(h) = holder {
                    redis = Some((r.at, color(&h.client), format!("Redis: held by {h}")));
                }
            }
            RecordKind::RenewSent { process, retry, .. } => {
                let l = lane(format!("{process} watchdog"), &mut lanes);
                let title = if *retry {
                    "renewal resent (retry)"
                } else {
                    "renewal sent"
                };
                marks.push(Mark {
                    lane: l,
                    at: r.at,
                    color: "#bbbbbb",
                    title: title.to_owned(),
                });
            }
            RecordKind::Lock { process, event } => {
                let title = match event {
                    lockcore::Event::RenewalStopped { reason, .. } => {
                        format!("renewal stopped: {reason}")
                    }
                    lockcore::Event::LeaseLost { .. } => "lease lost".to_owned(),
                    lockcore::Event::Renewed { .. } => continue,
                };
                let l = lane(format!("{process} watchdog"), &mut lanes);
                marks.push(Mark {
                    lane: l,
                    at: r.at,
                    color: "#e15759",
                    title,
                });
            }
            RecordKind::RenewReply { process, reply, .. } => {
                let l = lane(format!("{process} watchdog"), &mut lanes);
                let c = match reply.as_str() {
                    "1" => "#59a14f",
                    "0" => "#f28e2b",
                    _ => "#e15759",
                };
                marks.push(Mark {
                    lane: l,
                    at: r.at,
                    color: c,
                    title: format!("renewal -> {reply}"),
                });
            }
            RecordKind::Write {
                who,
                token,
                accepted,
                ..
            } => {
                let l = lane(who.to_string(), &mut lanes);
                let t = token
                    .map(|t| format!("token {t}"))
                    .unwrap_or_else(|| "no token".to_owned());
                let (c, verdict) = if *accepted {
                    ("#222222", "accepted")
                } else {
                    ("#e15759", "REJECTED")
                };
                marks.push(Mark {
                    lane: l,
                    at: r.at,
                    color: c,
                    title: format!("write ({t}) {verdict}"),
                });
            }
            RecordKind::Fault { fault, phase } => {
                let key = crate::fault_line(fault);
                match phase {
                    Phase::Begin => {
                        faults.insert(key, r.at);
                    }
                    Phase::End => {
                        let from = faults.remove(&key).unwrap_or(r.at);
                        bars.push(Bar {
                            lane: 0,
                            from,
                            to: r.at,
                            color: "#bab0ac",
                            title: key,
                        });
                    }
                }
            }
            RecordKind::Crash { process } => {
                marks.push(Mark {
                    lane: 0,
                    at: r.at,
                    color: "#e15759",
                    title: format!("{process} crashes"),
                });
            }
            _ => {}
        }
    }
    for (who, (from, c, title)) in holding {
        let l = lane(who, &mut lanes);
        bars.push(Bar {
            lane: l,
            from,
            to: end,
            color: c,
            title: format!("{title} (to the end)"),
        });
    }
    if let Some((from, c, title)) = redis {
        bars.push(Bar {
            lane: 1,
            from,
            to: end,
            color: c,
            title,
        });
    }
    for (key, from) in faults {
        bars.push(Bar {
            lane: 0,
            from,
            to: end,
            color: "#bab0ac",
            title: key,
        });
    }

    let x = |t: SimTime| LEFT + PLOT * (t.0.min(end.0) as f64) / (end.0 as f64);
    let y = |lane: usize| TOP + LANE * lane as f64;
    let height = y(lanes.len()) + 30.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{height:.0}" viewBox="0 0 {w:.0} {height:.0}" font-family="monospace" font-size="11">"#,
        w = LEFT + PLOT + 20.0
    );
    let _ = writeln!(s, r#"<title>{}</title>"#, escape(title));
    let _ = writeln!(
        s,
        r#"<text x="4" y="16" font-size="13">{}</text>"#,
        escape(title)
    );
    for (i, name) in lanes.iter().enumerate() {
        let _ = writeln!(
            s,
            r#"<text x="4" y="{:.1}">{}</text>"#,
            y(i) + 15.0,
            escape(name)
        );
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#eeeeee"/>"##,
            y(i) + LANE,
            LEFT + PLOT,
            y(i) + LANE
        );
    }
    // Time axis: about ten ticks at a round number of seconds.
    let step_ms = tick_ms(end.as_ms());
    let mut t = 0;
    while t <= end.as_ms() {
        let tx = x(SimTime::from_ms(t));
        let _ = writeln!(
            s,
            r##"<line x1="{tx:.1}" y1="{TOP}" x2="{tx:.1}" y2="{:.1}" stroke="#dddddd"/><text x="{tx:.1}" y="{:.1}" text-anchor="middle">{}s</text>"##,
            y(lanes.len()),
            y(lanes.len()) + 14.0,
            t / 1_000
        );
        t += step_ms;
    }
    for b in &bars {
        let (x0, x1) = (x(b.from), x(b.to));
        let _ = writeln!(
            s,
            r##"<rect x="{x0:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}" stroke="#ffffff" stroke-width="0.5"><title>{}</title></rect>"##,
            y(b.lane) + 4.0,
            (x1 - x0).max(1.0),
            LANE - 8.0,
            b.color,
            escape(&b.title)
        );
    }
    for m in &marks {
        let _ = writeln!(
            s,
            r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{}"><title>{}</title></circle>"#,
            x(m.at),
            y(m.lane) + LANE / 2.0,
            m.color,
            escape(&m.title)
        );
    }
    for v in &run.violations {
        let vx = x(v.at);
        let _ = writeln!(
            s,
            r##"<line x1="{vx:.1}" y1="{TOP}" x2="{vx:.1}" y2="{:.1}" stroke="#e15759" stroke-dasharray="4 3"><title>{}</title></line>"##,
            y(lanes.len()),
            escape(&format!("{} at {}: {}", v.invariant, v.at, v.detail))
        );
    }
    let _ = writeln!(s, "</svg>");
    s
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

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockcore::Profile;

    /// The stw-pause chart (000, 002) draws both holders' beliefs, Redis's
    /// holders, the pause window and the broken invariant, and is the same
    /// text on every run.
    #[test]
    fn chart_of_a_pause() {
        let s = crate::builtin("stw-pause").unwrap();
        let run = sim::run(&s.spec(None, Some(Profile::Redisson))).unwrap();
        let svg = render_chart(&run, "stw-pause under redisson");
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        for lane in [
            ">faults<",
            ">redis holder<",
            ">A/t1<",
            ">B/t1<",
            ">A watchdog<",
        ] {
            assert!(svg.contains(lane), "no lane {lane}");
        }
        assert!(svg.contains("pause client=A"), "no pause window");
        assert!(svg.contains("mutual-exclusion at"), "no violation marker");
        assert_eq!(svg, render_chart(&run, "stw-pause under redisson"));
    }
}
