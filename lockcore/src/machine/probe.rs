//! 3.26.1+: the probe of what the server supports, and what its answer
//! makes of every later lock script's sync (REDISSON-FAMILY.md §6.1-6.2;
//! `CommandAsyncService.syncedEval` at the tags).
//!
//! 3.26.1-3.45.x (`jvm-wait-probe`, #5586, commit d91031f5a) send `WAIT 0
//! 0` alone while the JVM's flag is unset: no error, scripts go with
//! `WAIT`; an error starting "ERR unknown command", this and every later
//! script go bare; any other error fails the script's call and the flag
//! stays unset. From 3.46.0 the probe is per client and asks for both
//! commands:
//!
//! Until the client knows (`waitSupportedCommands`, per client), a lock
//! script that would wait for replicas first sends the two commands as a
//! batch and goes out once both answered. No error: both supported. On
//! error the messages are matched against the command names, by a rule
//! that changed three times:
//!
//! - 3.46.0 (`wait-probe`, commit 4de934766): a message containing
//!   `'WAIT'` or `'WAITAOF'` (Redis 7.0's single quotes) removes that
//!   name, in the order WAIT, WAITAOF; then, if the first message starts
//!   with "ERR unknown command", the rest is kept and this script goes
//!   bare (no sync), else the script's call fails with the error.
//! - 3.47.0 (`probe-backticks`, #6579, commit 23e70b6e1): backticks
//!   (Redis 6.2's) instead of quotes.
//! - 3.48.0 (`probe-prefix-match`, commit d0676f1fc): a message starting
//!   with "ERR unknown command" whose upper case contains the name. In the
//!   order WAIT, WAITAOF, the text refusing `WAITAOF` contains "WAIT": on
//!   a server without WAITAOF (6.2, 7.0, 7.1) WAIT is the one removed, and
//!   every later lock script, which asks for WAIT, goes bare.
//! - 3.52.0 (`probe-reads-causes`, #6775, commit e50b735a2): the order
//!   WAITAOF, WAIT; the call fails only when nothing matched; the script
//!   goes bare only when neither is supported; and WAITAOF is used only
//!   when supported.
//!
//! Then each script asks for WAIT (`syncedEvalNoRetry`'s `SyncMode.WAIT`):
//! with WAIT not among the supported it goes bare. With the primary's AOF
//! on (`INFO ALL`'s `aof_enabled`, read with the replica count) it is
//! followed by `WAITAOF 1 <replicas> <timeout>` instead of `WAIT`, whose
//! second element is the synced count: on a server without WAITAOF every
//! lock script fails with its unknown-command error (3.46.0-3.47.x,
//! #6579, #6618; from 3.48.0 the refusal reads as no WAIT and the scripts
//! go bare until 3.52.0, #6775), and on 7.2 with replicas that write no
//! AOF none is synced (until 4.0.0, `lock-sync-wait-only`, commit
//! 64bacfef3, where lock scripts never use WAITAOF; #6920).
//!
//! A probe in flight is two requests of its own; the script waits in the
//! probe's table. The probe is a stage of the script's chained future, so
//! an interrupt treats a script waiting here as one on the wire (see
//! `interrupt`): it goes out after the probe all the same, and its reply
//! goes to the abandoned acquire's callback, never to the thread's next
//! call.

use bytes::Bytes;

use super::request::{Held, Kind, Owner, Tries};
use super::{LockClient, Purpose};
use crate::{LockName, Millis, Switch, TransportError, Value};

/// Which of the two commands the client believes the server has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Supported {
    pub(super) wait: bool,
    pub(super) waitaof: bool,
}

/// How a lock script is synced, once the probe is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SyncWith {
    /// No sync: the bare script.
    Bare,
    /// `WAIT <replicas> <timeout>`.
    Wait,
    /// `WAITAOF 1 <replicas> <timeout>`.
    WaitAof,
}

/// A probe in flight: the script that waits for it, and the two replies.
#[derive(Debug, Clone)]
pub(super) struct Probe {
    /// The script that waits for it.
    pub(super) held: Held,
    replies: [Option<Result<Value, TransportError>>; 2],
    /// 3.26.1-3.45.x: `WAIT 0 0` alone, whose one reply decides.
    wait_only: bool,
    /// How often the probe's batch was sent again after a demoted
    /// primary's `ERR WAIT…` (3.45.1+, `replica-wait-retried`).
    retried: u32,
}

impl Probe {
    /// How many commands it sends: `WAIT 0 0` alone, or with `WAITAOF`.
    fn parts(&self) -> usize {
        if self.wait_only { 1 } else { 2 }
    }
}

/// What the probe's errors decide.
enum Verdict {
    /// Keep these as supported; send this script bare or synced.
    Keep(Supported, bool),
    /// The script's call fails with the probe's error.
    Fail(TransportError),
}

impl LockClient {
    /// Whether a script that would wait for replicas must probe first.
    pub(super) fn needs_probe(&self) -> bool {
        (self.switches.has(Switch::WaitProbe) || self.switches.has(Switch::JvmWaitProbe))
            && self.supported.is_none()
    }

