//! The RFC 6298 smoothed-RTT estimator, as CoCoA's strong and weak estimators use it
//! (RFC 6298 §2) and as FASOR's FastRTO reuses it (draft-ietf-core-fasor-02).
//!
//! One update rule, parameterised by the gains, the RTTVAR multiplier `K` and the clock
//! granularity `G`. The CoCoA draft's pseudocode omits `abs()` and `max(G, ·)`; its prose and
//! its analysis appendix use them, and so do we by default (docs/algorithms.md, ambiguity #6). The
//! literal form is selectable with [`Form::PseudocodeLiteral`].
//!
//! State is real-valued, in f64 seconds (docs/algorithms.md, 'Conventions').

/// Which update formula to apply (docs/algorithms.md, ambiguity #6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Form {
    /// RFC 6298: `RTTVAR ← (1-β)·RTTVAR + β·|SRTT − R|`, `E = SRTT + max(G, K·RTTVAR)`.
    #[default]
    Rfc6298,
    /// The CoCoA draft's pseudocode as written: `RTTVAR ← (1-β)·RTTVAR + β·(SRTT − R)` (no
    /// `abs`, so RTTVAR may go negative) and `E = SRTT + K·RTTVAR` (no `G`).
    PseudocodeLiteral,
}

impl Form {
    /// Parses the parameter value: `rfc6298` or `pseudocode_literal`.
    pub fn from_name(name: &str) -> Option<Form> {
        match name {
            "rfc6298" => Some(Form::Rfc6298),
            "pseudocode_literal" => Some(Form::PseudocodeLiteral),
            _ => None,
        }
    }
}

/// The constants of one estimator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gains {
    /// `ALPHA`: SRTT gain (RFC 6298: 1/8).
    pub alpha: f64,
    /// `BETA`: RTTVAR gain (RFC 6298: 1/4).
    pub beta: f64,
    /// `K`: RTTVAR multiplier (CoCoA strong 4, weak 1).
    pub k: f64,
    /// `G`: clock granularity in seconds, the floor of `K·RTTVAR` (CoCoA: 1 ms).
    pub g_s: f64,
    /// Which formula (docs/algorithms.md, ambiguity #6).
    pub form: Form,
}

impl Gains {
    /// RFC 6298 gains (α = 1/8, β = 1/4) with the given `K` and `G`.
    pub fn rfc6298(k: f64, g_s: f64) -> Gains {
        Gains {
            alpha: 0.125,
            beta: 0.25,
            k,
            g_s,
            form: Form::Rfc6298,
        }
    }
}

/// One estimator's state: `{srtt, rttvar, E, init}` of draft-ietf-core-cocoa-03.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimator {
    /// Smoothed RTT in seconds (meaningless until `init`).
    pub srtt_s: f64,
    /// RTT variation in seconds (meaningless until `init`).
    pub rttvar_s: f64,
    /// The estimator's RTO `E` in seconds: the initial RTO until the first sample.
    pub rto_s: f64,
    /// True once a sample has been taken.
    pub init: bool,
}

impl Estimator {
    /// An estimator before any sample, with `E = initial_rto_s`.
    pub fn new(initial_rto_s: f64) -> Estimator {
        Estimator {
            srtt_s: 0.0,
            rttvar_s: 0.0,
            rto_s: initial_rto_s,
            init: false,
        }
    }

    /// `est_update(e, R, K)` of RFC 6298 §2: the first sample seeds `SRTT = R`, `RTTVAR = R/2`.
    /// Returns the new `E`.
    pub fn update(&mut self, r_s: f64, gains: &Gains) -> f64 {
        self.update_seeding(r_s, r_s / 2.0, gains)
    }

    /// As [`Estimator::update`], but a first sample seeds `RTTVAR = first_rttvar_s` (FASOR's
    /// normative text seeds `R/(2K)`, draft-ietf-core-fasor-02). Later samples ignore
    /// `first_rttvar_s`.
    pub fn update_seeding(&mut self, r_s: f64, first_rttvar_s: f64, gains: &Gains) -> f64 {
        if !self.init {
            self.srtt_s = r_s;
            self.rttvar_s = first_rttvar_s;
            self.init = true;
        } else {
            // RFC 6298 §2.3: RTTVAR first, with the OLD SRTT in the error term.
            let err = match gains.form {
                Form::Rfc6298 => (self.srtt_s - r_s).abs(),
                Form::PseudocodeLiteral => self.srtt_s - r_s,
            };
            self.rttvar_s = (1.0 - gains.beta) * self.rttvar_s + gains.beta * err;
            self.srtt_s = (1.0 - gains.alpha) * self.srtt_s + gains.alpha * r_s;
        }
        let spread = gains.k * self.rttvar_s;
        self.rto_s = match gains.form {
            Form::Rfc6298 => self.srtt_s + spread.max(gains.g_s),
            Form::PseudocodeLiteral => self.srtt_s + spread,
        };
        self.rto_s
    }
}

