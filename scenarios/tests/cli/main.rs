//! The `locksim` binary itself, for what only a real process shows: a
//! real Ctrl-C (SIGINT). It lives in the `locksim` package, not in the
//! workspace's `tests/` crate, because only a package's own tests are told
//! where its binary is (`CARGO_BIN_EXE_locksim`).

#![cfg(unix)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long any step may take before the test gives up, so a broken
/// handler fails the test instead of hanging it.
const LIMIT: Duration = Duration::from_secs(60);

/// A sweep of a trillion seeds, sent SIGINT once it has started, stops
/// after the seed it is on, prints the summary of the seeds it covered and
/// the command that resumes it, and exits 130. Before the handler existed,
/// SIGINT ended the process with no summary and no resume command, so the
/// output checks fail on a build without it.
#[test]
fn sigint_stops_the_sweep_with_a_summary_and_a_resume_command() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_locksim"))
        .args([
            "explore",
            "--seeds",
            "1000000000000",
            "--profile",
            "redisson",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the locksim binary starts");
    let stdout = child.stdout.take().expect("stdout is piped");
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    // The header is printed after the handler is set: from then on a
    // SIGINT is the sweep's to handle.
    let header = received.recv_timeout(LIMIT);
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("the child can be waited for") {
            break Some(status);
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let header = header.expect("the sweep prints its header");
    assert!(sent.is_ok_and(|s| s.success()), "kill -INT failed");
    let status = status.expect("the sweep stops within the limit after SIGINT");
    let rest: Vec<String> = received.iter().collect();
    let out = rest.join("\n");

    assert!(
        header.starts_with("exploring seeds 0..1000000000000 under redisson"),
        "{header}"
    );
    assert_eq!(status.code(), Some(130), "{out}");
    let summary = rest
        .iter()
        .find(|l| l.starts_with("interrupted: explored "))
        .unwrap_or_else(|| panic!("no summary:\n{out}"));
    let resume = rest.last().map(String::as_str).unwrap_or("");
    assert!(
        resume.starts_with("resume with: locksim explore --from ")
            && resume.ends_with(" --profile redisson --strategy portfolio"),
        "{out}"
    );
    // The summary's covered range ends where the resume command starts.
    let next = resume
        .split_whitespace()
        .nth(5)
        .unwrap_or_else(|| panic!("{resume}"));
    assert!(
        summary.contains(&format!("0..{next} of 0..1000000000000"))
            || (next == "0" && summary.contains("explored no seed")),
        "{summary} / {resume}"
    );
}
