//! Gauss-Markov as BonnMotion's `OriginalGaussMarkov` builds it (`models/OriginalGaussMarkov.java`,
//! `generate`; the model of Liang & Haas, INFOCOM 1999): every `updateFrequency` seconds the
//! velocity vector becomes
//!
//! ```text
//! v_n = α·v_{n−1} + (1 − α)·v̄ + √(1 − α²)·σ·(N_x, N_y)
//! ```
//!
//! with `v̄ = avgSpeed·(cos θ, sin θ)` for one uniform direction `θ = 2π·u` per node, `σ` =
//! `velocityStdDev` and `N` standard normal draws; a speed above `maxSpeed` is scaled down to
//! it. The first interval has velocity 0 (BonnMotion starts from `(0, 0)`). A node reaching
//! the area's edge is reflected there: a waypoint on the edge, the crossing component of both
//! `v` and `v̄` negated, the rest of the interval continued (the `oob*` branches, with their
//! corner rule).
//!
//! BonnMotion's other module named `GaussMarkov` (Camp et al.'s variant: Gaussian changes of
//! direction and speed, no α) is not this one; the issue asks for α, so this is BonnMotion's
//! original Gauss-Markov.

use coaplab_base::rng::Random;

use super::{gaussian, Area, MobilityError, Points};

/// Gauss-Markov's parameters (BonnMotion `OriginalGaussMarkov`: `-w`, `-q`, `-s`, `-a`, `-m`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GaussMarkov {
    /// `alpha`: memory, 0 (random walk around the mean) to 1 (constant velocity).
    pub alpha: f64,
    /// `updateFrequency` (s): the interval between velocity updates.
    pub update_frequency: f64,
    /// `velocityStdDev` (m/s), per axis.
    pub velocity_std_dev: f64,
    /// `avgSpeed` (m/s): the length of the mean velocity.
    pub avg_speed: f64,
    /// `maxSpeed` (m/s).
    pub max_speed: f64,
}

impl GaussMarkov {
    /// The waypoints of one node from `start` until `duration_s`.
    pub(super) fn generate(
        &self,
        start: (f64, f64),
        area: Area,
        duration_s: f64,
        rng: &mut dyn Random,
        node: u16,
    ) -> Result<Points, MobilityError> {
        let (w, h) = (area.x, area.y);
        let alpha2 = 1.0 - self.alpha;
        let alpha3 = (1.0 - self.alpha * self.alpha).sqrt() * self.velocity_std_dev;
        let mut points = Points::new(node);
        let mut t = 0.0;
        let mut src = start;
        points.push(0.0, src)?;
        let dir = rng.uniform01() * 2.0 * std::f64::consts::PI;
        let mut mean = (self.avg_speed * dir.cos(), self.avg_speed * dir.sin());
        let mut v = (0.0, 0.0);
        let mut remaining = self.update_frequency;
        while t < duration_s {
            points.step()?;
            let mut dst = (src.0 + v.0 * remaining, src.1 + v.1 * remaining);
            let mut bottom = dst.1 < 0.0;
            let mut top = dst.1 > h;
            let left = dst.0 < 0.0;
            let mut right = dst.0 > w;
            let t1;
            if bottom || top || left || right {
                // Two edges crossed: keep the one the path meets first (BonnMotion's slopes).
                let r1 = (dst.1 - src.1) / (dst.0 - src.0);
                if top && right {
                    if r1 < (dst.1 - h) / (dst.0 - w) {
                        right = false;
                    } else {
                        top = false;
                    }
                } else if top && left {
                    // (BonnMotion's other outcome clears `left`, which is the last choice below.)
                    if r1 < (dst.1 - h) / dst.0 {
                        top = false;
                    }
                } else if bottom && left {
                    if r1 >= dst.1 / dst.0 {
                        bottom = false;
                    }
                } else if bottom && right {
                    if r1 < dst.1 / (dst.0 - w) {
                        bottom = false;
                    } else {
                        right = false;
                    }
                }
                let bounce;
                if top {
                    bounce = (h - src.1) / (dst.1 - src.1) * remaining;
                    dst = (src.0 + bounce * v.0, h);
                    v.1 = -v.1;
                    mean.1 = -mean.1;
                } else if bottom {
                    bounce = src.1 / (src.1 - dst.1) * remaining;
                    dst = (src.0 + bounce * v.0, 0.0);
                    v.1 = -v.1;
                    mean.1 = -mean.1;
                } else if right {
                    bounce = (w - src.0) / (dst.0 - src.0) * remaining;
                    dst = (w, src.1 + bounce * v.1);
                    v.0 = -v.0;
                    mean.0 = -mean.0;
                } else {
                    bounce = src.0 / (src.0 - dst.0) * remaining;
                    dst = (0.0, src.1 + bounce * v.1);
                    v.0 = -v.0;
                    mean.0 = -mean.0;
                }
                t1 = t + bounce;
                remaining -= bounce;
            } else {
                t1 = t + remaining;
                remaining = self.update_frequency;
                v = (
                    self.alpha * v.0 + alpha2 * mean.0 + alpha3 * gaussian(rng),
                    self.alpha * v.1 + alpha2 * mean.1 + alpha3 * gaussian(rng),
                );
                let speed = (v.0 * v.0 + v.1 * v.1).sqrt();
                if speed > self.max_speed {
                    let scale = self.max_speed / speed;
                    v = (scale * v.0, scale * v.1);
                }
            }
            points.push(t1, dst)?;
            src = dst;
            t = t1;
        }
        Ok(points)
    }
}
