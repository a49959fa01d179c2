//! Stage 4 of a link direction: the loss stage (docs/experiments.md §1.1 item 4, §1.2, §3).
//!
//! The stage follows the serializer and the propagation delay, so a packet lost here has
//! already used link time. Every packet, whatever its size or type, gets the same treatment.
//! Models: [`LossModel::None`], [`LossModel::Bernoulli`], the time-based two-state Markov chain
//! ([`Ctmc`]) and the
//! packet-based Gilbert-Elliott chain with netem `gemodel` semantics in `f64` draws
//! ([`GilbertElliott`]), and Linux netem's three loss models in netem's own integer arithmetic
//! ([`NetemRandom`], [`NetemState`], [`NetemGemodel`]; docs/experiments.md §3 revised 2026-11-24),
//! which the `netem-state` / `netem-gemodel` error models use for the paper profiles. How a profile
//! name becomes one of these ([`ProfileForm`]: netem `gemodel` with calibrated 1.5-packet bursts by
//! default) is in `profile.rs`; every model a user names with its parameters, and the one
//! function both readers build it with, in [`models`].

mod ctmc;
mod gilbert_elliott;
pub mod models;
pub mod netem;
mod netem_gemodel;
mod netem_random;
mod netem_state;
mod profile;

pub use ctmc::{Ctmc, CtmcParams, HISTORY_SEGMENTS};
pub use gilbert_elliott::{GeParams, GilbertElliott};
pub use netem_gemodel::{GeState, NetemGeParams, NetemGemodel};
pub use netem_random::{NetemRandom, NetemRandomParams};
pub use netem_state::{GiState, NetemState, NetemStateParams};
pub use profile::{
    ErrorModel, FormError, ProfileForm, DEFAULT_BURST_MEAN, DEFAULT_BURST_PACKETS,
    DEFAULT_STATE_BURST_PACKETS, ERROR_MODEL_NAMES,
};

use coaplab_base::rng::{Random, SeededRandom};
use coaplab_base::time::{Duration, Instant};

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
    /// Time-based two-state continuous-time Markov chain (docs/experiments.md §3 default).
    Ctmc(CtmcParams),
    /// Packet-based Gilbert-Elliott chain (netem `loss gemodel p r 1-h 1-k`) in `f64` draws.
    GilbertElliott(GeParams),
    /// netem `loss random P [CORR]`, netem's integer arithmetic.
    NetemRandom(NetemRandomParams),
    /// netem `loss state p13 p31 p32 p23 p14` (4-state model), netem's integer arithmetic.
    NetemState(NetemStateParams),
    /// netem `loss gemodel p r 1-h 1-k`, netem's integer arithmetic.
    NetemGemodel(NetemGeParams),
}

/// The bursty profiles of docs/experiments.md §3: (loss in the low-error state, loss in the error
/// burst, average loss).
fn table5(name: &str) -> Option<(f64, f64, f64)> {
    match name {
        "medium" => Some((0.0, 0.5, 0.10)),
        "high" => Some((0.02, 0.8, 0.18)),
        _ => None,
    }
}

/// Why a netem form of a profile cannot be built.
#[derive(Debug, Clone, PartialEq)]
pub enum ProfileError {
    /// Not one of [`PROFILE_NAMES`].
    UnknownProfile,
    /// The mean burst length is below the least the model can express for this profile.
    BurstTooShort {
        /// The least mean burst length, in packets.
        min_packets: f64,
    },
    /// The mean burst duration of the time-based chain is not above zero.
    BurstNotPositive,
}

impl std::fmt::Display for ProfileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProfileError::UnknownProfile => write!(f, "one of none, low, medium, high"),
            ProfileError::BurstTooShort { min_packets } => {
                write!(f, "a mean burst length of at least {min_packets} packets")
            }
            ProfileError::BurstNotPositive => write!(f, "a mean burst duration above 0 s"),
        }
    }
}

/// The names [`LossModel::profile`] accepts.
pub const PROFILE_NAMES: [&str; 4] = ["none", "low", "medium", "high"];

