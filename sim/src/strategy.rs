//! Search strategies: how a seed's scenario is drawn (issue 48 item 4).
//!
//! Uniform swarm ([`Strategy::Uniform`]) draws every kind and workload
//! feature with fixed chances; it is blind to what it rarely reaches. The
//! other arms bend the same generator toward rare `sometimes` points:
//! [`Strategy::Directed`] weights fault kinds and workload features toward
//! one rare point's preconditions ([`crate::directed`]), and
//! [`Strategy::Pct`] adds a few callback-ordering change points
//! ([`crate::pct`]). [`Strategy::Portfolio`] gives each seed one arm,
//! uniform for at least half of them.
//!
//! A seed's arm is a pure function of the strategy and the seed, drawn
//! from a stream of its own (`Stream::Arm`), never of the range, the
//! thread count or what earlier seeds reached (adaptive weighting would
//! make a seed's run depend on its range): a seed's history, verdict and
//! label are the same alone and inside any range. The uniform arm is
//! today's generator, draw for draw.

use rand::RngExt;

use crate::model::rng::{self, Stream};

/// How the scenarios of a sweep are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, PartialOrd, Ord, Hash)]
pub enum Strategy {
    /// Uniform swarm: every seed as `locksim explore` drew it before
    /// strategies existed (the regression corpus's and docs' seeds).
    #[default]
    Uniform,
    /// Directed swarm: fault kinds and workload features weighted toward
    /// the preconditions of one rare `sometimes` point a seed aims at.
    Directed,
    /// Uniform swarm plus a PCT-style schedule: up to
    /// [`crate::pct::MAX_DEPTH`] change points at which a client's
    /// callbacks are deferred behind everything else due.
    Pct,
    /// Each seed runs one of the arms above: uniform for half the seeds,
    /// directed and PCT for a quarter each.
    Portfolio,
}

impl Strategy {
    /// Every strategy, in the order `--strategy` lists them.
    pub const ALL: [Strategy; 4] = [
        Strategy::Uniform,
        Strategy::Directed,
        Strategy::Pct,
        Strategy::Portfolio,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Uniform => "uniform",
            Strategy::Directed => "directed",
            Strategy::Pct => "pct",
            Strategy::Portfolio => "portfolio",
        }
    }

    /// The arm that draws `seed`'s scenario: the strategy itself, or for
    /// the portfolio one arm drawn from the seed's `Stream::Arm` (two
    /// quarters uniform, one directed, one PCT).
    pub fn arm(self, seed: u64) -> Strategy {
        match self {
            Strategy::Portfolio => match rng::stream(seed, Stream::Arm).random_range(0..4u32) {
                0 => Strategy::Directed,
                1 => Strategy::Pct,
                _ => Strategy::Uniform,
            },
            arm => arm,
        }
    }
}

impl std::fmt::Display for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A strategy's name that is none of [`Strategy::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown strategy `{0}` (known: uniform, directed, pct, portfolio)")]
pub struct UnknownStrategy(pub String);

impl std::str::FromStr for Strategy {
    type Err = UnknownStrategy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Strategy::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| UnknownStrategy(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The portfolio's arms: a function of the seed alone, uniform for at
    /// least half the seeds, every arm drawn; a single-arm strategy is its
    /// own arm for every seed.
    #[test]
    fn the_portfolio_gives_each_seed_one_arm_uniform_for_half() {
        let arms: Vec<Strategy> = (0..4_000).map(|s| Strategy::Portfolio.arm(s)).collect();
        let again: Vec<Strategy> = (0..4_000).map(|s| Strategy::Portfolio.arm(s)).collect();
        assert_eq!(arms, again);
        let count = |a| arms.iter().filter(|x| **x == a).count();
        assert!(
            count(Strategy::Uniform) >= 1_900,
            "{}",
            count(Strategy::Uniform)
        );
        assert!((850..=1_150).contains(&count(Strategy::Directed)));
        assert!((850..=1_150).contains(&count(Strategy::Pct)));
        for s in [Strategy::Uniform, Strategy::Directed, Strategy::Pct] {
            assert!((0..100).all(|seed| s.arm(seed) == s));
        }
    }

    #[test]
    fn names_parse_back() {
        for s in Strategy::ALL {
            assert_eq!(s.name().parse::<Strategy>(), Ok(s));
        }
        assert_eq!(
            "swarm".parse::<Strategy>().unwrap_err().to_string(),
            "unknown strategy `swarm` (known: uniform, directed, pct, portfolio)"
        );
    }
}
