//! The models' parameters as documented tables (BonnMotion's names in snake_case), printed by
//! `coaplab models mobility` and read from a scenario's `[mobility]` table.
//!
//! Defaults: BonnMotion's own (the value its module takes when the option is not given),
//! because the thesis names BonnMotion and gives no values. Two of `OriginalGaussMarkov`'s
//! defaults would leave every node standing (`alpha` 1 with the initial velocity 0, `avgSpeed`
//! 0); those two take pedestrian values in line with the other models' defaults instead:
//! `avg_speed` 1.0 m/s (the middle of Random Waypoint's 0.5–1.5 m/s) and `alpha` 0.75 (the
//! example of Camp, Boleng & Davies, "A Survey of Mobility Models for Ad Hoc Network
//! Research", 2002, §2.9).

use coaplab_base::params::{Kind, ParamError, ParamSpec, Params, Settings, Value};

use super::{Area, GaussMarkov, ManhattanGrid, MobilityConfig, Model, Pursue, RandomWaypoint};
use crate::mesh::layout::Role;

const MIN_SPEED: ParamSpec = ParamSpec {
    key: "min_speed",
    kind: Kind::Float {
        min: 0.001,
        max: 1e3,
    },
    default: Value::Float(0.5),
    help: "minspeed: lowest speed drawn, uniform in [min_speed, max_speed) (m/s)",
    source: "BonnMotion RandomSpeedBase / Pursue default 0.5",
};

const MAX_SPEED: ParamSpec = ParamSpec {
    key: "max_speed",
    kind: Kind::Float {
        min: 0.001,
        max: 1e3,
    },
    default: Value::Float(1.5),
    help: "maxspeed: highest speed drawn (m/s; at least min_speed)",
    source: "BonnMotion RandomSpeedBase / Pursue default 1.5",
};

/// Keys every generated model reads.
pub const MOBILITY_COMMON_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        key: "x",
        kind: Kind::Float { min: 0.0, max: 1e6 },
        default: Value::Float(0.0),
        help: "area width: nodes move in [0, x] (m; 0: the layout's bounding box)",
        source: "BonnMotion -x; default: the mesh layout (stated choice)",
    },
    ParamSpec {
        key: "y",
        kind: Kind::Float { min: 0.0, max: 1e6 },
        default: Value::Float(0.0),
        help: "area height: nodes move in [0, y] (m; 0: the layout's bounding box)",
        source: "BonnMotion -y; default: the mesh layout (stated choice)",
    },
    ParamSpec {
        key: "route_check_interval_s",
        kind: Kind::Seconds { min: 0.001, max: 3600.0 },
        default: Value::Float(1.0),
        help: "static routes: how often the neighbour graph is checked and the min-hop tree rebuilt when it changed",
        source: "stated choice: at BonnMotion's top default speed 1.5 m/s a node moves 15 % of the 10-m range between checks",
    },
];

const RANDOM_WAYPOINT: &[ParamSpec] = &[
    MIN_SPEED,
    MAX_SPEED,
    ParamSpec {
        key: "max_pause",
        kind: Kind::Float { min: 0.0, max: 1e6 },
        default: Value::Float(60.0),
        help: "maxpause: pause at each waypoint, uniform in [0, max_pause) (s)",
        source: "BonnMotion RandomSpeedBase default 60",
    },
];

const GAUSS_MARKOV: &[ParamSpec] = &[
    ParamSpec {
        key: "alpha",
        kind: Kind::Float { min: 0.0, max: 1.0 },
        default: Value::Float(0.75),
        help: "alpha: memory; v = alpha v + (1 - alpha) mean + sqrt(1 - alpha^2) sigma N",
        source: "BonnMotion OriginalGaussMarkov (default 1: no movement); 0.75 after Camp et al. 2002 §2.9",
    },
    ParamSpec {
        key: "update_frequency",
        kind: Kind::Float { min: 0.01, max: 1e6 },
        default: Value::Float(2.5),
        help: "updateFrequency: seconds between velocity updates",
        source: "BonnMotion OriginalGaussMarkov default 2.5",
    },
    ParamSpec {
        key: "velocity_std_dev",
        kind: Kind::Float { min: 0.0, max: 1e3 },
        default: Value::Float(0.1),
        help: "velocityStdDev: sigma of the Gaussian term, per axis (m/s)",
        source: "BonnMotion OriginalGaussMarkov default 0.1",
    },
    ParamSpec {
        key: "avg_speed",
        kind: Kind::Float { min: 0.0, max: 1e3 },
        default: Value::Float(1.0),
        help: "avgSpeed: length of the mean velocity, in a uniform direction per node (m/s)",
        source: "BonnMotion OriginalGaussMarkov (default 0: no movement); 1.0 = middle of RWP's 0.5-1.5",
    },
    ParamSpec {
        key: "max_speed",
        kind: Kind::Float {
            min: 0.001,
            max: f64::INFINITY,
        },
        default: Value::Float(f64::INFINITY),
        help: "maxSpeed: a faster velocity is scaled down to it (m/s; inf: no cap)",
        source: "BonnMotion OriginalGaussMarkov default infinity",
    },
];

