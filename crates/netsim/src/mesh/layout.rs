//! Node placements: the named shapes of the thesis (docs/experiments.md §8f gives them only as
//! figures, so each layout here is a stated choice) and explicit node lists.
//!
//! Coordinates are metres, x to the right, y downwards (row 0 is the top row); node ids are
//! the order of the list. Every generator gives roles by default and the caller may override
//! them ([`Layout::with_roles`]).

/// What a node does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The RPL root (DODAG root, border router).
    BorderRouter,
    /// Runs the CoAP server.
    Server,
    /// Runs a CoAP client (flow `k` on the `k`-th client in node order).
    Client,
    /// Forwards only.
    Router,
}

impl Role {
    /// The scenario name: `border-router`, `server`, `client`, `router`.
    pub fn name(self) -> &'static str {
        match self {
            Role::BorderRouter => "border-router",
            Role::Server => "server",
            Role::Client => "client",
            Role::Router => "router",
        }
    }

    /// The role named `name`.
    pub fn from_name(name: &str) -> Option<Role> {
        [Role::BorderRouter, Role::Server, Role::Client, Role::Router]
            .into_iter()
            .find(|r| r.name() == name)
    }
}

/// One placed node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Node {
    /// x in metres.
    pub x_m: f64,
    /// y in metres (downwards).
    pub y_m: f64,
    /// Its role.
    pub role: Role,
}

/// Why a layout is unusable.
#[derive(Debug, Clone, PartialEq)]
pub enum LayoutError {
    /// A generator argument is out of range.
    BadShape(String),
    /// Not exactly one border router, or no server.
    Roles(String),
    /// A node index given for a role does not exist.
    NoSuchNode(u32),
}

impl std::fmt::Display for LayoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LayoutError::BadShape(s) | LayoutError::Roles(s) => f.write_str(s),
            LayoutError::NoSuchNode(i) => write!(f, "node {i} does not exist"),
        }
    }
}

impl std::error::Error for LayoutError {}

/// Nodes with positions and roles.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// The nodes, by id.
    pub nodes: Vec<Node>,
}

/// Most nodes a mesh takes: the routing table and the duplicate filter hold `n²` 16-bit
/// entries (2 MiB each at this size).
pub const MAX_NODES: usize = 1024;

/// Most server nodes a mesh takes: server `j` has the address host 198.18.1.(1 + j)
/// ([`crate::addr::server_addr`]).
pub const MAX_SERVERS: usize = 254;

/// Most servers [`Layout::grid_with_servers`] places (one per corner).
pub const MAX_GRID_SERVERS: u32 = 4;

fn clients(points: Vec<(f64, f64)>) -> Layout {
    Layout {
        nodes: points
            .into_iter()
            .map(|(x_m, y_m)| Node {
                x_m,
                y_m,
                role: Role::Client,
            })
            .collect(),
    }
}

fn check_count(n: usize) -> Result<(), LayoutError> {
    if !(2..=MAX_NODES).contains(&n) {
        return Err(LayoutError::BadShape(format!(
            "a mesh needs 2 to {MAX_NODES} nodes, not {n}"
        )));
    }
    Ok(())
}

impl Layout {
    /// `rows × cols` grid, `spacing_m` apart, row-major from the top-left. Default roles: border
    /// router in the centre (row ⌊rows/2⌋, column ⌊cols/2⌋), server in the top-right corner,
    /// every other node a client: the 3×3 grid of Ch. 3 and 5. [`Layout::grid_with_servers`]
    /// places more servers.
    pub fn grid(rows: u32, cols: u32, spacing_m: f64) -> Result<Layout, LayoutError> {
        Layout::grid_with_servers(rows, cols, spacing_m, 1)
    }