    /// How a script that would wait for replicas is synced, by what the
    /// probe found (before 3.26.1: always `WAIT`).
    pub(super) fn sync_with(&self) -> SyncWith {
        if !self.switches.has(Switch::WaitProbe) {
            // Before 3.26.1 nothing probes; until 3.46.0 only a refused
            // `WAIT 0 0` sends scripts bare.
            return match self.supported {
                Some(Supported { wait: false, .. }) => SyncWith::Bare,
                _ => SyncWith::Wait,
            };
        }
        let Some(supported) = self.supported else {
            return SyncWith::Wait;
        };
        if !supported.wait {
            return SyncWith::Bare;
        }
        let aof = self.aof_read
            && !self.switches.has(Switch::LockSyncWaitOnly)
            && (supported.waitaof || !self.switches.has(Switch::ProbeReadsCauses));
        if aof {
            SyncWith::WaitAof
        } else {
            SyncWith::Wait
        }
    }

    /// Sends the probe; `kind` goes out once it has answered.
    pub(super) fn send_probe(&mut self, now: Millis, held: Held) -> crate::RequestId {
        let id = self.next_probe;
        self.next_probe += 1;
        let lock = held.lock.clone();
        self.probes.insert(
            id,
            Probe {
                held,
                replies: [None, None],
                wait_only: !self.switches.has(Switch::WaitProbe),
                retried: 0,
            },
        );
        self.send_probe_commands(now, id, lock)
    }