const MANHATTAN_GRID: &[ParamSpec] = &[
    ParamSpec {
        key: "x_blocks",
        kind: Kind::Int {
            min: 1,
            max: 10_000,
        },
        default: Value::Int(10),
        help: "xblocks: blocks along x (vertical streets every x / x_blocks m)",
        source: "BonnMotion ManhattanGrid default 10",
    },
    ParamSpec {
        key: "y_blocks",
        kind: Kind::Int {
            min: 1,
            max: 10_000,
        },
        default: Value::Int(10),
        help: "yblocks: blocks along y (horizontal streets every y / y_blocks m)",
        source: "BonnMotion ManhattanGrid default 10",
    },
    ParamSpec {
        key: "update_dist",
        kind: Kind::Float {
            min: 0.01,
            max: 1e6,
        },
        default: Value::Float(5.0),
        help: "updateDist: metres between speed / pause / turn decisions",
        source: "BonnMotion ManhattanGrid default 5",
    },
    ParamSpec {
        key: "turn_prob",
        kind: Kind::Float { min: 0.0, max: 1.0 },
        default: Value::Float(0.5),
        help: "turnProb: probability of turning at a crossing",
        source: "BonnMotion ManhattanGrid default 0.5",
    },
    ParamSpec {
        key: "speed_change_prob",
        kind: Kind::Float { min: 0.0, max: 1.0 },
        default: Value::Float(0.2),
        help: "speedChangeProb: probability of a new speed every update_dist",
        source: "BonnMotion ManhattanGrid default 0.2",
    },
    ParamSpec {
        key: "min_speed",
        kind: Kind::Float {
            min: 0.001,
            max: 1e3,
        },
        default: Value::Float(0.5),
        help: "minSpeed: new speeds below it are raised to it (m/s)",
        source: "BonnMotion ManhattanGrid default 0.5",
    },
    ParamSpec {
        key: "mean_speed",
        kind: Kind::Float {
            min: 0.001,
            max: 1e3,
        },
        default: Value::Float(1.0),
        help: "meanSpeed: initial speed and mean of new speeds (m/s)",
        source: "BonnMotion ManhattanGrid default 1.0",
    },
    ParamSpec {
        key: "speed_std_dev",
        kind: Kind::Float { min: 0.0, max: 1e3 },
        default: Value::Float(0.2),
        help: "speedStdDev: sigma of new speeds (m/s)",
        source: "BonnMotion ManhattanGrid default 0.2",
    },
    ParamSpec {
        key: "pause_prob",
        kind: Kind::Float { min: 0.0, max: 1.0 },
        default: Value::Float(0.0),
        help:
            "pauseProb: probability of a pause every update_dist (with speed_change_prob at most 1)",
        source: "BonnMotion ManhattanGrid default 0",
    },
    ParamSpec {
        key: "max_pause",
        kind: Kind::Float { min: 0.0, max: 1e6 },
        default: Value::Float(120.0),
        help: "maxPause: pause uniform in [0, max_pause) (s)",
        source: "BonnMotion ManhattanGrid default 120",
    },
];

const PURSUE: &[ParamSpec] = &[
    MIN_SPEED,
    MAX_SPEED,
    ParamSpec {
        key: "aggressiveness",
        kind: Kind::Float { min: 0.0, max: 1.0 },
        default: Value::Float(0.5),
        help: "aggressiveness: fraction of the distance to the target closed per step",
        source: "BonnMotion Pursue default 0.5",
    },
    ParamSpec {
        key: "pursue_randomness_magnitude",
        kind: Kind::Float { min: 0.0, max: 1.0 },
        default: Value::Float(0.5),
        help: "pursueRandomnessMagnitude: uniform jitter in [-m, m) added per axis and step (m)",
        source: "BonnMotion Pursue default 0.5",
    },
];

/// The generated models: scenario name, BonnMotion module, one-line summary.
pub const MODELS: &[(&str, &str, &str)] = &[
    (
        "random-waypoint",
        "RandomWaypoint",
        "uniform destination, uniform speed, uniform pause",
    ),
    (
        "gauss-markov",
        "OriginalGaussMarkov",
        "velocity with memory alpha around a mean, reflected at the edges",
    ),
    (
        "manhattan-grid",
        "ManhattanGrid",
        "streets of a block grid, turns at crossings, speed changes and pauses",
    ),
    (
        "pursue",
        "Pursue",
        "every node chases one Random-Waypoint target with some jitter",
    ),
];

