//! Shards: a deterministic slice of a plan, so that N machines (or N Slurm array tasks, or N
//! Dask workers) each run one slice into their own results directory and `coaplab merge`
//! joins the directories into the results of a single-machine run.
//!
//! Shard `K/N` holds the runs whose id `r` satisfies `r % N == K - 1` (round robin). Runs are
//! numbered combination-major, so round robin spreads every combination's replications, and
//! expensive combinations (many clients, long transfers), over all shards rather than giving
//! one shard all of them, as contiguous ranges would.

use std::fmt;
use std::str::FromStr;

/// The largest shard count: far more than machines anyone has, small enough that `K/N` text
/// stays short.
pub const MAX_SHARDS: usize = 1_000_000;

/// Shard `index` of `count` (both from 1; `1/1` is the whole plan).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shard {
    index: usize,
    count: usize,
}

impl Shard {
    /// The whole plan, `1/1`.
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// Shard `index` of `count`, when `1 <= index <= count <= MAX_SHARDS`.
    pub fn new(index: usize, count: usize) -> Option<Shard> {
        (1..=count)
            .contains(&index)
            .then_some(Shard { index, count })
            .filter(|_| count <= MAX_SHARDS)
    }

    /// K, from 1.
    pub fn index(&self) -> usize {
        self.index
    }

    /// N.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Whether this is the whole plan.
    pub fn is_whole(&self) -> bool {
        self.count == 1
    }

    /// Whether run `run` belongs to this shard.
    pub fn contains(&self, run: usize) -> bool {
        run % self.count == self.index - 1
    }

    /// The shard that holds `run`, among `count` shards.
    pub fn of_run(run: usize, count: usize) -> Shard {
        Shard {
            index: run % count.max(1) + 1,
            count: count.max(1),
        }
    }

    /// How many of `total` runs this shard holds.
    pub fn len_of(&self, total: usize) -> usize {
        total / self.count + usize::from(total % self.count >= self.index)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A shard text that is not `K/N` with `1 <= K <= N <=` [`MAX_SHARDS`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("K/N with 1 <= K <= N <= {MAX_SHARDS}, e.g. 2/3; got '{text}'")]
pub struct BadShard {
    /// The text given.
    pub text: String,
}

impl FromStr for Shard {
    type Err = BadShard;

    /// `K/N` with `1 <= K <= N <= MAX_SHARDS`.
    fn from_str(text: &str) -> Result<Shard, BadShard> {
        let expected = || BadShard {
            text: text.to_string(),
        };
        let (k, n) = text.split_once('/').ok_or_else(expected)?;
        let (Ok(k), Ok(n)) = (k.trim().parse(), n.trim().parse()) else {
            return Err(expected());
        };
        Shard::new(k, n).ok_or_else(expected)
    }
}

#[cfg(test)]
mod tests {
    use super::Shard;

    #[test]
    fn shards_partition_the_runs_round_robin() {
        let shards: Vec<Shard> = (1..=3).map(|k| Shard::new(k, 3).unwrap()).collect();
        for run in 0..10 {
            let holders: Vec<_> = shards.iter().filter(|s| s.contains(run)).collect();
            assert_eq!(holders, [&Shard::of_run(run, 3)]);
        }
        assert_eq!(
            shards.iter().map(|s| s.len_of(10)).collect::<Vec<_>>(),
            [4, 3, 3]
        );
        assert_eq!(Shard::WHOLE.len_of(10), 10);
        assert!(shards[1].contains(4) && !shards[1].contains(5));
    }

    #[test]
    fn shard_text() {
        assert_eq!("2/3".parse::<Shard>(), Ok(Shard::new(2, 3).unwrap()));
        assert_eq!("2/3".parse::<Shard>().unwrap().to_string(), "2/3");
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", "1/1000001", ""] {
            let err = bad.parse::<Shard>().unwrap_err();
            assert_eq!(err.text, bad);
            assert!(err.to_string().contains("K/N"), "{bad}: {err}");
        }
    }
}
