//! Stage 4 of a link direction: the loss stage (spec §1.1 item 4, §1.2, §3).
//!
//! The stage follows the serializer and the propagation delay, so a packet lost here has
//! already used link time. Every packet, whatever its size or type, gets the same treatment.
//! Models: [`LossModel::None`], [`LossModel::Bernoulli`], the time-based two-state Markov chain
//! ([`Ctmc`], the default for the `low`/`medium`/`high` profiles' bursty cases) and the
//! packet-based Gilbert-Elliott chain with netem `gemodel` semantics ([`GilbertElliott`]).

mod ctmc;
mod gilbert_elliott;

pub use ctmc::{Ctmc, CtmcParams, HISTORY_SEGMENTS};
pub use gilbert_elliott::{GeParams, GilbertElliott};

use coaplab_cc::rng::{Random, SeededRandom};
use coaplab_cc::time::Instant;

/// Which packets a link loses to link errors.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum LossModel {
    /// No link errors (only congestion drops).
    #[default]
    None,
    /// Each packet lost independently with probability `p` (netem `loss random`).
    Bernoulli {
        /// Loss probability in `[0, 1]`.
        p: f64,
    },
    /// Time-based two-state continuous-time Markov chain (spec §3 default).
    Ctmc(CtmcParams),
    /// Packet-based Gilbert-Elliott chain (netem `loss gemodel p r 1-h 1-k`).
    GilbertElliott(GeParams),
}

/// The names [`LossModel::profile`] accepts.
pub const PROFILE_NAMES: [&str; 4] = ["none", "low", "medium", "high"];

impl LossModel {
    /// The error profile of spec §3 named `none`, `low` (Bernoulli 2 %), `medium` (CTMC, burst
    /// 1 s at 50 %, good 4 s at 0 %) or `high` (CTMC, burst 1 s at 80 %, good 3.875 s at 2 %).
    pub fn profile(name: &str) -> Option<LossModel> {
        match name {
            "none" => Some(LossModel::None),
            "low" => Some(LossModel::Bernoulli { p: 0.02 }),
            "medium" => Some(LossModel::Ctmc(CtmcParams::MEDIUM)),
            "high" => Some(LossModel::Ctmc(CtmcParams::HIGH)),
            _ => None,
        }
    }

    /// The error profile `name` with its bursty cases realised by the packet-based
    /// Gilbert-Elliott chain of spec §3 (example `r = 0.1`, [`GeParams::MEDIUM`],
    /// [`GeParams::HIGH`]) instead of the time-based chain. `none` and `low` are as in
    /// [`LossModel::profile`]: the spec's Gilbert-Elliott form of `low` (`p = 0`, `1-k = 0.02`)
    /// never leaves GOOD, so it is the same Bernoulli 2 % process.
    pub fn profile_gilbert_elliott(name: &str) -> Option<LossModel> {
        match name {
            "medium" => Some(LossModel::GilbertElliott(GeParams::MEDIUM)),
            "high" => Some(LossModel::GilbertElliott(GeParams::HIGH)),
            _ => LossModel::profile(name),
        }
    }

    /// The long-run fraction of packets lost (for CTMC: of time in loss, i.e. of packets
    /// arriving independently of the chain).
    pub fn mean_loss(&self) -> f64 {
        match self {
            LossModel::None => 0.0,
            LossModel::Bernoulli { p } => *p,
            LossModel::Ctmc(c) => c.mean_loss(),
            LossModel::GilbertElliott(g) => g.mean_loss(),
        }
    }

    /// The name of the first parameter outside its range, if any.
    pub fn invalid_parameter(&self) -> Option<&'static str> {
        let unit = |x: f64| (0.0..=1.0).contains(&x);
        match self {
            LossModel::None => None,
            LossModel::Bernoulli { p } => (!unit(*p)).then_some("p"),
            LossModel::Ctmc(c) => c.invalid_parameter(),
            LossModel::GilbertElliott(g) => g.invalid_parameter(),
        }
    }
}