/// The model-specific parameters of `model` (one of [`MODELS`]).
pub fn mobility_params(model: &str) -> Option<&'static [ParamSpec]> {
    Some(match model {
        "random-waypoint" => RANDOM_WAYPOINT,
        "gauss-markov" => GAUSS_MARKOV,
        "manhattan-grid" => MANHATTAN_GRID,
        "pursue" => PURSUE,
        _ => return None,
    })
}

fn order(p: &Params, low: &str, high: &str) -> Result<(), ParamError> {
    if p.float(low) > p.float(high) {
        return Err(ParamError::BadValue {
            key: low.to_string(),
            value: p.float(low).to_string(),
            expected: format!("at most {high} ({})", p.float(high)),
        });
    }
    Ok(())
}

impl MobilityConfig {
    /// The generated `model` (one of [`MODELS`]) with `settings` (its keys and
    /// [`MOBILITY_COMMON_PARAMS`]; any other key is an error), moving the `moving` roles.
    pub fn resolve(
        model: &str,
        settings: &Settings,
        moving: Vec<Role>,
    ) -> Result<MobilityConfig, ParamError> {
        let table = mobility_params(model).ok_or_else(|| ParamError::BadValue {
            key: "model".into(),
            value: model.into(),
            expected: MODELS.iter().map(|m| m.0).collect::<Vec<_>>().join(" | "),
        })?;
        let p = Params::resolve(model, &[MOBILITY_COMMON_PARAMS, table], settings)?;
        let f = |k: &str| p.float(k);
        let model = match model {
            "random-waypoint" => {
                order(&p, "min_speed", "max_speed")?;
                Model::RandomWaypoint(RandomWaypoint {
                    min_speed: f("min_speed"),
                    max_speed: f("max_speed"),
                    max_pause: f("max_pause"),
                })
            }
            "gauss-markov" => Model::GaussMarkov(GaussMarkov {
                alpha: f("alpha"),
                update_frequency: f("update_frequency"),
                velocity_std_dev: f("velocity_std_dev"),
                avg_speed: f("avg_speed"),
                max_speed: f("max_speed"),
            }),
            "manhattan-grid" => {
                order(&p, "min_speed", "mean_speed")?;
                if f("pause_prob") + f("speed_change_prob") > 1.0 {
                    return Err(ParamError::BadValue {
                        key: "pause_prob".into(),
                        value: f("pause_prob").to_string(),
                        expected: "at most 1 - speed_change_prob".into(),
                    });
                }
                Model::ManhattanGrid(ManhattanGrid {
                    x_blocks: p.int("x_blocks") as u32,
                    y_blocks: p.int("y_blocks") as u32,
                    update_dist: f("update_dist"),
                    turn_prob: f("turn_prob"),
                    speed_change_prob: f("speed_change_prob"),
                    min_speed: f("min_speed"),
                    mean_speed: f("mean_speed"),
                    speed_std_dev: f("speed_std_dev"),
                    pause_prob: f("pause_prob"),
                    max_pause: f("max_pause"),
                })
            }
            _ => {
                order(&p, "min_speed", "max_speed")?;
                Model::Pursue(Pursue {
                    min_speed: f("min_speed"),
                    max_speed: f("max_speed"),
                    aggressiveness: f("aggressiveness"),
                    pursue_randomness_magnitude: f("pursue_randomness_magnitude"),
                })
            }
        };
        let area = (f("x") > 0.0 || f("y") > 0.0).then(|| Area {
            x: f("x"),
            y: f("y"),
        });
        if let Some(a) = area {
            if a.x <= 0.0 || a.y <= 0.0 {
                return Err(ParamError::BadValue {
                    key: if a.x <= 0.0 { "x" } else { "y" }.into(),
                    value: "0".into(),
                    expected: "x and y set together, both above 0".into(),
                });
            }
        }
        Ok(MobilityConfig {
            model,
            moving,
            area,
            route_check_interval: p.secs("route_check_interval_s"),
        })
    }

    /// Position-file trajectories (already parsed) with the common keys from `settings`.
    pub fn from_file(
        paths: Vec<Option<super::Trajectory>>,
        settings: &Settings,
        moving: Vec<Role>,
    ) -> Result<MobilityConfig, ParamError> {
        let p = Params::resolve("file", &[&MOBILITY_COMMON_PARAMS[2..]], settings)?;
        Ok(MobilityConfig {
            model: Model::File(paths),
            moving,
            area: None,
            route_check_interval: p.secs("route_check_interval_s"),
        })
    }
}
