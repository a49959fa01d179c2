//! Manhattan Grid as BonnMotion's `ManhattanGrid` builds it (`models/ManhattanGrid.java`,
//! `generate`): streets every `x/xblocks` metres (vertical) and `y/yblocks` metres
//! (horizontal); a node moves along its street at `speed`, deciding every `updateDist` metres:
//!
//! * at a crossing it passes (`griddist ≤ dist`) it turns with probability `turnProb` (and
//!   always at the area's edge): it stops exactly on the crossing, then takes one of the two
//!   perpendicular directions with probability ½ each (the only one at an edge);
//! * otherwise, with probability `speedChangeProb` it draws a new speed `N(meanSpeed,
//!   speedStdDev)` (at least `minSpeed`); with probability `pauseProb` it pauses `maxPause·u`
//!   seconds and then draws a new speed.
//!
//! The node starts at its layout position, which must lie on a street (BonnMotion draws it on
//! a random street; here the layout places it): on a horizontal street it moves along x, on a
//! vertical one along y, at a crossing along x with BonnMotion's probability
//! `x(yblocks+1) / (x(yblocks+1) + y(xblocks+1))` (`init_xr`); the direction on that axis is
//! one draw (½ each), as in BonnMotion. The draw order is BonnMotion's minus the position draws.

use coaplab_base::rng::Random;

use super::{gaussian, Area, MobilityError, Points};

/// Manhattan Grid's parameters (BonnMotion `ManhattanGrid`: `-u -v -q -t -c -m -e -s -p -o`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ManhattanGrid {
    /// `xblocks`: blocks along x.
    pub x_blocks: u32,
    /// `yblocks`: blocks along y.
    pub y_blocks: u32,
    /// `updateDist` (m): the distance between speed/pause/turn decisions.
    pub update_dist: f64,
    /// `turnProb`: probability of turning at a crossing.
    pub turn_prob: f64,
    /// `speedChangeProb`: probability of a new speed every `updateDist`.
    pub speed_change_prob: f64,
    /// `minSpeed` (m/s).
    pub min_speed: f64,
    /// `meanSpeed` (m/s): the initial speed and the mean of new ones.
    pub mean_speed: f64,
    /// `speedStdDev` (m/s).
    pub speed_std_dev: f64,
    /// `pauseProb`: probability of a pause every `updateDist` (given no speed change).
    pub pause_prob: f64,
    /// `maxPause` (s).
    pub max_pause: f64,
}

/// Directions: BonnMotion's 0 = up (+y), 1 = down, 2 = right (+x), 3 = left.
fn step(p: (f64, f64), dist: f64, dir: u8) -> (f64, f64) {
    match dir {
        0 => (p.0, p.1 + dist),
        1 => (p.0, p.1 - dist),
        2 => (p.0 + dist, p.1),
        _ => (p.0 - dist, p.1),
    }
}

/// Relative tolerance for "on a street" at the start.
const ON_STREET_TOLERANCE: f64 = 1e-9;

