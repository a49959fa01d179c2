//! Random Waypoint as BonnMotion's `RandomWaypoint` builds it (`models/RandomWaypoint.java`,
//! `generate`, dimension 3 = "x and y", the classical 2-D model): from the current position
//! pick a destination uniform in the area (`randomNextPosition`: x then y), a speed uniform in
//! `[minspeed, maxspeed)` (`(maxspeed − minspeed)·u + minspeed`), travel there in a straight
//! line, then pause `maxpause·u` (only when `maxpause > 0` and the arrival is before the end).

use coaplab_base::rng::Random;

use super::{Area, MobilityError, Points};

/// Random Waypoint's parameters (BonnMotion `RandomSpeedBase`: `-l`, `-h`, `-p`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RandomWaypoint {
    /// `minspeed` (m/s).
    pub min_speed: f64,
    /// `maxspeed` (m/s).
    pub max_speed: f64,
    /// `maxpause` (s).
    pub max_pause: f64,
}

impl RandomWaypoint {
    /// The waypoints of one node from `start` until `duration_s`.
    pub(super) fn generate(
        &self,
        start: (f64, f64),
        area: Area,
        duration_s: f64,
        rng: &mut dyn Random,
        node: u16,
    ) -> Result<Points, MobilityError> {
        let mut points = Points::new(node);
        let mut t = 0.0;
        let mut src = start;
        while t < duration_s {
            points.step()?;
            points.push(t, src)?;
            let dst = (area.x * rng.uniform01(), area.y * rng.uniform01());
            let speed = (self.max_speed - self.min_speed) * rng.uniform01() + self.min_speed;
            t += distance(src, dst) / speed;
            points.push(t, dst)?;
            if t < duration_s && self.max_pause > 0.0 {
                t += self.max_pause * rng.uniform01();
            }
            src = dst;
        }
        Ok(points)
    }
}

/// Euclidean distance (BonnMotion `Position.distance`).
pub(super) fn distance(a: (f64, f64), b: (f64, f64)) -> f64 {
    ((a.0 - b.0) * (a.0 - b.0) + (a.1 - b.1) * (a.1 - b.1)).sqrt()
}
