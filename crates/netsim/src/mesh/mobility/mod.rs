//! Node mobility: the four BonnMotion models of the thesis's Ch. 6 mobile runs (Random
//! Waypoint, Gauss-Markov, Manhattan Grid, Pursue) and position files (BonnMotion
//! `.movements`, Cooja's mobility plugin), as waypoint trajectories computed once per run.
//!
//! Sans-IO and deterministic: every moving node's trajectory is generated up front from its own
//! random stream `mesh/mobility/node{i}` of the run seed (Pursue's target from
//! `mesh/mobility/pursue-target`), so a node's position is a pure function of time and seed
//! ([`Motion::position`], a binary search). BonnMotion draws every node from one
//! `java.util.Random`; one stream per node keeps a node's path independent of how many others
//! move. Normal draws are Box–Muller over two uniform draws ([`gaussian`]), where Java uses
//! its polar method: same distribution, a fixed number of draws per value.
//!
//! A moving node starts at its layout position (BonnMotion draws a start uniformly; here the
//! run begins from the placed topology, where RPL formed) and the movement clock starts with
//! the run (after RPL's warm-up). The area is `[0, x] × [0, y]` (BonnMotion's `-x`, `-y`),
//! by default the layout's bounding box. Waypoint times are `f64` seconds, as in BonnMotion's
//! files; the mesh asks with its integer-nanosecond instants converted to seconds (exact to the
//! nanosecond for runs shorter than about 100 days). docs/mesh-model.md ("Mobility") gives every formula
//! with its BonnMotion source and the defaults with the principle that chose them.

pub mod file;
mod gauss_markov;
mod manhattan_grid;
mod params;
mod pursue;
mod random_waypoint;
mod svg;
mod tracker;
pub mod trajectory;

pub use gauss_markov::GaussMarkov;
pub use manhattan_grid::ManhattanGrid;
pub use params::{mobility_params, MOBILITY_COMMON_PARAMS, MODELS};
pub use pursue::Pursue;
pub use random_waypoint::RandomWaypoint;
pub use tracker::Tracker;
pub use trajectory::{Between, Trajectory, Waypoint};

use coaplab_base::rng::Random;
use coaplab_base::time::Duration;

use super::layout::{Layout, Role};

/// The movement area `[0, x] × [0, y]` in metres.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Area {
    /// Width (BonnMotion `-x`).
    pub x: f64,
    /// Height (BonnMotion `-y`).
    pub y: f64,
}

/// A mobility model with its parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum Model {
    /// BonnMotion `RandomWaypoint`.
    RandomWaypoint(RandomWaypoint),
    /// BonnMotion `OriginalGaussMarkov`.
    GaussMarkov(GaussMarkov),
    /// BonnMotion `ManhattanGrid`.
    ManhattanGrid(ManhattanGrid),
    /// BonnMotion `Pursue`.
    Pursue(Pursue),
    /// Trajectories read from a position file, by node id (`None`: no entry for that node).
    File(Vec<Option<Trajectory>>),
}

impl Model {
    /// The scenario name: `random-waypoint`, `gauss-markov`, `manhattan-grid`, `pursue`, `file`.
    pub fn name(&self) -> &'static str {
        match self {
            Model::RandomWaypoint(_) => "random-waypoint",
            Model::GaussMarkov(_) => "gauss-markov",
            Model::ManhattanGrid(_) => "manhattan-grid",
            Model::Pursue(_) => "pursue",
            Model::File(_) => "file",
        }
    }
}

/// How the nodes of a mesh move.
#[derive(Debug, Clone, PartialEq)]
pub struct MobilityConfig {
    /// The model.
    pub model: Model,
    /// The roles that move (never the border router); the others stay at their layout place.
    pub moving: Vec<Role>,
    /// The area; `None`: the layout's bounding box ([`Area`] of [`default_area`]).
    pub area: Option<Area>,
    /// How often static routes look at the neighbour graph ([`Tracker::graph_changed`]).
    pub route_check_interval: Duration,
}