    /// [`Layout::grid`] with `servers` servers (1 to [`MAX_GRID_SERVERS`]) in the corners, in
    /// this order: top-right, bottom-left, top-left, bottom-right. The thesis draws its Ch. 6
    /// grid's two servers without coordinates; opposite corners are the stated choice (each
    /// server as far from the other and as far from the centre's border router as the grid
    /// allows, so neither sits on the other's routes). Ch. 6: `grid_with_servers(6, 6, 10.0, 2)`,
    /// servers at nodes 5 and 30, border router 21, 33 clients.
    pub fn grid_with_servers(
        rows: u32,
        cols: u32,
        spacing_m: f64,
        servers: u32,
    ) -> Result<Layout, LayoutError> {
        check_count(rows as usize * cols as usize)?;
        if !(1..=MAX_GRID_SERVERS).contains(&servers) {
            return Err(LayoutError::BadShape(format!(
                "a grid takes 1 to {MAX_GRID_SERVERS} servers (its corners), not {servers}"
            )));
        }
        let mut l = clients(
            (0..rows)
                .flat_map(|r| (0..cols).map(move |c| (c as f64 * spacing_m, r as f64 * spacing_m)))
                .collect(),
        );
        let centre = (rows / 2) * cols + cols / 2;
        l.nodes[centre as usize].role = Role::BorderRouter;
        let last = rows * cols - 1;
        let corners = [cols - 1, last + 1 - cols, 0, last];
        for (k, &corner) in corners.iter().take(servers as usize).enumerate() {
            if corner == centre || corners[..k].contains(&corner) {
                return Err(LayoutError::BadShape(format!(
                    "a {rows}×{cols} grid has no free corner for server {}: it is the centre or \
                     another server's corner",
                    k + 1
                )));
            }
            l.nodes[corner as usize].role = Role::Server;
        }
        Ok(l)
    }

    /// `n` nodes on a line, `spacing_m` apart: node 0 is the border router, node 1 the server
    /// (next to it, as an off-mesh server would sit behind it), nodes 2.. clients at 2..n−1
    /// hops. Ch. 6's chain: n = 20, 18 clients.
    pub fn chain(n: u32, spacing_m: f64) -> Result<Layout, LayoutError> {
        check_count(n as usize)?;
        if n < 3 {
            return Err(LayoutError::BadShape(
                "a chain needs at least 3 nodes".into(),
            ));
        }
        let mut l = clients((0..n).map(|i| (i as f64 * spacing_m, 0.0)).collect());
        l.nodes[0].role = Role::BorderRouter;
        l.nodes[1].role = Role::Server;
        Ok(l)
    }

    /// A flower: the border router at the centre (node 0) and `petals` straight petals of
    /// `petal_len` nodes each, `spacing_m` apart, radiating at equal angles (petal `p` at
    /// angle 2πp/petals from the +x axis); node 1, the first node of petal 0, is the server,
    /// the rest are clients. Ch. 6's flower: 5 petals × 7 = 36 nodes, 34 clients.
    pub fn flower(petals: u32, petal_len: u32, spacing_m: f64) -> Result<Layout, LayoutError> {
        check_count(1 + petals as usize * petal_len as usize)?;
        if petals == 0 || petal_len == 0 {
            return Err(LayoutError::BadShape(
                "a flower needs petals of nodes".into(),
            ));
        }
        let mut points = vec![(0.0, 0.0)];
        for p in 0..petals {
            let a = std::f64::consts::TAU * f64::from(p) / f64::from(petals);
            for k in 1..=petal_len {
                let r = f64::from(k) * spacing_m;
                points.push((r * a.cos(), r * a.sin()));
            }
        }
        let mut l = clients(points);
        l.nodes[0].role = Role::BorderRouter;
        l.nodes[1].role = Role::Server;
        Ok(l)
    }