impl LossModel {
    /// The error profile named `none`, `low` (Bernoulli 2 %), `medium` (CTMC, burst 1 s at
    /// 50 %, good 4 s at 0 %) or `high` (CTMC, burst 1 s at 80 %, good 3.875 s at 2 %): the
    /// time-based form with the 1-s bursts used before the calibration. Scenarios and
    /// `coaplab emulate` realise the profiles through [`ProfileForm`] (calibrated netem
    /// `gemodel` unless told otherwise).
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
    /// Gilbert-Elliott chain of docs/experiments.md §3 (example `r = 0.1`, [`GeParams::MEDIUM`],
    /// [`GeParams::HIGH`]) instead of the time-based chain. `none` and `low` are as in
    /// [`LossModel::profile`]: the Gilbert-Elliott form of `low` (`p = 0`, `1-k = 0.02`)
    /// never leaves GOOD, so it is the same Bernoulli 2 % process.
    pub fn profile_gilbert_elliott(name: &str) -> Option<LossModel> {
        match name {
            "medium" => Some(LossModel::GilbertElliott(GeParams::MEDIUM)),
            "high" => Some(LossModel::GilbertElliott(GeParams::HIGH)),
            _ => LossModel::profile(name),
        }
    }

    /// The profile `name` in netem terms with the Gilbert-Elliott model (`loss gemodel`):
    /// `1-k` and `1-h` are Table 5's state loss rates, the share of packets finding BAD
    /// `π_B = (average − 1-k)/(1-h − 1-k)` follows from the average, `r = 1/burst_packets`
    /// (mean BAD sojourn in packets) and `p = r·π_B/(1 − π_B)`. `low` is netem's `loss random
    /// 2%`, `none` no loss.
    pub fn profile_netem_gemodel(name: &str, burst_packets: f64) -> Result<Self, ProfileError> {
        let Some((good, bad, mean)) = table5(name) else {
            return Self::profile_netem_plain(name);
        };
        if burst_packets.is_nan() || burst_packets < 1.0 {
            return Err(ProfileError::BurstTooShort { min_packets: 1.0 });
        }
        let pi_b = (mean - good) / (bad - good);
        let r = 1.0 / burst_packets;
        let p = r * pi_b / (1.0 - pi_b);
        NetemGeParams::from_fractions(p.min(1.0), r, bad, good)
            .map(LossModel::NetemGemodel)
            .ok_or(ProfileError::BurstTooShort { min_packets: 1.0 })
    }

    /// The profile `name` in netem terms with the 4-state model (`loss state`), for bursts
    /// (states 2 and 3) of mean `L = burst_packets` packets:
    /// * gap (states 1, 4) losses isolated at Table 5's low-error rate `e_G`:
    ///   `p14 = e_G/(1 − e_G)`;
    /// * in a burst, the next packet lost with the burst rate `e_B` whether the last one was
    ///   or not, as far as the chain allows: `p23 = e_B`, `p32 = 1 − e_B`;
    /// * bursts of mean `L`: `p31 = 1/(L·e_B)` (needs `L ≥ 1/e_B²`);
    /// * the burst share `π_B` from the average as for gemodel:
    ///   `p13 = (1 + p14)·π_B/(L·(1 − π_B))`.
    ///
    /// `low` is netem's `loss random 2%`, `none` no loss.
    pub fn profile_netem_state(name: &str, burst_packets: f64) -> Result<Self, ProfileError> {
        let Some((good, bad, mean)) = table5(name) else {
            return Self::profile_netem_plain(name);
        };
        let min_packets = 1.0 / (bad * bad);
        if burst_packets.is_nan() || burst_packets < min_packets {
            return Err(ProfileError::BurstTooShort { min_packets });
        }
        let pi_b = (mean - good) / (bad - good);
        let p14 = good / (1.0 - good);
        let p13 = (1.0 + p14) * pi_b / (burst_packets * (1.0 - pi_b));
        let p31 = 1.0 / (burst_packets * bad);
        let f = |x: f64| netem::prob_from_fraction(x.min(1.0));
        let params = (|| {
            let p32 = f(1.0 - bad)?;
            Some(NetemStateParams {
                p13: f(p13)?,
                // At the least burst length p31 + p32 = 100 % exactly, which the two roundings
                // may overshoot by one unit.
                p31: f(p31)?.min(u32::MAX - p32),
                p32,
                p23: f(bad)?,
                p14: f(p14)?,
            })
        })();
        match params {
            Some(p) if p.invalid_parameter().is_none() => Ok(LossModel::NetemState(p)),
            _ => Err(ProfileError::BurstTooShort { min_packets }),
        }
    }