    /// Sends probe `id`'s two commands, `WAIT 0 0` and `WAITAOF 0 0 0`.
    fn send_probe_commands(&mut self, now: Millis, id: u64, lock: LockName) -> crate::RequestId {
        let words: [&[&'static [u8]]; 2] =
            [&[b"WAIT", b"0", b"0"], &[b"WAITAOF", b"0", b"0", b"0"]];
        let parts = self.probes.get(&id).map_or(2, Probe::parts);
        let mut last = None;
        for (part, words) in words.into_iter().enumerate().take(parts) {
            let command: super::Command = words.iter().map(|w| Bytes::from_static(w)).collect();
            let kind = Kind::Command {
                purpose: Purpose::Probe,
                command,
            };
            last = Some(self.transmit(
                now,
                kind,
                lock.clone(),
                Owner::Probe(id, part),
                Tries::default(),
            ));
        }
        last.unwrap_or(crate::RequestId(self.next_request))
    }

    /// One of the probe's replies; once both are in, the script goes out
    /// (synced or bare) or its call fails.
    pub(super) fn on_probe_reply(
        &mut self,
        now: Millis,
        id: u64,
        part: usize,
        reply: Result<Value, TransportError>,
        sent_at: Millis,
    ) {
        let Some(probe) = self.probes.get_mut(&id) else {
            return;
        };
        probe.replies[part] = Some(reply);
        if probe.replies[..probe.parts()].iter().any(Option::is_none) {
            return;
        }
        let Some(probe) = self.probes.remove(&id) else {
            return;
        };
        let errors: Vec<TransportError> = probe
            .replies
            .iter()
            .flatten()
            .filter_map(|r| r.as_ref().err().cloned())
            .collect();
        if self.retries_probe(&probe, &errors) {
            self.retry_probe(now, id, probe);
            return;
        }
        let verdict = if probe.wait_only {
            Self::judge_wait_probe(&errors)
        } else if errors.is_empty() {
            Verdict::Keep(
                Supported {
                    wait: true,
                    waitaof: true,
                },
                false,
            )
        } else {
            self.judge_probe(&errors)
        };
        match verdict {
            Verdict::Keep(supported, bare) => {
                // Probes of scripts sent at once race; Redisson's last
                // write wins, and every one of them finds the same.
                self.supported = Some(supported);
                self.event(super::Event::SyncProbed {
                    wait: supported.wait,
                    waitaof: (!probe.wait_only).then_some(supported.waitaof),
                    bare,
                });
                let held = probe.held;
                let tries = Tries {
                    bare,
                    staged: true,
                    ..held.tries
                };
                self.transmit(now, held.kind, held.lock, held.owner, tries);
            }
            Verdict::Fail(error) => self.deliver(now, probe.held.owner, Err(error), sent_at),
        }
    }

    /// 3.45.1+ (`replica-wait-retried`): a probe answered by a demoted
    /// primary fails its batch with the last error, `ERR WAITAOF cannot be
    /// used with replica instances…`, a `RedisWaitException` that
    /// `RedisExecutor` retries like any batch's, `retryAttempts` times,
    /// before the probe's handler reads the errors.
    fn retries_probe(&self, probe: &Probe, errors: &[TransportError]) -> bool {
        self.switches.has(Switch::ReplicaWaitRetried)
            && probe.retried < self.config.retry_attempts
            && matches!(errors.last(), Some(TransportError::Redis(text)) if text.starts_with("ERR WAIT"))
    }

    /// Sends probe `id`'s batch again after the retry delay.
    fn retry_probe(&mut self, now: Millis, id: u64, mut probe: Probe) {
        let pause = self.retry_pause(probe.retried);
        probe.retried += 1;
        probe.replies = [None, None];
        self.set_timer(now.plus(pause), super::TimerKind::ProbeRetry(id));
        self.probes.insert(id, probe);
    }

    /// The retry delay of probe `id` is over: its batch goes again.
    pub(super) fn on_probe_retry(&mut self, now: Millis, id: u64) {
        if let Some(probe) = self.probes.get(&id) {
            let lock = probe.held.lock.clone();
            self.send_probe_commands(now, id, lock);
        }
    }

    /// 3.26.1-3.45.x's reading of `WAIT 0 0`'s reply
    /// (`CommandAsyncService.syncedEval`, lines 1039-1048 at
    /// redisson-3.45.1): no error, WAIT; "ERR unknown command", none, and
    /// this script goes bare; else the call fails.
    fn judge_wait_probe(errors: &[TransportError]) -> Verdict {
        let Some(error) = errors.first() else {
            return Verdict::Keep(
                Supported {
                    wait: true,
                    waitaof: false,
                },
                false,
            );
        };
        if error.to_string().starts_with("ERR unknown command") {
            let none = Supported {
                wait: false,
                waitaof: false,
            };
            Verdict::Keep(none, true)
        } else {
            Verdict::Fail(error.clone())
        }
    }

    /// The release's reading of the probe's errors (the first is the
    /// batch's own, the rest its suppressed ones).
    fn judge_probe(&self, errors: &[TransportError]) -> Verdict {
        let texts: Vec<String> = errors.iter().map(ToString::to_string).collect();
        let reads_causes = self.switches.has(Switch::ProbeReadsCauses);
        let prefix = self.switches.has(Switch::ProbePrefixMatch);
        let quote = if self.switches.has(Switch::ProbeBackticks) {
            '`'
        } else {
            '\''
        };
        let mut commands: Vec<&str> = if reads_causes {
            vec!["WAITAOF", "WAIT"]
        } else {
            vec!["WAIT", "WAITAOF"]
        };
        for text in &texts {
            let matched = commands.iter().position(|name| {
                if prefix {
                    text.starts_with("ERR unknown command") && text.to_uppercase().contains(name)
                } else {
                    text.contains(&format!("{quote}{name}{quote}"))
                }
            });
            if let Some(i) = matched {
                commands.remove(i);
            }
        }
        let supported = Supported {
            wait: commands.contains(&"WAIT"),
            waitaof: commands.contains(&"WAITAOF"),
        };
        if reads_causes {
            if commands.len() == 2 {
                return Verdict::Fail(errors[0].clone());
            }
            return Verdict::Keep(supported, commands.is_empty());
        }
        if texts[0].starts_with("ERR unknown command") {
            Verdict::Keep(supported, true)
        } else {
            Verdict::Fail(errors[0].clone())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;
    use crate::machine::harness::release;

    const REFUSED_7_0: &str =
        "ERR unknown command 'WAITAOF', with args beginning with: '0' '0' '0' ";
    const REFUSED_6_2: &str =
        "ERR unknown command `WAITAOF`, with args beginning with: `0`, `0`, `0`, ";

    /// What `version` makes of the probe's one error `text`: the commands
    /// kept and whether the script goes bare, or `None` when the call
    /// fails.
    fn judged(version: &str, text: &str) -> Option<(bool, bool, bool)> {
        let config = Config::builder()
            .release(release(version))
            .replicas(1)
            .build()
            .unwrap();
        let client = LockClient::new("u", config);
        match client.judge_probe(&[TransportError::Redis(text.into())]) {
            Verdict::Keep(s, bare) => Some((s.wait, s.waitaof, bare)),
            Verdict::Fail(_) => None,
        }
    }

    /// REDISSON-FAMILY.md §6.2's table, row by row, on Redis 7.0's and
    /// 6.2's refusal of `WAITAOF 0 0 0`: 3.46.0 finds 7.0's quotes only,
    /// 3.47.0 6.2's backticks only (#6579, #6618), 3.48.0 removes WAIT for
    /// either, 3.52.0 WAITAOF and no longer sends the script bare. An
    /// error that is no unknown-command text fails the call.
    #[test]
    fn each_release_reads_the_refusal_its_way() {
        let (wait_only, both, waitaof_only) = ((true, false), (true, true), (false, true));
        for (version, text, kept, bare) in [
            ("3.46.0", REFUSED_7_0, wait_only, true),
            ("3.46.0", REFUSED_6_2, both, true),
            ("3.47.0", REFUSED_7_0, both, true),
            ("3.47.0", REFUSED_6_2, wait_only, true),
            ("3.48.0", REFUSED_7_0, waitaof_only, true),
            ("3.48.0", REFUSED_6_2, waitaof_only, true),
            ("3.52.0", REFUSED_7_0, wait_only, false),
            ("3.52.0", REFUSED_6_2, wait_only, false),
        ] {
            assert_eq!(
                judged(version, text),
                Some((kept.0, kept.1, bare)),
                "{version}: {text}"
            );
        }
        for version in ["3.46.0", "3.52.0"] {
            assert_eq!(
                judged(version, "LOADING Redis is loading"),
                None,
                "{version}"
            );
        }
    }
}
