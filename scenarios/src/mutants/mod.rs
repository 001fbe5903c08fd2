//! The mutation yardstick (issue 48 item 5): how good the search is,
//! measured as the share of Redisson's fixes whose removal it notices.
//!
//! A *mutant* of a release is the release with one of its fixes removed,
//! exactly as `--without SWITCH` removes it. The fixes of a release are
//! the switches in force in it whose [`lockcore::SwitchInfo::fixes`] is
//! set: the registry's own word that the releases before the switch have
//! a defect locksim models, and the only switches explore's attribution
//! may name as a defect's fix. A switch that brought a defect or only
//! moves timing (the timer's tick, the renewal thread queue) is no fix.
//!
//! Each mutant is explored over a seed range with the default workload.
//! A mutant is *killed* by a run with a defect that explore's attribution
//! (run by run, [`crate::defects_attributed`]) names as fixed by the
//! removed switch; the first such seed is its seeds-to-kill. A mutant is
//! *equivalent* when the registry shows that removing the fix changes
//! nothing the model can show: the fix acts only through a switch the
//! release lacks, or a switch the release has replaced the code it
//! changes. Anything else *survived*, with why: whether the fix's history
//! scenario still breaks under the mutant (then the search missed a
//! reachable defect), and what the explored runs did (none asked about
//! the switch, none changed, or the changed ones showed no defect or
//! defects named after other issues).
//!
//! A run depends on its release only through the switches it asks about
//! ([`sim::Run::switches_read`]), so each seed is run once under the
//! release and again under a mutant only when that run asked about the
//! mutant's switch: the rest are the release's own run, which no
//! attribution can blame on the switch. Seeds run in parallel and are
//! folded in seed order, so the report is the same on any number of
//! threads.
//!
//! Layout: `mutant` ([`Mutant`], which fixes a release has), `probe` (one
//! seed under the release and its mutants), `witness` (the fix's
//! history scenario under the mutant), `score` ([`MutantScore`],
//! [`MutationReport`]), `sweep` ([`mutation_sweep`]), `render` (the text
//! table).

mod mutant;
mod probe;
mod render;
mod score;
mod sweep;
#[cfg(test)]
mod tests;
mod witness;

pub use mutant::{Mutant, mutants_of};
pub use render::render_report;
pub use score::{MutantScore, MutantVerdict, MutationReport};
pub use sweep::{MutantsOptions, mutation_sweep};
pub use witness::Witness;
