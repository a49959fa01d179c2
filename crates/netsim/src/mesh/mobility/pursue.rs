//! Pursue as BonnMotion's `Pursue` builds it (`models/Pursue.java`, `generate`; Camp et al.'s
//! pursue model): one target moves like Random Waypoint without pauses (start and destinations
//! uniform in the area, speeds uniform in `[minspeed, maxspeed)`); each pursuer, from its
//! position `p` at time `t`, heads for
//!
//! ```text
//! p' = p + aggressiveness·(target(t) − p) + (2u − 1)·pursueRandomnessMagnitude   (per axis)
//! ```
//!
//! clamped to the area. If reaching `p'` before the target's next waypoint time `t_next` would
//! need more than `maxspeed`, the pursuer goes only the fraction `((max − min)·u + min) / speed`
//! of the way, arriving at `t_next`; otherwise it travels at a uniform speed in
//! `[minspeed, maxspeed)`.
//!
//! Streams: the target draws from its own stream (`mesh/mobility/pursue-target`), every
//! pursuer from its node's stream. One guard BonnMotion lacks: a step of length 0 (randomness 0
//! with the pursuer on the target) jumps to `t_next` instead of repeating forever.

use coaplab_base::rng::Random;

use super::random_waypoint::distance;
use super::trajectory::{Between, Trajectory};
use super::{Area, MobilityError, Points};

/// Pursue's parameters (BonnMotion `Pursue`: `-p`, `-o`, `-k`, `-m`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pursue {
    /// `minspeed` (m/s).
    pub min_speed: f64,
    /// `maxspeed` (m/s).
    pub max_speed: f64,
    /// `aggressiveness` in [0, 1]: the fraction of the distance to the target closed per step.
    pub aggressiveness: f64,
    /// `pursueRandomnessMagnitude` in [0, 1] (m): the uniform jitter added per axis.
    pub pursue_randomness_magnitude: f64,
}

impl Pursue {
    /// The target's path: Random Waypoint without pause from a uniform start.
    pub(super) fn target(
        &self,
        area: Area,
        duration_s: f64,
        rng: &mut dyn Random,
    ) -> Result<Trajectory, MobilityError> {
        let mut points = Points::new(u16::MAX);
        let mut t = 0.0;
        let mut src = (area.x * rng.uniform01(), area.y * rng.uniform01());
        points.push(0.0, src)?;
        while t < duration_s {
            points.step()?;
            let dst = (area.x * rng.uniform01(), area.y * rng.uniform01());
            let speed = (self.max_speed - self.min_speed) * rng.uniform01() + self.min_speed;
            t += distance(src, dst) / speed;
            points.push(t, dst)?;
            src = dst;
        }
        Ok(Trajectory::new(points.into_vec(), Between::Linear))
    }

    /// One pursuer's waypoints from `start` until `duration_s`.
    pub(super) fn generate(
        &self,
        target: &Trajectory,
        start: (f64, f64),
        area: Area,
        duration_s: f64,
        rng: &mut dyn Random,
        node: u16,
    ) -> Result<Points, MobilityError> {
        let mut points = Points::new(node);
        let mut t = 0.0;
        let mut src = start;
        points.push(0.0, src)?;
        let changes = target.points();
        let speed_draw = |rng: &mut dyn Random| {
            (self.max_speed - self.min_speed) * rng.uniform01() + self.min_speed
        };
        while t < duration_s {
            points.step()?;
            // The target's first waypoint time after t (BonnMotion's `gmi` scan).
            let i = changes.partition_point(|w| w.t_s <= t);
            let next = changes.get(i).map_or(duration_s, |w| w.t_s);
            let aim = target.position_at(t);
            let mag = self.pursue_randomness_magnitude;
            let new_x =
                src.0 + self.aggressiveness * (aim.0 - src.0) + (2.0 * rng.uniform01() - 1.0) * mag;
            let new_y =
                src.1 + self.aggressiveness * (aim.1 - src.1) + (2.0 * rng.uniform01() - 1.0) * mag;
            let mut dst = (new_x.clamp(0.0, area.x), new_y.clamp(0.0, area.y));
            let dist = distance(src, dst);
            let speed = dist / (next - t);
            if speed > self.max_speed {
                let c_dst = speed_draw(rng) / speed;
                let c_src = 1.0 - c_dst;
                dst = (c_src * src.0 + c_dst * dst.0, c_src * src.1 + c_dst * dst.1);
                t = next;
            } else {
                let step = dist / speed_draw(rng);
                t = if step > 0.0 { t + step } else { next };
            }
            points.push(t, dst)?;
            src = dst;
        }
        Ok(points)
    }
}
