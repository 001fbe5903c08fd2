//! A thread's script, flattened into instructions with jumps.

use lockcore::Millis;

use crate::Step;

/// One instruction of a flattened script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Instr {
    /// `lock(lease)` (or `lockInterruptibly`, `lockAsync`).
    Lock {
        lease: Option<Millis>,
        skip_to: usize,
        interruptibly: bool,
        asynchronous: bool,
    },
    /// `tryLock(wait, lease)` (or `tryLockAsync`); on failure jump to
    /// `skip_to` (the end of the enclosing block).
    TryLock {
        wait: Option<Millis>,
        lease: Option<Millis>,
        skip_to: usize,
        asynchronous: bool,
    },
    /// Busy work for this long.
    Work(u64),
    /// A write to the protected resource.
    Write,
    /// `unlock()`.
    Unlock,
    /// `forceUnlock()`.
    ForceUnlock,
    /// `Thread.sleep`.
    Sleep(u64),
    /// Start of a repeat: `times` rounds; `end` is its `EndLoop`.
    Loop { times: u32, end: usize },
    /// End of a round: back to `start + 1` while rounds remain.
    EndLoop { start: usize },
}

impl Instr {
    /// An acquiring instruction's call, and where a failure skips to.
    pub(crate) fn acquire(self) -> Option<(lockcore::Call, usize)> {
        use lockcore::Call;
        match self {
            Instr::Lock {
                lease,
                skip_to,
                interruptibly,
                asynchronous,
            } => {
                let call = if interruptibly {
                    Call::LockInterruptibly { lease }
                } else if asynchronous {
                    Call::LockAsync { lease }
                } else {
                    Call::Lock { lease }
                };
                Some((call, skip_to))
            }
            Instr::TryLock {
                wait,
                lease,
                skip_to,
                asynchronous: false,
            } => Some((Call::TryLock { wait, lease }, skip_to)),
            Instr::TryLock {
                wait,
                lease,
                skip_to,
                asynchronous: true,
            } => Some((Call::TryLockAsync { wait, lease }, skip_to)),
            _ => None,
        }
    }
}

/// A flattened script. A failed try-lock jumps to the `EndLoop` of its
/// round (which starts the next round) or to the end of the script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Program(pub(crate) Vec<Instr>);

impl Program {
    pub(crate) fn compile(steps: &[Step]) -> Program {
        // Sized once: every thread of every run compiles its steps.
        let size = instructions(steps);
        let mut out = Vec::with_capacity(size);
        emit(steps, &mut out);
        debug_assert_eq!(out.len(), size, "instructions() counts what emit() makes");
        let end = out.len();
        patch(&mut out, 0, end, end);
        Program(out)
    }
}

/// Placeholder for jump targets, patched once the block's end is known.
const UNPATCHED: usize = usize::MAX;

/// How many instructions [`emit`] makes of `steps`: one per step, and
/// a loop's two around its body.
fn instructions(steps: &[Step]) -> usize {
    steps
        .iter()
        .map(|step| match step {
            Step::Repeat { steps, .. } => 2 + instructions(steps),
            _ => 1,
        })
        .sum()
}

fn emit(steps: &[Step], out: &mut Vec<Instr>) {
    for step in steps {
        match step {
            Step::Lock { lease_ms } => out.push(lock(*lease_ms, false, false)),
            Step::LockInterruptibly { lease_ms } => out.push(lock(*lease_ms, true, false)),
            Step::LockAsync { lease_ms } => out.push(lock(*lease_ms, false, true)),
            Step::TryLock { wait_ms, lease_ms } => out.push(try_lock(*wait_ms, *lease_ms, false)),
            Step::TryLockAsync { wait_ms, lease_ms } => {
                out.push(try_lock(*wait_ms, *lease_ms, true))
            }
            Step::Work { ms } => out.push(Instr::Work(*ms)),
            Step::Write => out.push(Instr::Write),
            Step::Unlock => out.push(Instr::Unlock),
            Step::ForceUnlock => out.push(Instr::ForceUnlock),
            Step::Sleep { ms } => out.push(Instr::Sleep(*ms)),
            Step::Repeat { times, steps } => {
                let start = out.len();
                out.push(Instr::Loop {
                    times: *times,
                    end: UNPATCHED,
                });
                emit(steps, out);
                let end = out.len();
                out.push(Instr::EndLoop { start });
                out[start] = Instr::Loop { times: *times, end };
                patch(out, start + 1, end, end);
            }
        }
    }
}