    /// A dumbbell of 21 nodes with `spacing_m` between neighbours: two 3×3 bells of clients
    /// (x = 0..2s and x = 4s..6s, y = 0..2s) joined through the border router at (3s, s); the
    /// server sits above it at (3s, 0) and one more client below it at (3s, 2s). Node order:
    /// left bell row-major, right bell row-major, border router, server, client. 19 clients
    /// (Ch. 6).
    pub fn dumbbell(spacing_m: f64) -> Result<Layout, LayoutError> {
        let s = spacing_m;
        let mut points = Vec::new();
        for x0 in [0.0, 4.0 * s] {
            for r in 0..3 {
                for c in 0..3 {
                    points.push((x0 + f64::from(c) * s, f64::from(r) * s));
                }
            }
        }
        points.extend([(3.0 * s, s), (3.0 * s, 0.0), (3.0 * s, 2.0 * s)]);
        let mut l = clients(points);
        l.nodes[18].role = Role::BorderRouter;
        l.nodes[19].role = Role::Server;
        Ok(l)
    }

    /// A half-dumbbell (Ch. 4: "3 clients → router → server"): three clients on an arc of
    /// radius `spacing_m` around the router at (s, 0) — at 135°, 180° and 225° — the router
    /// (the border router) and the server at (2s, 0). Node order: clients, router, server.
    pub fn half_dumbbell(spacing_m: f64) -> Result<Layout, LayoutError> {
        let s = spacing_m;
        let mut points: Vec<(f64, f64)> = [135.0f64, 180.0, 225.0]
            .iter()
            .map(|deg| {
                let a = deg.to_radians();
                (s + s * a.cos(), -s * a.sin())
            })
            .collect();
        points.extend([(s, 0.0), (2.0 * s, 0.0)]);
        let mut l = clients(points);
        l.nodes[3].role = Role::BorderRouter;
        l.nodes[4].role = Role::Server;
        Ok(l)
    }

    /// An explicit list.
    pub fn explicit(nodes: Vec<Node>) -> Result<Layout, LayoutError> {
        check_count(nodes.len())?;
        Ok(Layout { nodes })
    }

    /// Overrides roles: `border_router` becomes the only border router and `servers` servers;
    /// nodes that held those roles before become clients.
    pub fn with_roles(
        mut self,
        border_router: Option<u32>,
        servers: Option<&[u32]>,
    ) -> Result<Layout, LayoutError> {
        let n = self.nodes.len() as u32;
        if let Some(br) = border_router {
            if br >= n {
                return Err(LayoutError::NoSuchNode(br));
            }
            for node in &mut self.nodes {
                if node.role == Role::BorderRouter {
                    node.role = Role::Client;
                }
            }
            self.nodes[br as usize].role = Role::BorderRouter;
        }
        if let Some(servers) = servers {
            for node in &mut self.nodes {
                if node.role == Role::Server {
                    node.role = Role::Client;
                }
            }
            for &s in servers {
                if s >= n {
                    return Err(LayoutError::NoSuchNode(s));
                }
                self.nodes[s as usize].role = Role::Server;
            }
        }
        Ok(self)
    }

    /// Checks one border router and 1 to [`MAX_SERVERS`] servers.
    pub fn validate(&self) -> Result<(), LayoutError> {
        self.validate_with(false)
    }

    /// [`Layout::validate`]; with `off_mesh_server`, no server node (the server is behind
    /// the border router).
    pub fn validate_with(&self, off_mesh_server: bool) -> Result<(), LayoutError> {
        let count = |role| self.nodes.iter().filter(|n| n.role == role).count();
        if count(Role::BorderRouter) != 1 {
            return Err(LayoutError::Roles(format!(
                "a mesh needs exactly one border-router, not {}",
                count(Role::BorderRouter)
            )));
        }
        if off_mesh_server && count(Role::Server) > 0 {
            return Err(LayoutError::Roles(
                "an off-mesh server leaves no node the server role".into(),
            ));
        }
        if !off_mesh_server && count(Role::Server) == 0 {
            return Err(LayoutError::Roles("a mesh needs a server".into()));
        }
        if count(Role::Server) > MAX_SERVERS {
            return Err(LayoutError::Roles(format!(
                "a mesh takes at most {MAX_SERVERS} servers (one address host each), not {}",
                count(Role::Server)
            )));
        }
        Ok(())
    }