/// Most waypoints one node's trajectory may hold (24 B each).
pub const MAX_WAYPOINTS_PER_NODE: usize = 200_000;

/// Most steps a model may take for one node (decisions that add no waypoint included, e.g.
/// Manhattan Grid's straight `updateDist` stretches): bounds the work of extreme parameters.
pub const MAX_STEPS_PER_NODE: u64 = 10_000_000;

/// Why movement cannot be set up.
#[derive(Debug, Clone, PartialEq)]
pub enum MobilityError {
    /// Manhattan Grid: a moving node's layout position is on no street.
    OffStreet {
        /// The node.
        node: u16,
        /// Its x.
        x_m: f64,
        /// Its y.
        y_m: f64,
    },
    /// A moving node starts outside the area.
    StartOutside {
        /// The node.
        node: u16,
        /// The area.
        area: Area,
    },
    /// A trajectory needs more than [`MAX_WAYPOINTS_PER_NODE`] waypoints or
    /// [`MAX_STEPS_PER_NODE`] steps before the run's end.
    TooManyWaypoints {
        /// The node.
        node: u16,
    },
    /// The position file describes more nodes than the mesh has.
    FileNodes {
        /// Nodes in the file.
        file: usize,
        /// Nodes in the mesh.
        mesh: usize,
    },
    /// The border router was asked to move.
    BorderRouterMoves,
}

impl std::fmt::Display for MobilityError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MobilityError::OffStreet { node, x_m, y_m } => write!(
                f,
                "manhattan-grid: node {node} at ({x_m}, {y_m}) m is on no street (streets every x/x_blocks and y/y_blocks metres)"
            ),
            MobilityError::StartOutside { node, area } => write!(
                f,
                "node {node} starts outside the mobility area [0, {}] x [0, {}] m",
                area.x, area.y
            ),
            MobilityError::TooManyWaypoints { node } => write!(
                f,
                "node {node} needs more than {MAX_WAYPOINTS_PER_NODE} waypoints or {MAX_STEPS_PER_NODE} steps before the run's end (lower max_sim_time_s or move less often)"
            ),
            MobilityError::FileNodes { file, mesh } => write!(
                f,
                "the position file describes {file} nodes, the mesh has {mesh}"
            ),
            MobilityError::BorderRouterMoves => {
                write!(f, "the border router stays fixed (roles may not include it)")
            }
        }
    }
}

impl std::error::Error for MobilityError {}

