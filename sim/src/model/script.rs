//! A thread's script, flattened into instructions with jumps. Each step
//! kind says what it runs ([`crate::model::step`]); the engines run the
//! instructions and never see a step.

use lockcore::Call;

use crate::Step;

/// One instruction of a flattened script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Instr {
    /// A call of the lock API. An acquire that fails or errs jumps to
    /// `skip_to`, the end of its block, as `if (res) { ... }` or the
    /// exception would.
    Call { call: Call, skip_to: usize },
    /// Work or a sleep: the thread is busy this many ms.
    Busy(u64),
    /// A write to the protected resource.
    Write,
    /// Start of a repeat: `times` rounds; `end` is its `EndLoop`.
    Loop { times: u32, end: usize },
    /// End of a round: back to `start + 1` while rounds remain.
    EndLoop { start: usize },
}

impl Instr {
    /// The instruction that makes `call`, its skip not yet known.
    pub(crate) fn call(call: Call) -> Instr {
        Instr::Call {
            call,
            skip_to: UNPATCHED,
        }
    }
}

/// A flattened script: its instructions and, for each, the name of the
/// step it came from. A failed try-lock jumps to the `EndLoop` of its
/// round (which starts the next round) or to the end of the script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Program(Vec<(Instr, &'static str)>);

impl Program {
    pub(crate) fn compile(steps: &[Step]) -> Program {
        // Sized once: every thread of every run compiles its steps.
        let size = instructions(steps);
        let mut out = Emit {
            program: Program(Vec::with_capacity(size)),
            step: "",
        };
        out.steps(steps);
        let mut program = out.program;
        debug_assert_eq!(program.0.len(), size, "each kind counts what it emits");
        let end = program.0.len();
        patch(&mut program.0, 0, end, end);
        program
    }

    /// How many instructions it has.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// The name of the step instruction `pc` came from.
    pub(crate) fn step_at(&self, pc: usize) -> &'static str {
        self.0.get(pc).map_or("its script", |(_, step)| step)
    }
}

/// A program being compiled, with the step whose instructions it takes.
pub(crate) struct Emit {
    program: Program,
    step: &'static str,
}

impl Emit {
    /// Appends `instr`, made for the current step.
    pub(crate) fn push(&mut self, instr: Instr) {
        self.program.0.push((instr, self.step));
    }

    /// Appends `steps`, each kind's instructions in turn.
    fn steps(&mut self, steps: &[Step]) {
        let outer = self.step;
        for step in steps {
            self.step = step.name();
            step.kind().emit(self);
        }
        self.step = outer;
    }

    /// Appends a loop of `times` rounds of `steps`; a failed acquire in a
    /// round skips to the round's end.
    pub(crate) fn repeat(&mut self, times: u32, steps: &[Step]) {
        let start = self.program.0.len();
        self.push(Instr::Loop {
            times,
            end: UNPATCHED,
        });
        self.steps(steps);
        let end = self.program.0.len();
        self.push(Instr::EndLoop { start });
        let instrs = &mut self.program.0;
        instrs[start].0 = Instr::Loop { times, end };
        patch(instrs, start + 1, end, end);
    }
}

/// Placeholder for jump targets, patched once the block's end is known.
const UNPATCHED: usize = usize::MAX;

/// How many instructions `steps` compile to.
pub(crate) fn instructions(steps: &[Step]) -> usize {
    steps.iter().map(|step| step.kind().instructions()).sum()
}

/// Points the still-unpatched skips in `from..to` at `target`.
fn patch(out: &mut [(Instr, &'static str)], from: usize, to: usize, target: usize) {
    for (instr, _) in &mut out[from..to] {
        if let Instr::Call { skip_to, .. } = instr
            && *skip_to == UNPATCHED
        {
            *skip_to = target;
        }
    }
}

/// How many instructions a script executes at most (repeats expanded),
/// saturating: bounds the work of a zero-time loop.
pub(crate) fn expanded_len(steps: &[Step]) -> u64 {
    steps
        .iter()
        .fold(0u64, |acc, s| acc.saturating_add(s.kind().expanded_len()))
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
    pub(crate) fn next<'p>(&mut self, program: &'p Program) -> Option<&'p Instr> {
        loop {
            let (instr, _) = program.0.get(self.pc)?;
            match *instr {
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
                _ => {
                    self.pc += 1;
                    return Some(instr);
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
    use crate::steps;

    fn run_all(program: &Program, fail_try: bool) -> Vec<Instr> {
        let mut c = Cursor::default();
        let mut seen = Vec::new();
        while let Some(i) = c.next(program) {
            if let Instr::Call {
                call: Call::TryLock { .. },
                skip_to,
            } = i
                && fail_try
            {
                c.skip_to(*skip_to);
            }
            seen.push(i.clone());
        }
        seen
    }

    /// A repeat runs its body `times` times and a failed try-lock skips
    /// only the rest of its round, as the documents' `if (res) {...}` in a
    /// loop does.
    #[test]
    fn failed_try_lock_skips_the_rest_of_the_round() {
        let steps = vec![
            Step::Repeat(steps::Repeat {
                times: 2,
                steps: vec![
                    Step::TryLock(steps::TryLock {
                        wait_ms: None,
                        lease_ms: None,
                    }),
                    Step::Write(steps::Write {}),
                    Step::Unlock(steps::Unlock {}),
                ],
            }),
            Step::Sleep(steps::Sleep { ms: 5 }),
        ];
        let p = Program::compile(&steps);
        let failing = run_all(&p, true);
        assert_eq!(
            failing.len(),
            3,
            "two failed tries then the sleep: {failing:?}"
        );
        assert_eq!(failing[2], Instr::Busy(5));
        let passing = run_all(&p, false);
        assert_eq!(passing.len(), 7);
        assert_eq!(expanded_len(&steps), 2 * 4 + 1);
    }

    /// A failed try-lock outside any repeat ends the script.
    #[test]
    fn failed_try_lock_at_top_level_ends_the_script() {
        let steps = vec![
            Step::TryLock(steps::TryLock {
                wait_ms: Some(10),
                lease_ms: None,
            }),
            Step::Write(steps::Write {}),
        ];
        assert_eq!(run_all(&Program::compile(&steps), true).len(), 1);
    }

    /// A repeat of zero rounds runs nothing.
    #[test]
    fn zero_rounds_run_nothing() {
        let steps = vec![
            Step::Repeat(steps::Repeat {
                times: 0,
                steps: vec![Step::Write(steps::Write {})],
            }),
            Step::Unlock(steps::Unlock {}),
        ];
        assert_eq!(
            run_all(&Program::compile(&steps), false),
            vec![Instr::Call {
                call: Call::Unlock,
                skip_to: 4
            }]
        );
    }
}
