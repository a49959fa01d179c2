//! Kathleen Nichols' windowed max filter as in Linux `lib/win_minmax.c`
//! (`minmax_running_max`): the best, second-best and third-best samples of the last `win`
//! time units (here: packet-timed rounds), in O(1) per sample.

/// One sample: its time (round) and value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Sample {
    t: u32,
    v: u64,
}

/// Windowed running maximum (`struct minmax`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WindowedMax {
    s: [Sample; 3],
}

impl WindowedMax {
    /// The current maximum.
    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    /// `minmax_reset`: forgets everything, `meas` at `t` is the only sample.
    pub fn reset(&mut self, t: u32, meas: u64) -> u64 {
        self.s = [Sample { t, v: meas }; 3];
        meas
    }

    /// `minmax_running_max`: adds `meas` taken at `t`; returns the windowed maximum.
    pub fn update(&mut self, win: u32, t: u32, meas: u64) -> u64 {
        let val = Sample { t, v: meas };
        if val.v >= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, meas); // a new max, or nothing left in the window
        }
        if val.v >= self.s[1].v {
            self.s[2] = val;
            self.s[1] = val;
        } else if val.v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// `minmax_subwin_update`: ages the best samples out as the window passes them.
    fn subwin_update(&mut self, win: u32, val: Sample) -> u64 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            // The best expired: the second takes its place, the new sample is third.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window without a second choice: take one.
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_expires_after_the_window_and_the_next_best_takes_over() {
        let mut m = WindowedMax::default();
        assert_eq!(m.update(10, 1, 100), 100);
        assert_eq!(m.update(10, 2, 50), 100);
        assert_eq!(m.update(10, 5, 80), 100);
        // Round 12: 100 (round 1) is older than 10 rounds; 80 (round 5) is the best left.
        assert_eq!(m.update(10, 12, 60), 80);
        assert_eq!(m.update(10, 30, 10), 10);
    }
}