    /// The positions, by node id.
    pub fn positions(&self) -> Vec<(f64, f64)> {
        self.nodes.iter().map(|n| (n.x_m, n.y_m)).collect()
    }

    /// A drawing of the layout as SVG: nodes as circles labelled with their id (border
    /// router black, server grey, clients white, routers dashed), a line between nodes within
    /// `tx_range_m` of each other, 10 px per metre. docs/mesh/*.svg are these drawings.
    pub fn svg(&self, tx_range_m: f64) -> String {
        use std::fmt::Write as _;
        let scale = 10.0;
        let margin = 30.0;
        let (min_x, min_y) = self.nodes.iter().fold((f64::MAX, f64::MAX), |(x, y), n| {
            (x.min(n.x_m), y.min(n.y_m))
        });
        let (max_x, max_y) = self.nodes.iter().fold((f64::MIN, f64::MIN), |(x, y), n| {
            (x.max(n.x_m), y.max(n.y_m))
        });
        let px = |x: f64| (x - min_x) * scale + margin;
        let py = |y: f64| (y - min_y) * scale + margin;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0}\" height=\"{:.0}\" font-family=\"sans-serif\" font-size=\"10\">",
            (max_x - min_x) * scale + 2.0 * margin,
            (max_y - min_y) * scale + 2.0 * margin
        );
        for (i, a) in self.nodes.iter().enumerate() {
            for b in &self.nodes[i + 1..] {
                let d = ((a.x_m - b.x_m).powi(2) + (a.y_m - b.y_m).powi(2)).sqrt();
                if d <= tx_range_m * (1.0 + 1e-9) {
                    let _ = writeln!(
                        out,
                        "  <line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#999\"/>",
                        px(a.x_m), py(a.y_m), px(b.x_m), py(b.y_m)
                    );
                }
            }
        }
        for (i, n) in self.nodes.iter().enumerate() {
            let (fill, text, dash) = match n.role {
                Role::BorderRouter => ("black", "white", ""),
                Role::Server => ("#888", "white", ""),
                Role::Client => ("white", "black", ""),
                Role::Router => ("white", "black", " stroke-dasharray=\"3,2\""),
            };
            let _ = writeln!(
                out,
                "  <circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"11\" fill=\"{fill}\" stroke=\"black\"{dash}><title>{} ({:.2}, {:.2})</title></circle>",
                px(n.x_m), py(n.y_m), n.role.name(), n.x_m, n.y_m
            );
            let _ = writeln!(
                out,
                "  <text x=\"{:.1}\" y=\"{:.1}\" fill=\"{text}\" text-anchor=\"middle\">{i}</text>",
                px(n.x_m),
                py(n.y_m) + 3.5
            );
        }
        out.push_str("</svg>\n");
        out
    }

    /// Node ids with `role`, in order.
    pub fn with_role(&self, role: Role) -> impl Iterator<Item = u16> + '_ {
        self.nodes
            .iter()
            .enumerate()
            .filter(move |(_, n)| n.role == role)
            .map(|(i, _)| i as u16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_shapes_have_the_stated_sizes_and_roles() {
        let g = Layout::grid(3, 3, 10.0).unwrap();
        assert_eq!(g.nodes.len(), 9);
        assert_eq!(g.nodes[4].role, Role::BorderRouter);
        assert_eq!(g.nodes[2].role, Role::Server);
        assert_eq!(g.with_role(Role::Client).count(), 7);
        assert_eq!((g.nodes[5].x_m, g.nodes[5].y_m), (20.0, 10.0));
        assert_eq!(
            Layout::chain(20, 10.0)
                .unwrap()
                .with_role(Role::Client)
                .count(),
            18
        );
        assert_eq!(
            Layout::flower(5, 7, 10.0)
                .unwrap()
                .with_role(Role::Client)
                .count(),
            34
        );
        assert_eq!(
            Layout::dumbbell(10.0)
                .unwrap()
                .with_role(Role::Client)
                .count(),
            19
        );
        let h = Layout::half_dumbbell(10.0).unwrap();
        assert_eq!(h.with_role(Role::Client).count(), 3);
        for c in 0..3 {
            let d = ((h.nodes[c].x_m - 10.0).powi(2) + h.nodes[c].y_m.powi(2)).sqrt();
            assert!((d - 10.0).abs() < 1e-9);
        }
        let six = Layout::grid_with_servers(6, 6, 10.0, 2).unwrap();
        assert_eq!(
            six,
            Layout::grid(6, 6, 10.0)
                .unwrap()
                .with_roles(None, Some(&[5, 30]))
                .unwrap()
        );
        assert_eq!(six.with_role(Role::Client).count(), 33);
        assert_eq!(six.with_role(Role::Server).collect::<Vec<_>>(), [5, 30]);
        assert_eq!(six.with_role(Role::BorderRouter).collect::<Vec<_>>(), [21]);
        let four = Layout::grid_with_servers(3, 3, 10.0, 4).unwrap();
        assert_eq!(
            four.with_role(Role::Server).collect::<Vec<_>>(),
            [0, 2, 6, 8]
        );
        assert!(Layout::grid_with_servers(3, 3, 10.0, 0).is_err());
        assert!(Layout::grid_with_servers(3, 3, 10.0, 5).is_err());
        // A single row: its bottom-left corner is its top-left, which the third server needs.
        assert!(Layout::grid_with_servers(1, 5, 10.0, 2).is_ok());
        assert!(Layout::grid_with_servers(1, 5, 10.0, 3).is_err());
        assert!(Layout::grid(1, 1, 10.0).is_err());
        // The drawings in docs/mesh/ are these layouts (regenerate: COAPLAB_WRITE_SVG=1).
        let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/mesh");
        for (name, layout) in [
            ("grid-3x3", Layout::grid(3, 3, 10.0).unwrap()),
            (
                "grid-6x6",
                Layout::grid_with_servers(6, 6, 10.0, 2).unwrap(),
            ),
            ("chain-20", Layout::chain(20, 10.0).unwrap()),
            ("flower-5x7", Layout::flower(5, 7, 10.0).unwrap()),
            ("dumbbell", Layout::dumbbell(10.0).unwrap()),
            ("half-dumbbell", Layout::half_dumbbell(10.0).unwrap()),
        ] {
            let path = docs.join(format!("{name}.svg"));
            let svg = layout.svg(10.0);
            if std::env::var_os("COAPLAB_WRITE_SVG").is_some() {
                std::fs::create_dir_all(&docs).unwrap();
                std::fs::write(&path, &svg).unwrap();
            }
            assert_eq!(
                std::fs::read_to_string(&path).ok().as_deref(),
                Some(svg.as_str()),
                "{name}"
            );
        }
        assert!(g.clone().with_roles(Some(9), None).is_err());
        let many: Vec<u32> = (0..255).collect();
        let crowded = Layout::chain(300, 1.0)
            .unwrap()
            .with_roles(Some(299), Some(&many))
            .unwrap();
        assert!(matches!(crowded.validate(), Err(LayoutError::Roles(_))));
        // An off-mesh server: no server node, and a server node is refused.
        let chain = Layout::chain(3, 10.0).unwrap();
        assert!(chain.validate_with(false).is_ok());
        assert!(matches!(
            chain.validate_with(true),
            Err(LayoutError::Roles(_))
        ));
        let none = chain.with_roles(None, Some(&[])).unwrap();
        assert!(none.validate_with(true).is_ok());
        assert!(matches!(none.validate(), Err(LayoutError::Roles(_))));
    }
}