/// A standard normal draw by Box–Muller from two uniform draws: `√(−2 ln(1 − u₁)) · cos(2π u₂)`
/// (`1 − u₁` is in `(0, 1]`, so the logarithm is finite).
pub fn gaussian(rng: &mut dyn Random) -> f64 {
    let u1 = rng.uniform01();
    let u2 = rng.uniform01();
    (-2.0 * (1.0 - u1).ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Waypoints under construction: consecutive duplicates dropped, bounded in count.
#[derive(Debug)]
pub(crate) struct Points {
    node: u16,
    v: Vec<Waypoint>,
    steps: u64,
}

impl Points {
    fn new(node: u16) -> Points {
        Points {
            node,
            v: Vec::new(),
            steps: 0,
        }
    }

    /// Counts one step of a model's loop.
    fn step(&mut self) -> Result<(), MobilityError> {
        self.steps += 1;
        if self.steps > MAX_STEPS_PER_NODE {
            return Err(MobilityError::TooManyWaypoints { node: self.node });
        }
        Ok(())
    }

    fn push(&mut self, t_s: f64, (x_m, y_m): (f64, f64)) -> Result<(), MobilityError> {
        let w = Waypoint { t_s, x_m, y_m };
        if self.v.last() == Some(&w) {
            return Ok(());
        }
        if self.v.len() == MAX_WAYPOINTS_PER_NODE {
            return Err(MobilityError::TooManyWaypoints { node: self.node });
        }
        self.v.push(w);
        Ok(())
    }

    fn into_vec(self) -> Vec<Waypoint> {
        self.v
    }
}

/// The layout's bounding box from the origin: `[0, max x] × [0, max y]`; a side of length 0
/// (a chain) takes the other side's length.
pub fn default_area(layout: &Layout) -> Area {
    let x = layout.nodes.iter().map(|n| n.x_m).fold(0.0, f64::max);
    let y = layout.nodes.iter().map(|n| n.y_m).fold(0.0, f64::max);
    Area {
        x: if x > 0.0 { x } else { y },
        y: if y > 0.0 { y } else { x },
    }
}

/// Every node's movement over a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Motion {
    /// `None`: the node stays at `fixed`.
    paths: Vec<Option<Trajectory>>,
    fixed: Vec<(f64, f64)>,
}

impl Motion {
    /// Generates the trajectories of `config` over `horizon` for `layout`'s nodes, random
    /// streams from `run_seed`.
    pub fn build(
        config: &MobilityConfig,
        layout: &Layout,
        run_seed: u64,
        horizon: Duration,
    ) -> Result<Motion, MobilityError> {
        if config.moving.contains(&Role::BorderRouter) {
            return Err(MobilityError::BorderRouterMoves);
        }
        let area = config.area.unwrap_or_else(|| default_area(layout));
        let duration_s = horizon.as_secs_f64();
        let n = layout.nodes.len();
        if let Model::File(paths) = &config.model {
            if paths.len() > n {
                return Err(MobilityError::FileNodes {
                    file: paths.len(),
                    mesh: n,
                });
            }
        }
        let target = match &config.model {
            Model::Pursue(p) => Some(p.target(
                area,
                duration_s,
                &mut crate::rng::stream(run_seed, "mesh/mobility/pursue-target"),
            )?),
            _ => None,
        };
        let mut paths = Vec::with_capacity(n);
        for (i, node) in layout.nodes.iter().enumerate() {
            let id = i as u16;
            if !config.moving.contains(&node.role) {
                paths.push(None);
                continue;
            }
            let start = (node.x_m, node.y_m);
            let generated = !matches!(config.model, Model::File(_));
            let inside = (0.0..=area.x).contains(&start.0) && (0.0..=area.y).contains(&start.1);
            if generated && !inside {
                return Err(MobilityError::StartOutside { node: id, area });
            }
            let rng = &mut crate::rng::stream(run_seed, &format!("mesh/mobility/node{i}"));
            let points = match &config.model {
                Model::RandomWaypoint(m) => m.generate(start, area, duration_s, rng, id)?,
                Model::GaussMarkov(m) => m.generate(start, area, duration_s, rng, id)?,
                Model::ManhattanGrid(m) => m.generate(start, area, duration_s, rng, id)?,
                Model::Pursue(m) => m.generate(
                    target.as_ref().expect("built above"),
                    start,
                    area,
                    duration_s,
                    rng,
                    id,
                )?,
                Model::File(paths_in) => {
                    let path = paths_in.get(i).cloned().flatten();
                    // A Cooja mote stays at its place until the plugin first moves it.
                    paths.push(path.map(|p| match p.between() {
                        Between::Hold => p.starting_at(start),
                        Between::Linear => p,
                    }));
                    continue;
                }
            };
            paths.push(Some(Trajectory::new(points.into_vec(), Between::Linear)));
        }
        Ok(Motion {
            paths,
            fixed: layout.nodes.iter().map(|n| (n.x_m, n.y_m)).collect(),
        })
    }

    /// Nodes.
    pub fn len(&self) -> usize {
        self.fixed.len()
    }

    /// Whether there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.fixed.is_empty()
    }

    /// `node`'s trajectory (`None`: it does not move).
    pub fn trajectory(&self, node: u16) -> Option<&Trajectory> {
        self.paths[node as usize].as_ref()
    }

    /// Where `node` is `t_s` seconds after movement started.
    pub fn position(&self, node: u16, t_s: f64) -> (f64, f64) {
        match &self.paths[node as usize] {
            Some(p) => p.position_at(t_s),
            None => self.fixed[node as usize],
        }
    }
}

#[cfg(test)]
mod tests;