    /// The profile `name` with its bursty cases realised by the time-based chain with mean
    /// burst `burst_mean` and the low-error mean that keeps the profile's average
    /// ([`ProfileForm`] with [`ErrorModel::Ctmc`]). `none` and `low` are as in
    /// [`LossModel::profile`].
    pub fn profile_ctmc(name: &str, burst_mean: Duration) -> Result<Self, ProfileError> {
        let Some(table) = table5(name) else {
            return LossModel::profile(name).ok_or(ProfileError::UnknownProfile);
        };
        profile::ctmc_params(table, burst_mean)
            .map(LossModel::Ctmc)
            .ok_or(ProfileError::BurstNotPositive)
    }

    /// `none` and `low` in netem terms (`low` = `loss random 2%`).
    fn profile_netem_plain(name: &str) -> Result<Self, ProfileError> {
        match name {
            "none" => Ok(LossModel::None),
            "low" => Ok(LossModel::NetemRandom(NetemRandomParams {
                loss: netem::prob_from_fraction(0.02).unwrap_or(0),
                correlation: 0,
            })),
            _ => Err(ProfileError::UnknownProfile),
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
            LossModel::NetemRandom(n) => n.mean_loss(),
            LossModel::NetemState(n) => n.mean_loss(),
            LossModel::NetemGemodel(n) => n.mean_loss(),
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
            LossModel::NetemState(n) => n.invalid_parameter(),
            // Every u32 is a valid netem probability.
            LossModel::NetemRandom(_) | LossModel::NetemGemodel(_) => None,
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
    NetemRandom(NetemRandom),
    NetemState(NetemState),
    NetemGemodel(NetemGemodel),
}

impl LossStage {
    /// A stage for `model`. `draws` decides each packet; `chain` drives the CTMC's state
    /// trajectory (kept separate so the channel's bursts do not depend on the traffic). The
    /// netem models change state per packet, so they draw only from `draws`; netem's correlated
    /// random loss takes its first value from `chain`, as `init_crandom()` takes it from the
    /// kernel's entropy pool rather than from the qdisc's generator.
    pub fn new(model: &LossModel, draws: SeededRandom, chain: SeededRandom) -> Self {
        let kind = match *model {
            LossModel::None => Kind::None,
            LossModel::Bernoulli { p } => Kind::Bernoulli { p, draws },
            LossModel::Ctmc(params) => Kind::Ctmc(Box::new(Ctmc::new(params, chain, draws))),
            LossModel::GilbertElliott(params) => {
                Kind::GilbertElliott(GilbertElliott::new(params, draws))
            }
            LossModel::NetemRandom(params) => {
                let mut chain = chain;
                let last = netem::draw_u32(&mut chain);
                Kind::NetemRandom(NetemRandom::new(params, last, draws))
            }
            LossModel::NetemState(params) => Kind::NetemState(NetemState::new(params, draws)),
            LossModel::NetemGemodel(params) => Kind::NetemGemodel(NetemGemodel::new(params, draws)),
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
            Kind::NetemRandom(n) => n.lose(),
            Kind::NetemState(n) => n.lose(),
            Kind::NetemGemodel(n) => n.lose(),
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
    fn netem_profiles_express_table_5() {
        let f = |x: f64| netem::prob_from_fraction(x).unwrap();
        // gemodel, 10-packet bursts: medium p = 0.1·0.2/0.8 = 2.5 %, r = 10 %, 1-h = 50 %,
        // 1-k = 0; high p = 0.1·(0.16/0.78)/(0.62/0.78) = 0.1·0.16/0.62, 1-h = 80 %, 1-k = 2 %.
        let medium = LossModel::profile_netem_gemodel("medium", 10.0).unwrap();
        assert_eq!(
            medium,
            LossModel::NetemGemodel(NetemGeParams {
                p: f(0.025),
                r: f(0.1),
                h: u32::MAX - f(0.5),
                k1: 0
            })
        );
        let high = LossModel::profile_netem_gemodel("high", 10.0).unwrap();
        let LossModel::NetemGemodel(g) = high else {
            panic!("{high:?}")
        };
        assert_eq!(
            (g.p, g.r, g.one_minus_h(), g.k1),
            (f(0.016 / 0.62), f(0.1), f(0.8), f(0.02))
        );
        // The calibrated default, 1.5-packet bursts: r = 2/3; medium p = (2/3)·0.2/0.8 = 1/6;
        // high p = (2/3)·0.16/0.62. In tc's terms: medium `loss gemodel 16.6667% 66.6667% 50% 0%`.
        let LossModel::NetemGemodel(g) =
            LossModel::profile_netem_gemodel("medium", DEFAULT_BURST_PACKETS).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (g.p, g.r, g.one_minus_h(), g.k1),
            (f(1.0 / 6.0), f(2.0 / 3.0), f(0.5), 0)
        );
        let LossModel::NetemGemodel(g) =
            LossModel::profile_netem_gemodel("high", DEFAULT_BURST_PACKETS).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (g.p, g.r, g.one_minus_h(), g.k1),
            (f(2.0 / 3.0 * 0.16 / 0.62), f(2.0 / 3.0), f(0.8), f(0.02))
        );
        // 4-state, 10-packet bursts (formulas on profile_netem_state).
        let LossModel::NetemState(s) = LossModel::profile_netem_state("medium", 10.0).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (s.p13, s.p31, s.p32, s.p23, s.p14),
            (f(0.025), f(0.2), f(0.5), f(0.5), 0)
        );
        // Every form delivers the Table 5 average per packet offered (to u32 rounding).
        for (name, mean) in [
            ("none", 0.0),
            ("low", 0.02),
            ("medium", 0.10),
            ("high", 0.18),
        ] {
            for burst in [1.0, 1.5, 4.0, 10.0, 40.0] {
                let ge = LossModel::profile_netem_gemodel(name, burst).unwrap();
                assert!((ge.mean_loss() - mean).abs() < 1e-8, "{name} {burst}");
                if burst >= 4.0 {
                    let st = LossModel::profile_netem_state(name, burst).unwrap();
                    assert!((st.mean_loss() - mean).abs() < 1e-8, "{name} {burst}");
                }
            }
        }
        // Bursts shorter than the model can express are refused with the least length.
        assert_eq!(
            LossModel::profile_netem_state("medium", 3.0),
            Err(ProfileError::BurstTooShort { min_packets: 4.0 })
        );
        assert_eq!(
            LossModel::profile_netem_gemodel("medium", 0.5),
            Err(ProfileError::BurstTooShort { min_packets: 1.0 })
        );
        assert_eq!(
            LossModel::profile_netem_gemodel("severe", 10.0),
            Err(ProfileError::UnknownProfile)
        );
    }

    #[test]
    fn netem_stages_draw_per_packet_from_the_draws_stream() {
        // The stage is the model on `draws`; the instants do not matter (per packet offered).
        let LossModel::NetemGemodel(ge) = LossModel::profile_netem_gemodel("high", 10.0).unwrap()
        else {
            panic!()
        };
        let mut stage =
            LossStage::new(&LossModel::NetemGemodel(ge), stream(4, "d"), stream(4, "c"));
        let mut alone = NetemGemodel::new(ge, stream(4, "d"));
        for i in 0..10_000 {
            assert_eq!(
                stage.lose(Instant::from_millis(i % 7)),
                alone.lose(),
                "packet {i}"
            );
        }
        // Correlated random loss: init_crandom()'s first value comes from `chain`.
        let params = NetemRandomParams {
            loss: netem::prob_from_fraction(0.3).unwrap(),
            correlation: netem::prob_from_fraction(0.5).unwrap(),
        };
        let mut stage = LossStage::new(
            &LossModel::NetemRandom(params),
            stream(4, "d"),
            stream(4, "c"),
        );
        let first = netem::draw_u32(&mut stream(4, "c"));
        let mut alone = NetemRandom::new(params, first, stream(4, "d"));
        for i in 0..10_000 {
            assert_eq!(stage.lose(Instant::ZERO), alone.lose(), "packet {i}");
        }
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