impl ManhattanGrid {
    /// The waypoints of one node from `start` until `duration_s`.
    pub(super) fn generate(
        &self,
        start: (f64, f64),
        area: Area,
        duration_s: f64,
        rng: &mut dyn Random,
        node: u16,
    ) -> Result<Points, MobilityError> {
        let xdim = area.x / f64::from(self.x_blocks);
        let ydim = area.y / f64::from(self.y_blocks);
        let pause_prob = self.pause_prob + self.speed_change_prob;
        let init_xh = area.x * f64::from(self.y_blocks + 1);
        let init_xr = init_xh / (init_xh + area.y * f64::from(self.x_blocks + 1));
        let out = |p: (f64, f64)| p.0 < 0.0 || p.1 < 0.0 || p.0 > area.x || p.1 > area.y;
        let must_turn = |p: (f64, f64), dir: u8| {
            (dir == 0 && p.1 == area.y)
                || (dir == 1 && p.1 == 0.0)
                || (dir == 2 && p.0 == area.x)
                || (dir == 3 && p.0 == 0.0)
        };
        let align = |p: (f64, f64)| {
            (
                f64::from((p.0 / xdim + 0.5) as u32) * xdim,
                f64::from((p.1 / ydim + 0.5) as u32) * ydim,
            )
        };
        let on_street = |v: f64, dim: f64| {
            let k = (v / dim).round();
            ((v - k * dim).abs() <= dim * ON_STREET_TOLERANCE).then_some(k * dim)
        };
        let (hor, ver) = (on_street(start.1, ydim), on_street(start.0, xdim));
        let along_x = rng.uniform01() < init_xr;
        let (mut src, mut dir, mut griddist);
        match (hor, ver, along_x) {
            (Some(y), None, _) | (Some(y), Some(_), true) => {
                src = (start.0, y);
                dir = (rng.uniform01() * 2.0) as u8 + 2;
                griddist = src.0 - f64::from((src.0 / xdim) as u32) * xdim;
                if dir == 2 {
                    griddist = xdim - griddist;
                }
            }
            (_, Some(x), _) => {
                src = (x, start.1);
                dir = (rng.uniform01() * 2.0) as u8;
                griddist = src.1 - f64::from((src.1 / ydim) as u32) * ydim;
                if dir == 0 {
                    griddist = ydim - griddist;
                }
            }
            (None, None, _) => {
                return Err(MobilityError::OffStreet {
                    node,
                    x_m: start.0,
                    y_m: start.1,
                })
            }
        }
        let mut points = Points::new(node);
        points.push(0.0, src)?;
        let (mut t, mut st) = (0.0, 0.0);
        let mut pos = src;
        let mut speed = self.mean_speed;
        let mut dist = self.update_dist;
        while t < duration_s {
            points.step()?;
            let mut dst = step(pos, dist, dir);
            let exact = !out(dst) && must_turn(dst, dir);
            if out(dst) || exact || (griddist <= dist && rng.uniform01() < self.turn_prob) {
                let moved;
                if exact {
                    moved = dist;
                    dist = self.update_dist;
                } else {
                    moved = griddist;
                    dist -= moved;
                    if dist == 0.0 {
                        dist = self.update_dist;
                    }
                }
                t += moved / speed;
                dst = align(step(pos, moved, dir));
                if src != dst {
                    points.push(t, dst)?;
                    src = dst;
                }
                pos = dst;
                st = t;
                dir = if dir < 2 {
                    if pos.0 > 0.0 {
                        if pos.0 < area.x {
                            (rng.uniform01() * 2.0) as u8 + 2
                        } else {
                            3
                        }
                    } else {
                        2
                    }
                } else if pos.1 > 0.0 {
                    if pos.1 < area.y {
                        (rng.uniform01() * 2.0) as u8
                    } else {
                        1
                    }
                } else {
                    0
                };
                griddist = if dir < 2 { ydim } else { xdim };
            } else {
                t += dist / speed;
                pos = dst;
                griddist -= dist;
                dist = self.update_dist;
                if griddist < 0.0 {
                    griddist += if dir < 2 { ydim } else { xdim };
                }
                let rnd = rng.uniform01();
                if rnd < pause_prob {
                    if src != dst {
                        points.push(t, dst)?;
                        src = dst;
                    }
                    if rnd < self.speed_change_prob {
                        st = t;
                    } else {
                        t += rng.uniform01() * self.max_pause;
                        st = t;
                        points.push(t, dst)?;
                    }
                    speed =
                        (gaussian(rng) * self.speed_std_dev + self.mean_speed).max(self.min_speed);
                }
            }
        }
        if st < duration_s {
            // The stretch after the last recorded waypoint, cut at the end (BonnMotion adds
            // the position at `duration` on the same line).
            let d = super::random_waypoint::distance(src, pos) * (duration_s - st) / (t - st);
            points.push(duration_s, step(src, d, dir))?;
        }
        Ok(points)
    }
}