/// Free-function form of [`Estimator::update`], named as in RFC 6298.
pub fn est_update(e: &mut Estimator, r_s: f64, gains: &Gains) -> f64 {
    e.update(r_s, gains)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} != {b}");
    }

    #[test]
    fn first_sample_seeds_srtt_and_half_rttvar() {
        // draft-ietf-core-cocoa-03 A ex 1: srtt 0.1, rttvar 0.05, E = 0.1 + max(0.001, 0.2) = 0.3.
        let mut e = Estimator::new(2.0);
        close(e.rto_s, 2.0);
        close(est_update(&mut e, 0.1, &Gains::rfc6298(4.0, 0.001)), 0.3);
        close(e.srtt_s, 0.1);
        close(e.rttvar_s, 0.05);
        assert!(e.init);
    }

    #[test]
    fn later_samples_update_rttvar_with_the_old_srtt() {
        // draft-ietf-core-cocoa-03 A ex 2-3 (strong, K = 4): rttvar 0.0375, 0.028125; E 0.25,
        // 0.2125.
        let g = Gains::rfc6298(4.0, 0.001);
        let mut e = Estimator::new(2.0);
        e.update(0.1, &g);
        close(e.update(0.1, &g), 0.25);
        close(e.rttvar_s, 0.0375);
        close(e.update(0.1, &g), 0.2125);
        close(e.rttvar_s, 0.028125);
        // ANRW 2018 example 1: a 5.0 s sample after that.
        close(e.update(5.0, &g), 5.696875);
        close(e.rttvar_s, 1.24609375);
        close(e.srtt_s, 0.7125);
    }

    #[test]
    fn weak_estimator_uses_k_one() {
        // draft-ietf-core-cocoa-03 A ex 4-6 (weak, K = 1): E_w 1.8, 1.65, 1.5375.
        let g = Gains::rfc6298(1.0, 0.001);
        let mut e = Estimator::new(2.0);
        close(e.update(1.2, &g), 1.8);
        close(e.update(1.2, &g), 1.65);
        close(e.rttvar_s, 0.45);
        close(e.update(1.2, &g), 1.5375);
        close(e.rttvar_s, 0.3375);
    }

    #[test]
    fn granularity_floors_the_variation_term() {
        // Identical samples drive RTTVAR to 0; E never drops below SRTT + G.
        let g = Gains::rfc6298(4.0, 0.001);
        let mut e = Estimator::new(2.0);
        for _ in 0..200 {
            e.update(0.05, &g);
        }
        close(e.rto_s, 0.051);
    }

    #[test]
    fn pseudocode_literal_has_no_abs_and_no_granularity() {
        let g = Gains {
            form: Form::PseudocodeLiteral,
            ..Gains::rfc6298(4.0, 0.001)
        };
        let mut e = Estimator::new(2.0);
        e.update(0.1, &g);
        // A larger sample: SRTT - R = -0.9, so RTTVAR = 0.75·0.05 - 0.225 = -0.1875.
        e.update(1.0, &g);
        close(e.rttvar_s, -0.1875);
        close(e.srtt_s, 0.2125);
        close(e.rto_s, 0.2125 - 0.75);
        // The RFC form on the same samples.
        let mut r = Estimator::new(2.0);
        let rfc = Gains::rfc6298(4.0, 0.001);
        r.update(0.1, &rfc);
        r.update(1.0, &rfc);
        close(r.rttvar_s, 0.2625);
        close(r.rto_s, 0.2125 + 1.05);
        // With RTTVAR at zero the literal form has no G floor.
        let mut z = Estimator::new(2.0);
        z.update_seeding(0.1, 0.0, &g);
        close(z.rto_s, 0.1);
        assert_eq!(Form::from_name("pseudocode_literal"), Some(g.form));
        assert_eq!(Form::from_name("rfc6298"), Some(Form::Rfc6298));
        assert_eq!(Form::from_name("x"), None);
    }

    #[test]
    fn custom_first_rttvar_seed_for_fasor() {
        // draft-ietf-core-fasor-02: R/(2K) = R/8 gives FastRTO = 1.5·R for R = 0.8.
        let g = Gains::rfc6298(4.0, 0.001);
        let mut e = Estimator::new(2.0);
        close(e.update_seeding(0.8, 0.8 / 8.0, &g), 1.2);
        close(e.update_seeding(0.8, 99.0, &g), 1.1);
    }
}