fn lock(lease_ms: Option<u64>, interruptibly: bool, asynchronous: bool) -> Instr {
    Instr::Lock {
        lease: lease_ms.map(Millis),
        skip_to: UNPATCHED,
        interruptibly,
        asynchronous,
    }
}

fn try_lock(wait_ms: Option<u64>, lease_ms: Option<u64>, asynchronous: bool) -> Instr {
    Instr::TryLock {
        wait: wait_ms.map(Millis),
        lease: lease_ms.map(Millis),
        skip_to: UNPATCHED,
        asynchronous,
    }
}

/// Points the still-unpatched skips in `from..to` at `target`.
fn patch(out: &mut [Instr], from: usize, to: usize, target: usize) {
    for instr in &mut out[from..to] {
        match instr {
            Instr::Lock { skip_to, .. } | Instr::TryLock { skip_to, .. }
                if *skip_to == UNPATCHED =>
            {
                *skip_to = target;
            }
            _ => {}
        }
    }
}

/// How many instructions a script executes at most (repeats expanded),
/// saturating: bounds the work of a zero-time loop.
pub(crate) fn expanded_len(steps: &[Step]) -> u64 {
    steps.iter().fold(0u64, |acc, s| {
        let n = match s {
            Step::Repeat { times, steps } => {
                u64::from(*times).saturating_mul(expanded_len(steps).saturating_add(1))
            }
            _ => 1,
        };
        acc.saturating_add(n)
    })
}

/// Where a thread is in its program.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Cursor {
    pub(crate) pc: usize,
    /// Rounds left of each open loop, innermost last.
    pub(crate) rounds: Vec<u32>,
}

impl Cursor {
    /// The next instruction that does something, handling loop bookkeeping;
    /// `None` when the script is over.
    pub(crate) fn next(&mut self, program: &Program) -> Option<Instr> {
        loop {
            let instr = *program.0.get(self.pc)?;
            match instr {
                Instr::Loop { times, end } => {
                    if times == 0 {
                        self.pc = end + 1;
                    } else {
                        self.rounds.push(times);
                        self.pc += 1;
                    }
                }
                Instr::EndLoop { start } => {
                    let left = self.rounds.last_mut().map(|r| {
                        *r -= 1;
                        *r
                    });
                    if left.unwrap_or(0) > 0 {
                        self.pc = start + 1;
                    } else {
                        self.rounds.pop();
                        self.pc += 1;
                    }
                }
                other => {
                    self.pc += 1;
                    return Some(other);
                }
            }
        }
    }

    /// Skips to `target` (the end of a block) after a failed acquire.
    pub(crate) fn skip_to(&mut self, target: usize) {
        self.pc = target;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_all(program: &Program, fail_try: bool) -> Vec<Instr> {
        let mut c = Cursor::default();
        let mut seen = Vec::new();
        while let Some(i) = c.next(program) {
            seen.push(i);
            if let Instr::TryLock { skip_to, .. } = i
                && fail_try
            {
                c.skip_to(skip_to);
            }
        }
        seen
    }

    /// A repeat runs its body `times` times and a failed try-lock skips
    /// only the rest of its round, as the documents' `if (res) {...}` in a
    /// loop does.
    #[test]
    fn failed_try_lock_skips_the_rest_of_the_round() {
        let steps = vec![
            Step::Repeat {
                times: 2,
                steps: vec![
                    Step::TryLock {
                        wait_ms: None,
                        lease_ms: None,
                    },
                    Step::Write,
                    Step::Unlock,
                ],
            },
            Step::Sleep { ms: 5 },
        ];
        let p = Program::compile(&steps);
        let failing = run_all(&p, true);
        assert_eq!(
            failing.len(),
            3,
            "two failed tries then the sleep: {failing:?}"
        );
        assert_eq!(failing[2], Instr::Sleep(5));
        let passing = run_all(&p, false);
        assert_eq!(passing.len(), 7);
        assert_eq!(expanded_len(&steps), 2 * 4 + 1);
    }

    /// A failed try-lock outside any repeat ends the script.
    #[test]
    fn failed_try_lock_at_top_level_ends_the_script() {
        let steps = vec![
            Step::TryLock {
                wait_ms: Some(10),
                lease_ms: None,
            },
            Step::Write,
        ];
        assert_eq!(run_all(&Program::compile(&steps), true).len(), 1);
    }

    /// A repeat of zero rounds runs nothing.
    #[test]
    fn zero_rounds_run_nothing() {
        let steps = vec![
            Step::Repeat {
                times: 0,
                steps: vec![Step::Write],
            },
            Step::Unlock,
        ];
        assert_eq!(
            run_all(&Program::compile(&steps), false),
            vec![Instr::Unlock]
        );
    }
}
