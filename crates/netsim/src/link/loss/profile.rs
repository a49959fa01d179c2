//! How the named error profiles (`none`, `low`, `medium`, `high`) become a loss process: the
//! model family and its one free parameter, the mean burst length.
//!
//! The sources give each profile's state loss rates and average (the table in
//! [`super::table5`]) but not how long a burst lasts. That length is calibrated on the declared
//! calibration targets (docs/calibration.md, "The loss process"); [`ProfileForm::DEFAULT`] is
//! the winner of that calibration, and every family stays selectable. The scenario reader and
//! `coaplab emulate` both realise profiles through [`ProfileForm::realise`], so a profile name
//! means the same process in the simulator and in the emulator.

use coaplab_base::time::Duration;

use super::{CtmcParams, LossModel, ProfileError};

/// The model family that realises `medium` and `high`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorModel {
    /// Linux netem `loss gemodel` (per packet, two states), netem's integer arithmetic.
    NetemGemodel,
    /// Linux netem `loss state` (per packet, four states), netem's integer arithmetic.
    NetemState,
    /// The time-based two-state chain (exponential sojourns in seconds).
    Ctmc,
    /// The packet-based Gilbert-Elliott chain in `f64` draws, with the fixed `r = 0.1` of the
    /// previous default example (kept for old result files; no burst parameter).
    GilbertElliott,
}

/// The names of [`ErrorModel`] as scenario files and `--error-model` spell them.
pub const ERROR_MODEL_NAMES: [&str; 4] =
    ["netem-gemodel", "netem-state", "ctmc", "gilbert-elliott"];

impl ErrorModel {
    /// The model named `name` ([`ERROR_MODEL_NAMES`]).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "netem-gemodel" => ErrorModel::NetemGemodel,
            "netem-state" => ErrorModel::NetemState,
            "ctmc" => ErrorModel::Ctmc,
            "gilbert-elliott" => ErrorModel::GilbertElliott,
            _ => return None,
        })
    }

    /// Its name in [`ERROR_MODEL_NAMES`].
    pub fn name(self) -> &'static str {
        match self {
            ErrorModel::NetemGemodel => "netem-gemodel",
            ErrorModel::NetemState => "netem-state",
            ErrorModel::Ctmc => "ctmc",
            ErrorModel::GilbertElliott => "gilbert-elliott",
        }
    }

    /// True for the per-packet netem families, whose burst is counted in packets
    /// (`loss_burst_packets`).
    pub fn counts_packets(self) -> bool {
        matches!(self, ErrorModel::NetemGemodel | ErrorModel::NetemState)
    }

    /// True for the time-based chain, whose burst is a mean duration (`burst_mean_s`).
    pub fn counts_seconds(self) -> bool {
        self == ErrorModel::Ctmc
    }
}

/// A profile's realisation: the family, and the mean burst length in its unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProfileForm {
    /// The family.
    pub model: ErrorModel,
    /// Mean burst length in packets (netem families; unused by the others).
    pub burst_packets: f64,
    /// Mean burst duration (time-based chain; unused by the others).
    pub burst_mean: Duration,
}

/// Why a [`ProfileForm`] cannot be built from its settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormError {
    /// `loss_burst_packets` was given for a family that does not count packets.
    BurstPacketsNeedNetem,
    /// `burst_mean_s` was given for a family that is not the time-based chain.
    BurstSecondsNeedCtmc,
}

impl std::fmt::Display for FormError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FormError::BurstPacketsNeedNetem => {
                write!(
                    f,
                    "a burst in packets needs error model netem-gemodel or netem-state"
                )
            }
            FormError::BurstSecondsNeedCtmc => {
                write!(f, "a burst in seconds needs error model ctmc")
            }
        }
    }
}

impl std::error::Error for FormError {}

/// Mean burst length, in packets, of netem `loss gemodel` when none is given: the winner of
/// the calibration (docs/calibration.md, "The loss process": objective 0.287, the lowest of
/// the 35 candidates).
pub const DEFAULT_BURST_PACKETS: f64 = 1.5;

/// Mean burst length, in packets, of netem `loss state` when none is given: the family's best
/// candidate in the calibration grid, which is also the least burst its 4-state chain can give
/// `medium` (`1/0.5²`). It is not eligible (2 of 800 calibration flows gave up).
pub const DEFAULT_STATE_BURST_PACKETS: f64 = 4.0;

/// Mean burst duration of the time-based chain when none is given: the family's best candidate
/// in the calibration grid (objective 0.335, second to netem `loss gemodel`).
pub const DEFAULT_BURST_MEAN: Duration = Duration::from_millis(200);

impl ProfileForm {
    /// The calibrated default: netem `loss gemodel` with bursts of [`DEFAULT_BURST_PACKETS`].
    /// A family chosen without a burst gets its own best candidate of the calibration grid
    /// ([`DEFAULT_STATE_BURST_PACKETS`], [`DEFAULT_BURST_MEAN`]).
    pub const DEFAULT: ProfileForm = ProfileForm {
        model: ErrorModel::NetemGemodel,
        burst_packets: DEFAULT_BURST_PACKETS,
        burst_mean: DEFAULT_BURST_MEAN,
    };

