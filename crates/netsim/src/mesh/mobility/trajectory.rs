//! One node's movement as BonnMotion stores it: waypoints `(t, x, y)` in increasing time,
//! the node moving in a straight line at constant speed from one to the next
//! (`MobileNode.positionAt`, linear interpolation) and resting at the last one; or, for a
//! Cooja position file, holding each position until the next entry (Cooja's mobility plugin
//! moves a mote at the listed instants and nowhere in between).
//!
//! A Cooja trajectory may also repeat: the plugin replays its whole file again from the
//! instant of its last entry (`WRAP_MOVES`), so positions repeat with that period.
//!
//! A position query is a binary search over the waypoints, so it is a pure function of time.

/// One waypoint: where the node is at `t_s` (seconds since the start of movement).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Waypoint {
    /// Seconds since movement started.
    pub t_s: f64,
    /// x in metres.
    pub x_m: f64,
    /// y in metres.
    pub y_m: f64,
}

/// How positions between two waypoints are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Between {
    /// Straight line at constant speed (BonnMotion).
    Linear,
    /// The earlier waypoint's position until the next instant (Cooja's mobility plugin).
    Hold,
}

/// A node's waypoints.
#[derive(Debug, Clone, PartialEq)]
pub struct Trajectory {
    points: Vec<Waypoint>,
    between: Between,
    /// Positions repeat every `period_s` seconds (0: they do not).
    period_s: f64,
    /// Where the node is before its first waypoint in the first round (`None`: there).
    before: Option<(f64, f64)>,
}

impl Trajectory {
    /// The trajectory through `points` (non-empty, times non-decreasing; a repeated time is a
    /// jump, as BonnMotion's pause-free turns produce).
    pub fn new(points: Vec<Waypoint>, between: Between) -> Trajectory {
        debug_assert!(!points.is_empty());
        debug_assert!(points.windows(2).all(|w| w[0].t_s <= w[1].t_s));
        Trajectory {
            points,
            between,
            period_s: 0.0,
            before: None,
        }
    }

    /// The node stands at `place` until its first waypoint (Cooja: a mote stays where it was
    /// placed until the plugin first moves it).
    pub fn starting_at(mut self, place: (f64, f64)) -> Trajectory {
        self.before = Some(place);
        self
    }

    /// How positions between waypoints are found.
    pub fn between(&self) -> Between {
        self.between
    }

    /// The same waypoints replayed every `period_s` seconds (0: once), as Cooja's mobility
    /// plugin does: in each later round the node holds the previous round's last position
    /// until its first entry.
    pub fn repeating(mut self, period_s: f64) -> Trajectory {
        self.period_s = period_s;
        self
    }

    /// The waypoints.
    pub fn points(&self) -> &[Waypoint] {
        &self.points
    }

    /// The position at `t_s` seconds: the first waypoint before it, the last after it.
    pub fn position_at(&self, t_s: f64) -> (f64, f64) {
        let p = &self.points;
        let t_s = if self.period_s > 0.0 && t_s >= self.period_s {
            let within = t_s % self.period_s;
            if within < p[0].t_s {
                let last = p[p.len() - 1];
                return (last.x_m, last.y_m);
            }
            within
        } else {
            t_s
        };
        // The first waypoint later than t.
        let i = p.partition_point(|w| w.t_s <= t_s);
        if i == 0 {
            return self.before.unwrap_or((p[0].x_m, p[0].y_m));
        }
        let a = p[i - 1];
        if i == p.len() || self.between == Between::Hold {
            return (a.x_m, a.y_m);
        }
        let b = p[i];
        let f = (t_s - a.t_s) / (b.t_s - a.t_s);
        (a.x_m + f * (b.x_m - a.x_m), a.y_m + f * (b.y_m - a.y_m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(t_s: f64, x_m: f64, y_m: f64) -> Waypoint {
        Waypoint { t_s, x_m, y_m }
    }

    #[test]
    fn linear_interpolates_and_hold_steps() {
        let pts = vec![w(0.0, 0.0, 0.0), w(10.0, 10.0, 20.0), w(15.0, 10.0, 20.0)];
        let l = Trajectory::new(pts.clone(), Between::Linear);
        assert_eq!(l.position_at(-1.0), (0.0, 0.0));
        assert_eq!(l.position_at(2.5), (2.5, 5.0));
        assert_eq!(l.position_at(12.0), (10.0, 20.0));
        assert_eq!(l.position_at(99.0), (10.0, 20.0));
        let h = Trajectory::new(pts, Between::Hold);
        assert_eq!(h.position_at(9.999), (0.0, 0.0));
        assert_eq!(h.position_at(10.0), (10.0, 20.0));
    }
}
