//! Pure delay stages: the link's propagation delay (docs/experiments.md §1.1 item 3) and the
//! rest-of-path.
//!
//! A delay stage has no queue and no loss. Its delay is constant, or jittered uniformly on
//! `[d − j, d + j)` per packet (one draw per packet, only when jitter is on). The jitter mode
//! says what happens to order: `fifo` clamps each release to at least the previous release of
//! this stage (packets never overtake each other), `reorder` releases every packet at its own
//! time, as netem's `delay D J` does.

use coaplab_base::rng::{Random, SeededRandom};
use coaplab_base::time::{Duration, Instant};

/// How jitter interacts with packet order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JitterMode {
    /// No jitter: the delay is constant whatever `jitter` says.
    #[default]
    None,
    /// Jitter, but a packet is never released before the one that entered before it.
    Fifo,
    /// Jitter; each packet is released at its own time, so packets can reorder.
    Reorder,
}

impl JitterMode {
    /// The names [`JitterMode::from_name`] accepts.
    pub const NAMES: [&'static str; 3] = ["none", "fifo", "reorder"];

    /// The mode named `none`, `fifo` or `reorder`.
    pub fn from_name(name: &str) -> Option<JitterMode> {
        match name {
            "none" => Some(JitterMode::None),
            "fifo" => Some(JitterMode::Fifo),
            "reorder" => Some(JitterMode::Reorder),
            _ => None,
        }
    }
}

/// The parameters of one delay stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DelayConfig {
    /// Mean one-way delay `d`.
    pub delay: Duration,
    /// Half-width `j` of the uniform jitter; must not exceed `delay`.
    pub jitter: Duration,
    /// What jitter does to order.
    pub jitter_mode: JitterMode,
}

impl DelayConfig {
    /// A constant delay.
    pub const fn constant(delay: Duration) -> Self {
        DelayConfig {
            delay,
            jitter: Duration::ZERO,
            jitter_mode: JitterMode::None,
        }
    }

    /// Whether packets can leave this stage in a different order than they entered.
    pub fn can_reorder(&self) -> bool {
        self.is_jittered() && self.jitter_mode == JitterMode::Reorder
    }

    fn is_jittered(&self) -> bool {
        self.jitter_mode != JitterMode::None && self.jitter > Duration::ZERO
    }
}

/// A delay stage in operation.
#[derive(Debug, Clone)]
pub struct DelayStage {
    config: DelayConfig,
    rng: SeededRandom,
    last_release: Instant,
}

impl DelayStage {
    /// A stage drawing its jitter from `rng` (untouched when jitter is off).
    pub fn new(config: DelayConfig, rng: SeededRandom) -> Self {
        DelayStage {
            config,
            rng,
            last_release: Instant::from_nanos(i64::MIN),
        }
    }

    /// The parameters.
    pub fn config(&self) -> &DelayConfig {
        &self.config
    }

    /// When a packet entering at `entered` leaves. Calls must come in entry order.
    pub fn release(&mut self, entered: Instant) -> Instant {
        if !self.config.is_jittered() {
            return entered + self.config.delay;
        }
        let j = self.config.jitter.as_nanos();
        let low = (self.config.delay.as_nanos() - j).max(0);
        let span = 2 * j;
        let offset = ((self.rng.uniform01() * span as f64) as i64).min(span - 1);
        let at = entered + Duration::from_nanos(low + offset);
        match self.config.jitter_mode {
            JitterMode::Fifo => {
                let at = at.max(self.last_release);
                self.last_release = at;
                at
            }
            _ => at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    fn jittered(mode: JitterMode) -> DelayStage {
        DelayStage::new(
            DelayConfig {
                delay: Duration::from_millis(15),
                jitter: Duration::from_millis(5),
                jitter_mode: mode,
            },
            stream(1, "test/jitter"),
        )
    }

    #[test]
    fn constant_delay_adds_exactly_and_draws_nothing() {
        let mut s = DelayStage::new(
            DelayConfig {
                delay: Duration::from_millis(15),
                jitter: Duration::from_millis(5),
                jitter_mode: JitterMode::None,
            },
            stream(1, "x"),
        );
        assert_eq!(
            s.release(Instant::from_nanos(3)),
            Instant::from_nanos(15_000_003)
        );
        assert!(!s.config().can_reorder());
    }

    #[test]
    fn fifo_jitter_never_reorders_and_stays_in_range() {
        let mut s = jittered(JitterMode::Fifo);
        let mut last = Instant::ZERO;
        for i in 0..10_000i64 {
            let entered = Instant::from_micros(i * 100); // 0.1 ms apart, jitter ±5 ms
            let at = s.release(entered);
            assert!(at >= last, "packet {i} overtook its predecessor");
            assert!(at >= entered + Duration::from_millis(10));
            last = at;
        }
    }

    #[test]
    fn reorder_jitter_reorders_within_bounds() {
        let mut s = jittered(JitterMode::Reorder);
        let mut last = Instant::ZERO;
        let mut overtakes = 0;
        for i in 0..10_000i64 {
            let entered = Instant::from_micros(i * 100);
            let at = s.release(entered);
            let delay = at - entered;
            assert!(delay >= Duration::from_millis(10) && delay < Duration::from_millis(20));
            if at < last {
                overtakes += 1;
            }
            last = last.max(at);
        }
        assert!(overtakes > 1000, "only {overtakes} reorderings");
    }
}