    /// The form for `model` (default family when `None`) with optional burst settings, each
    /// accepted only by a family that has that unit.
    pub fn new(
        model: Option<ErrorModel>,
        burst_packets: Option<f64>,
        burst_mean: Option<Duration>,
    ) -> Result<Self, FormError> {
        let model = model.unwrap_or(Self::DEFAULT.model);
        if burst_packets.is_some() && !model.counts_packets() {
            return Err(FormError::BurstPacketsNeedNetem);
        }
        if burst_mean.is_some() && !model.counts_seconds() {
            return Err(FormError::BurstSecondsNeedCtmc);
        }
        let default_packets = match model {
            ErrorModel::NetemState => DEFAULT_STATE_BURST_PACKETS,
            _ => DEFAULT_BURST_PACKETS,
        };
        Ok(ProfileForm {
            model,
            burst_packets: burst_packets.unwrap_or(default_packets),
            burst_mean: burst_mean.unwrap_or(DEFAULT_BURST_MEAN),
        })
    }

    /// Profile `name` realised in this form.
    pub fn realise(&self, name: &str) -> Result<LossModel, ProfileError> {
        match self.model {
            ErrorModel::NetemGemodel => LossModel::profile_netem_gemodel(name, self.burst_packets),
            ErrorModel::NetemState => LossModel::profile_netem_state(name, self.burst_packets),
            ErrorModel::Ctmc => LossModel::profile_ctmc(name, self.burst_mean),
            ErrorModel::GilbertElliott => {
                LossModel::profile_gilbert_elliott(name).ok_or(ProfileError::UnknownProfile)
            }
        }
    }
}

impl Default for ProfileForm {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The time-based chain of a bursty profile with mean burst `burst_mean`: the low-error mean
/// `burst·(1 − π_B)/π_B` keeps the profile's average.
pub(super) fn ctmc_params(
    (good, bad, mean): (f64, f64, f64),
    burst_mean: Duration,
) -> Option<CtmcParams> {
    let pi_b = (mean - good) / (bad - good);
    let b = burst_mean.as_secs_f64();
    let params = CtmcParams {
        burst_mean,
        good_mean: Duration::from_secs_f64_round_us(b * (1.0 - pi_b) / pi_b),
        loss_good: good,
        loss_burst: bad,
    };
    params.invalid_parameter().is_none().then_some(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_round_trips() {
        for name in ERROR_MODEL_NAMES {
            assert_eq!(ErrorModel::from_name(name).unwrap().name(), name);
        }
        assert_eq!(ErrorModel::from_name("gemodel"), None);
    }

    #[test]
    fn the_default_is_netem_gemodel_with_the_calibrated_burst() {
        let form = ProfileForm::new(None, None, None).unwrap();
        assert_eq!(form, ProfileForm::DEFAULT);
        assert_eq!(
            form.realise("medium").unwrap(),
            LossModel::profile_netem_gemodel("medium", DEFAULT_BURST_PACKETS).unwrap()
        );
    }

    #[test]
    fn each_family_defaults_to_its_own_calibration_optimum() {
        let burst = |m| ProfileForm::new(Some(m), None, None).unwrap();
        assert_eq!(burst(ErrorModel::NetemGemodel).burst_packets, 1.5);
        assert_eq!(burst(ErrorModel::NetemState).burst_packets, 4.0);
        assert_eq!(
            burst(ErrorModel::Ctmc).burst_mean,
            Duration::from_millis(200)
        );
        // netem-state's default is the least burst it can give `medium`: it must build.
        assert!(burst(ErrorModel::NetemState).realise("medium").is_ok());
    }

    #[test]
    fn a_burst_unit_is_accepted_only_by_its_family() {
        assert_eq!(
            ProfileForm::new(Some(ErrorModel::Ctmc), Some(2.0), None),
            Err(FormError::BurstPacketsNeedNetem)
        );
        assert_eq!(
            ProfileForm::new(None, None, Some(Duration::from_millis(500))),
            Err(FormError::BurstSecondsNeedCtmc)
        );
    }

    #[test]
    fn the_time_based_chain_keeps_each_profile_average() {
        let form = ProfileForm::new(
            Some(ErrorModel::Ctmc),
            None,
            Some(Duration::from_millis(400)),
        )
        .unwrap();
        let LossModel::Ctmc(m) = form.realise("medium").unwrap() else {
            panic!("not a chain")
        };
        assert_eq!(m.burst_mean, Duration::from_millis(400));
        assert_eq!(m.good_mean, Duration::from_millis(1_600));
        assert!((m.mean_loss() - 0.10).abs() < 1e-12);
        let LossModel::Ctmc(h) = form.realise("high").unwrap() else {
            panic!("not a chain")
        };
        assert_eq!(h.good_mean, Duration::from_millis(1_550));
        assert!((h.mean_loss() - 0.18).abs() < 1e-9);
        // At 1 s the chain is the old fixed profiles.
        let one_s =
            ProfileForm::new(Some(ErrorModel::Ctmc), None, Some(Duration::from_secs(1))).unwrap();
        assert_eq!(
            one_s.realise("medium").unwrap(),
            LossModel::Ctmc(CtmcParams::MEDIUM)
        );
        assert_eq!(
            one_s.realise("high").unwrap(),
            LossModel::Ctmc(CtmcParams::HIGH)
        );
    }
}
