//! Exact positions of each model under scripted draws, worked by hand from the BonnMotion
//! formulas (module docs), and the building of a run's [`Motion`].

use coaplab_base::rng::ScriptedRandom;
use coaplab_base::time::Duration;

use super::*;

fn path(points: Points) -> Trajectory {
    Trajectory::new(points.into_vec(), Between::Linear)
}

fn close(a: (f64, f64), b: (f64, f64)) -> bool {
    (a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9
}

#[test]
fn random_waypoint_travels_then_pauses() {
    // Area 100 × 50, speeds [1, 3), pauses [0, 10). Destination (0.3·100, 0.8·50) = (30, 40),
    // 50 m away, speed 2·0.5 + 1 = 2 m/s: arrives at 25 s, pauses 10·0.4 = 4 s; next
    // destination (0, 0), speed 2·0.25 + 1 = 1.5 m/s: 50 m in 33.3 s, arriving after the 40-s
    // horizon, so no pause draw. Exactly 7 draws (the script panics on an eighth).
    let m = RandomWaypoint {
        min_speed: 1.0,
        max_speed: 3.0,
        max_pause: 10.0,
    };
    let mut rng = ScriptedRandom::new(&[0.3, 0.8, 0.5, 0.4, 0.0, 0.0, 0.25]);
    let area = Area { x: 100.0, y: 50.0 };
    let p = path(m.generate((0.0, 0.0), area, 40.0, &mut rng, 0).unwrap());
    assert_eq!(p.position_at(12.5), (15.0, 20.0));
    assert_eq!(p.position_at(27.0), (30.0, 40.0));
    // 15 s after leaving (30, 40) at 29 s: 22.5 m of the 50 towards (0, 0).
    assert!(
        close(p.position_at(44.0), (16.5, 22.0)),
        "{:?}",
        p.position_at(44.0)
    );
    assert_eq!(rng.consumed(), 7);
}

#[test]
fn gauss_markov_velocity_has_memory_and_reflects_at_the_edge() {
    // α 0.5, updates every 1 s, σ 1, mean speed 2 in direction 2π·0 = +x; Gaussian draws 0
    // (Box–Muller with u₁ = 0). Interval 1: v = 0 (BonnMotion's start). Then
    // v = 0.5·0 + 0.5·(2, 0) = (1, 0): from x 99.5 the path crosses x = 100 after 0.5 s, is
    // reflected there (v = (−1, 0), mean (−2, 0)), and goes on for the remaining 0.5 s to 99.5;
    // then v = 0.5·(−1) + 0.5·(−2) = −1.5: x 98 at 3 s. Draws: 1 direction + 3 updates × 2
    // Gaussians × 2 uniforms = 13.
    let m = GaussMarkov {
        alpha: 0.5,
        update_frequency: 1.0,
        velocity_std_dev: 1.0,
        avg_speed: 2.0,
        max_speed: f64::INFINITY,
    };
    let mut rng = ScriptedRandom::new(&[0.0; 13]);
    let area = Area { x: 100.0, y: 100.0 };
    let p = path(m.generate((99.5, 50.0), area, 3.0, &mut rng, 0).unwrap());
    assert_eq!(p.position_at(0.5), (99.5, 50.0));
    assert_eq!(p.position_at(1.25), (99.75, 50.0));
    assert_eq!(p.position_at(1.5), (100.0, 50.0));
    assert_eq!(p.position_at(1.75), (99.75, 50.0));
    assert_eq!(p.position_at(2.5), (98.75, 50.0));
    assert_eq!(p.position_at(3.0), (98.0, 50.0));
    assert_eq!(rng.consumed(), 13);
}

#[test]
fn gauss_markov_noise_is_scaled_by_the_square_root_of_one_minus_alpha_squared() {
    // α 0.6: √(1 − 0.36) = 0.8; σ 0.5; mean speed 0. Box–Muller with 1 − u₁ = e^(−2) and
    // u₂ = 0 gives N = 2: v_x = 0.8·0.5·2 = 0.8 m/s after the first (still) second.
    let m = GaussMarkov {
        alpha: 0.6,
        update_frequency: 1.0,
        velocity_std_dev: 0.5,
        avg_speed: 0.0,
        max_speed: f64::INFINITY,
    };
    let two = 1.0 - (-2.0f64).exp();
    let mut rng = ScriptedRandom::new(&[0.0, two, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    let area = Area { x: 100.0, y: 100.0 };
    let p = path(m.generate((10.0, 10.0), area, 2.0, &mut rng, 0).unwrap());
    assert!(
        close(p.position_at(2.0), (10.8, 10.0)),
        "{:?}",
        p.position_at(2.0)
    );
}

#[test]
fn manhattan_grid_turns_at_crossings() {
    // Area 20 × 20 in 2 × 2 blocks: streets at 0, 10, 20. Start (5, 0) on the bottom street,
    // so along x (the init_xr draw 0.9 is made but the axis is forced); direction draw 0 →
    // right (+x); 5 m to the crossing at x 10. update_dist 5, speed 1, turn_prob 1: turns at
    // (10, 0) at 5 s; at the bottom edge the only way is up; 5 m straight (a decision draw,
    // 0.5, no pause), reaches (10, 10) at 15 s and turns (draw 0), direction draw 0.7 → left;
    // 5 m more to (5, 10) at the 20-s horizon.
    let m = ManhattanGrid {
        x_blocks: 2,
        y_blocks: 2,
        update_dist: 5.0,
        turn_prob: 1.0,
        speed_change_prob: 0.0,
        min_speed: 0.5,
        mean_speed: 1.0,
        speed_std_dev: 0.2,
        pause_prob: 0.0,
        max_pause: 120.0,
    };
    let mut rng = ScriptedRandom::new(&[0.9, 0.0, 0.0, 0.5, 0.0, 0.7, 0.5]);
    let area = Area { x: 20.0, y: 20.0 };
    let p = path(m.generate((5.0, 0.0), area, 20.0, &mut rng, 0).unwrap());
    assert_eq!(p.position_at(2.5), (7.5, 0.0));
    assert_eq!(p.position_at(5.0), (10.0, 0.0));
    assert_eq!(p.position_at(7.5), (10.0, 2.5));
    assert_eq!(p.position_at(17.5), (7.5, 10.0));
    assert_eq!(p.position_at(20.0), (5.0, 10.0));
    assert_eq!(rng.consumed(), 7);
    // Off every street: refused.
    let mut rng = ScriptedRandom::new(&[0.5]);
    assert_eq!(
        m.generate((3.0, 4.0), area, 20.0, &mut rng, 7).unwrap_err(),
        MobilityError::OffStreet {
            node: 7,
            x_m: 3.0,
            y_m: 4.0
        }
    );
}

#[test]
fn pursue_closes_in_on_the_target() {
    // Target: start (50, 50), destination (50, 0) at speed 2·0.5 + 1 = 2 m/s: there at 25 s.
    // Pursuer at (0, 50), aggressiveness 0.5, jitter draws 0.5 (= 0 m): heads for
    // (0 + 0.5·50, 50 + 0) = (25, 50); needed speed 25 m / 25 s = 1 ≤ 3, so it draws its
    // speed 2 m/s and arrives at 12.5 s (after the 10-s horizon: one step).
    let m = Pursue {
        min_speed: 1.0,
        max_speed: 3.0,
        aggressiveness: 0.5,
        pursue_randomness_magnitude: 0.5,
    };
    let area = Area { x: 100.0, y: 100.0 };
    let target = m
        .target(
            area,
            10.0,
            &mut ScriptedRandom::new(&[0.5, 0.5, 0.5, 0.0, 0.5]),
        )
        .unwrap();
    assert_eq!(target.position_at(12.5), (50.0, 25.0));
    let mut rng = ScriptedRandom::new(&[0.5, 0.5, 0.5]);
    let p = path(
        m.generate(&target, (0.0, 50.0), area, 10.0, &mut rng, 0)
            .unwrap(),
    );
    assert_eq!(p.position_at(5.0), (10.0, 50.0));
    assert_eq!(p.position_at(12.5), (25.0, 50.0));
    // Too far for max_speed before the target's next turn: only (speed draw)/needed of it.
    let slow = Pursue {
        max_speed: 0.5,
        min_speed: 0.25,
        ..m
    };
    let mut rng = ScriptedRandom::new(&[0.5, 0.5, 0.0]);
    let p = path(
        slow.generate(&target, (0.0, 50.0), area, 10.0, &mut rng, 0)
            .unwrap(),
    );
    // Needed 1 m/s > 0.5: fraction 0.25 / 1 of the 25 m, arriving at the target's 25 s.
    assert_eq!(p.position_at(25.0), (6.25, 50.0));
}

#[test]
fn motion_is_a_pure_function_of_the_seed_and_moves_only_the_chosen_roles() {
    let layout = Layout::grid(6, 6, 10.0).unwrap();
    let config = MobilityConfig::resolve(
        "random-waypoint",
        &coaplab_base::params::Settings::new(),
        vec![Role::Client],
    )
    .unwrap();
    let horizon = Duration::from_secs(1080);
    let a = Motion::build(&config, &layout, 7, horizon).unwrap();
    let b = Motion::build(&config, &layout, 7, horizon).unwrap();
    let c = Motion::build(&config, &layout, 8, horizon).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
    for (i, n) in layout.nodes.iter().enumerate() {
        let id = i as u16;
        assert_eq!(a.position(id, 0.0), (n.x_m, n.y_m));
        let moves = a.trajectory(id).is_some();
        assert_eq!(moves, n.role == Role::Client, "node {i}");
        for t in [10.0, 500.0, 1080.0] {
            let (x, y) = a.position(id, t);
            assert!((0.0..=50.0).contains(&x) && (0.0..=50.0).contains(&y));
        }
    }
    // Every generated model builds on the 6×6 grid (the Ch. 6 mobile layout) with defaults.
    for (name, _, _) in MODELS {
        let config = MobilityConfig::resolve(
            name,
            &coaplab_base::params::Settings::new(),
            vec![Role::Client],
        )
        .unwrap();
        let m =
            Motion::build(&config, &layout, 1, horizon).unwrap_or_else(|e| panic!("{name}: {e}"));
        // Inside the 50-m area at all times; Manhattan Grid's nodes on its 5-m streets.
        for node in layout.with_role(Role::Client) {
            for step in 0..=1080 / 7 {
                let (x, y) = m.position(node, f64::from(step * 7));
                let tol = 1e-9;
                assert!((-tol..=50.0 + tol).contains(&x) && (-tol..=50.0 + tol).contains(&y));
                if *name == "manhattan-grid" {
                    let on = |v: f64| (v / 5.0 - (v / 5.0).round()).abs() < 1e-6;
                    assert!(on(x) || on(y), "{name} node {node} at ({x}, {y})");
                }
            }
        }
    }
    let mut bad = config.clone();
    bad.moving.push(Role::BorderRouter);
    assert_eq!(
        Motion::build(&bad, &layout, 1, horizon).unwrap_err(),
        MobilityError::BorderRouterMoves
    );
}

#[test]
fn bad_parameters_are_refused_by_name() {
    let mut s = coaplab_base::params::Settings::new();
    s.set("min_speed", "2").set("max_speed", "1");
    let e = MobilityConfig::resolve("random-waypoint", &s, vec![]).unwrap_err();
    assert!(e.to_string().contains("min_speed"), "{e}");
    let mut s = coaplab_base::params::Settings::new();
    s.set("alpha", "0.5");
    let e = MobilityConfig::resolve("pursue", &s, vec![]).unwrap_err();
    assert!(e.to_string().contains("alpha"), "{e}");
    let mut s = coaplab_base::params::Settings::new();
    s.set("x", "10");
    let e = MobilityConfig::resolve("pursue", &s, vec![]).unwrap_err();
    assert!(e.to_string().contains("y"), "{e}");
}

#[test]
fn the_trace_drawings_in_the_docs_are_these_trajectories() {
    // docs/mesh/mobility-*.svg: four clients of the 6×6 grid over the first 300 s of each
    // model with its defaults, run seed 1 (regenerate: COAPLAB_WRITE_SVG=1).
    let layout = Layout::grid(6, 6, 10.0).unwrap();
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/mesh");
    for (name, module, _) in MODELS {
        let config = MobilityConfig::resolve(
            name,
            &coaplab_base::params::Settings::new(),
            vec![Role::Client],
        )
        .unwrap();
        let motion = Motion::build(&config, &layout, 1, Duration::from_secs(300)).unwrap();
        let title = format!("{name} (BonnMotion {module}, defaults): nodes 0, 14, 28, 35, 0-300 s");
        let svg = motion.svg(default_area(&layout), &[0, 14, 28, 35], 300.0, &title);
        let path = docs.join(format!("mobility-{name}.svg"));
        if std::env::var_os("COAPLAB_WRITE_SVG").is_some() {
            std::fs::write(&path, &svg).unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(&path).ok().as_deref(),
            Some(svg.as_str()),
            "{name}"
        );
    }
}

#[test]
fn extreme_parameters_end_in_an_error_not_a_hang() {
    // 1,000 m/s legs in a 1-m square over 10^6 s: billions of waypoints; refused at the cap.
    let m = RandomWaypoint {
        min_speed: 999.0,
        max_speed: 1000.0,
        max_pause: 0.0,
    };
    let rng = &mut crate::rng::stream(1, "test");
    let area = Area { x: 1.0, y: 1.0 };
    assert_eq!(
        m.generate((0.0, 0.0), area, 1e6, rng, 4).unwrap_err(),
        MobilityError::TooManyWaypoints { node: 4 }
    );
}

#[test]
fn pursue_gathers_every_client_round_one_target_and_cuts_both_servers_off() {
    // Issue 31, item 2, finding 5: why `rathod-ch6-mobile.toml`'s pursue cells deliver almost
    // nothing. BonnMotion's Pursue (`Pursue.java` `generate`) has every node follow ONE reference
    // point, so the 33 clients of the Ch. 6 grid close in on it and move as one cluster, while the
    // border router (node 21, at (30, 30)) and the two corner servers (nodes 5 and 30, 36 m from
    // it) stay put. A server reaches the border router only through clients within 10 m of it and a
    // chain of clients on to the centre, and the cluster (under 20 m across) is never both at a
    // corner and at the centre: from the first minute on neither server has any path to the border
    // router at any whole second of the 1,200-s run (seeds 1-5 here; 6-10 checked once too), so a
    // request has no route to its server. This is the mobility model as BonnMotion specifies it.
    let layout = Layout::grid_with_servers(6, 6, 10.0, 2).unwrap();
    let (border_router, servers) = (21usize, [5usize, 30]);
    let config = MobilityConfig::resolve(
        "pursue",
        &coaplab_base::params::Settings::new(),
        vec![Role::Client],
    )
    .unwrap();
    let n = layout.nodes.len();
    let clients: Vec<usize> = layout.with_role(Role::Client).map(usize::from).collect();
    let dist = |a: (f64, f64), b: (f64, f64)| (a.0 - b.0).hypot(a.1 - b.1);
    for seed in 1..=5 {
        let m = Motion::build(&config, &layout, seed, Duration::from_secs(1200)).unwrap();
        for t in 0..1200 {
            let pos: Vec<_> = (0..n as u16).map(|i| m.position(i, f64::from(t))).collect();
            // The nodes connected to the border router through links within the 10-m range.
            let mut reached = vec![false; n];
            reached[border_router] = true;
            let mut stack = vec![border_router];
            while let Some(u) = stack.pop() {
                for v in 0..n {
                    if !reached[v] && dist(pos[u], pos[v]) <= 10.0 + 1e-9 {
                        reached[v] = true;
                        stack.push(v);
                    }
                }
            }
            if t == 0 {
                assert!(servers.iter().all(|&s| reached[s]), "seed {seed}: the grid");
            }
            if t >= 60 {
                assert!(!servers.iter().any(|&s| reached[s]), "seed {seed}, {t} s");
            }
            if t >= 120 {
                let diameter = clients
                    .iter()
                    .flat_map(|&a| clients.iter().map(move |&b| (a, b)))
                    .map(|(a, b)| dist(pos[a], pos[b]))
                    .fold(0.0, f64::max);
                assert!(diameter < 20.0, "seed {seed}, {t} s: {diameter} m");
            }
        }
    }
}