/// A loss stage in operation: the model's state and its random streams.
#[derive(Debug, Clone)]
pub struct LossStage {
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    None,
    Bernoulli { p: f64, draws: SeededRandom },
    Ctmc(Box<Ctmc>),
    GilbertElliott(GilbertElliott),
}

impl LossStage {
    /// A stage for `model`. `draws` decides each packet; `chain` drives the CTMC's state
    /// trajectory (kept separate so the channel's bursts do not depend on the traffic).
    pub fn new(model: &LossModel, draws: SeededRandom, chain: SeededRandom) -> Self {
        let kind = match *model {
            LossModel::None => Kind::None,
            LossModel::Bernoulli { p } => Kind::Bernoulli { p, draws },
            LossModel::Ctmc(params) => Kind::Ctmc(Box::new(Ctmc::new(params, chain, draws))),
            LossModel::GilbertElliott(params) => {
                Kind::GilbertElliott(GilbertElliott::new(params, draws))
            }
        };
        LossStage { kind }
    }

    /// Whether the packet entering the stage at `at` is lost.
    pub fn lose(&mut self, at: Instant) -> bool {
        match &mut self.kind {
            Kind::None => false,
            Kind::Bernoulli { p, draws } => draws.uniform01() < *p,
            Kind::Ctmc(c) => c.lose(at),
            Kind::GilbertElliott(g) => g.lose(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    #[test]
    fn profiles_have_the_spec_means() {
        assert_eq!(LossModel::profile("none").unwrap().mean_loss(), 0.0);
        assert_eq!(LossModel::profile("low").unwrap().mean_loss(), 0.02);
        assert!((LossModel::profile("medium").unwrap().mean_loss() - 0.10).abs() < 1e-12);
        // π_B = 1/4.875; 0.02 + π_B · 0.78 = 0.18
        assert!((LossModel::profile("high").unwrap().mean_loss() - 0.18).abs() < 1e-12);
        assert_eq!(LossModel::profile("severe"), None);
        // The packet-based realisation: same means, r = 0.1, low and none unchanged.
        for name in PROFILE_NAMES {
            let ge = LossModel::profile_gilbert_elliott(name).unwrap();
            let ctmc = LossModel::profile(name).unwrap();
            assert!((ge.mean_loss() - ctmc.mean_loss()).abs() < 1e-4, "{name}");
        }
        assert_eq!(
            LossModel::profile_gilbert_elliott("medium"),
            Some(LossModel::GilbertElliott(GeParams {
                p: 0.025,
                r: 0.1,
                loss_bad: 0.5,
                loss_good: 0.0
            }))
        );
        assert!(matches!(
            LossModel::profile_gilbert_elliott("high"),
            Some(LossModel::GilbertElliott(GeParams { p, r, loss_bad, loss_good }))
                if (p, r, loss_bad, loss_good) == (0.02581, 0.1, 0.8, 0.02)
        ));
        assert_eq!(
            LossModel::profile_gilbert_elliott("low"),
            Some(LossModel::Bernoulli { p: 0.02 })
        );
        assert_eq!(LossModel::profile_gilbert_elliott("severe"), None);
        assert_eq!(
            LossModel::Bernoulli { p: 1.5 }.invalid_parameter(),
            Some("p")
        );
    }

    #[test]
    fn bernoulli_two_percent_over_a_long_run() {
        // n = 10^6: σ = sqrt(0.02·0.98/n) = 1.4e-4; bound 5σ = 7e-4.
        let model = LossModel::Bernoulli { p: 0.02 };
        let mut stage = LossStage::new(&model, stream(5, "d"), stream(5, "c"));
        let n = 1_000_000;
        let lost = (0..n).filter(|_| stage.lose(Instant::ZERO)).count();
        let rate = lost as f64 / n as f64;
        assert!((rate - 0.02).abs() < 7e-4, "rate {rate}");
    }

    #[test]
    fn none_never_loses() {
        let mut stage = LossStage::new(&LossModel::None, stream(5, "d"), stream(5, "c"));
        assert!((0..1000).all(|i| !stage.lose(Instant::from_millis(i))));
    }
}
