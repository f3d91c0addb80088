//! The crate layering of docs/CONVENTIONS (pure leaves, the runtime on top, the binary and
//! harnesses above everything), written down once, and its check against `cargo metadata`.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// Pure libraries: codecs, matching, config, auth, stores. No runtime crate, no tokio.
    Leaf,
    /// `natrium-core`: connections, accounts, routing of messages. Depends on leaves only.
    Core,
    /// Subsystems that attach to the core through its internal-client and connection APIs.
    Runtime,
    /// The binary and the harnesses: may depend on anything.
    Top,
}

/// Every workspace crate and its layer. A new crate must be placed here before the tidy test
/// passes: deciding where it sits is part of creating it (see docs/tidy-rules.md).
pub const LAYERS: &[(&str, Layer)] = &[
    ("nats-proto", Layer::Leaf),
    ("nats-subject", Layer::Leaf),
    ("natrium-conf", Layer::Leaf),
    ("natrium-auth", Layer::Leaf),
    ("natrium-ws", Layer::Leaf),
    ("natrium-gofmt", Layer::Leaf),
    ("natrium-x509", Layer::Leaf),
    ("natrium-store", Layer::Leaf),
    ("natrium-core", Layer::Core),
    ("natrium-jetstream", Layer::Runtime),
    ("natrium-mqtt", Layer::Runtime),
    ("natrium-cluster", Layer::Runtime),
    ("natrium-monitor", Layer::Runtime),
    ("nats-server", Layer::Top),
    ("natrium-bench", Layer::Top),
    ("natrium-tests", Layer::Top),
];

/// Runtime crates that may use another runtime crate's public API: MQTT keeps its sessions
/// and retained messages in JetStream streams, as the Go server does. Add a pair here only
/// with that kind of reason; the usual way between runtime crates is through `natrium-core`.
pub const RUNTIME_EDGES: &[(&str, &str)] = &[("natrium-mqtt", "natrium-jetstream")];

/// Crates that bring an async runtime with them, which a leaf must not depend on.
fn is_runtime_dependency(name: &str) -> bool {
    name == "tokio"
        || name.starts_with("tokio-")
        || matches!(name, "hyper" | "hyper-util" | "async-nats" | "mio")
}

pub fn layer_of(name: &str) -> Option<Layer> {
    LAYERS.iter().find(|(n, _)| *n == name).map(|(_, l)| *l)
}

/// Whether a crate of `from` may depend on the workspace crate `to`.
fn allowed(from: (&str, Layer), to: (&str, Layer)) -> bool {
    match (from.1, to.1) {
        (Layer::Top, _)
        | (Layer::Leaf | Layer::Core | Layer::Runtime, Layer::Leaf)
        | (Layer::Runtime, Layer::Core) => true,
        (Layer::Runtime, Layer::Runtime) => RUNTIME_EDGES.contains(&(from.0, to.0)),
        _ => false,
    }
}

/// A workspace package as `cargo metadata` describes it.
pub struct Package {
    pub name: String,
    pub dir: std::path::PathBuf,
    /// (dependency name, kind: "normal", "dev" or "build", is a workspace path dependency)
    pub deps: Vec<(String, String, bool)>,
    /// (target kinds, target name, root source file)
    pub targets: Vec<(Vec<String>, String, std::path::PathBuf)>,
}

/// `cargo metadata --no-deps` for the workspace at `root`, packages sorted by name.
pub fn packages(root: &Path) -> Vec<Package> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root)
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata JSON");
    let str_of = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let mut pkgs: Vec<Package> = meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| {
            let manifest = std::path::PathBuf::from(str_of(&p["manifest_path"]));
            let deps = p["dependencies"].as_array().into_iter().flatten();
            let deps = deps.map(|d| {
                // A renamed dependency keeps its package name in `name`.
                let kind = d["kind"].as_str().unwrap_or("normal").to_string();
                (str_of(&d["name"]), kind, d.get("path").is_some())
            });
            let targets = p["targets"].as_array().into_iter().flatten();
            let targets = targets.map(|t| {
                let kinds = t["kind"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(str_of)
                    .collect();
                (kinds, str_of(&t["name"]), str_of(&t["src_path"]).into())
            });
            Package {
                name: str_of(&p["name"]),
                dir: manifest.parent().map(Path::to_path_buf).unwrap_or_default(),
                deps: deps.collect(),
                targets: targets.collect(),
            }
        })
        .collect();
    pkgs.sort_by(|a, b| a.name.cmp(&b.name));
    pkgs
}

/// Every way the workspace breaks the layering, one sentence each.
pub fn violations(pkgs: &[Package]) -> Vec<String> {
    let mut out = Vec::new();
    for p in pkgs {
        let Some(layer) = layer_of(&p.name) else {
            out.push(format!(
                "crate `{}` is not in the layer table: add it to LAYERS in \
                 crates/natrium-tests/tests/tidy/layers.rs (Leaf, Core, Runtime or Top; \
                 see docs/tidy-rules.md)",
                p.name
            ));
            continue;
        };
        for (dep, kind, workspace) in &p.deps {
            if layer == Layer::Leaf && is_runtime_dependency(dep) {
                out.push(format!(
                    "leaf crate `{}` depends on `{dep}` ({kind}): leaves stay free of the async \
                     runtime; move the code that needs it into a runtime crate",
                    p.name
                ));
            }
            if !workspace {
                continue;
            }
            let Some(dep_layer) = layer_of(dep) else {
                continue; // reported for the crate itself
            };
            if !allowed((&p.name, layer), (dep, dep_layer)) {
                out.push(format!(
                    "`{}` ({layer:?}) depends on `{dep}` ({dep_layer:?}, {kind}): a crate may \
                     only depend on layers below it (see docs/tidy-rules.md)",
                    p.name
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{allowed, violations, Layer, Package};

    fn package(name: &str, deps: &[(&str, bool)]) -> Package {
        Package {
            name: name.to_string(),
            dir: std::path::PathBuf::new(),
            deps: deps
                .iter()
                .map(|(d, ws)| ((*d).to_string(), "normal".to_string(), *ws))
                .collect(),
            targets: Vec::new(),
        }
    }

    #[test]
    fn tidy_layers_violations_are_named() {
        let pkgs = [
            package("natrium-newthing", &[]),
            package(
                "nats-proto",
                &[("tokio-util", false), ("natrium-core", true)],
            ),
            package(
                "natrium-core",
                &[("natrium-monitor", true), ("tokio", false)],
            ),
            package(
                "natrium-monitor",
                &[("natrium-core", true), ("nats-proto", true)],
            ),
        ];
        let v = violations(&pkgs);
        assert_eq!(v.len(), 4, "{v:#?}");
        assert!(v[0].contains("`natrium-newthing` is not in the layer table"));
        assert!(v[1].contains("`nats-proto` depends on `tokio-util`"));
        assert!(v[2].contains("`nats-proto` (Leaf) depends on `natrium-core`"));
        assert!(v[3].contains("`natrium-core` (Core) depends on `natrium-monitor`"));
    }

    #[test]
    fn tidy_layers_table_rules() {
        let leaf = ("nats-proto", Layer::Leaf);
        let core = ("natrium-core", Layer::Core);
        let js = ("natrium-jetstream", Layer::Runtime);
        let mqtt = ("natrium-mqtt", Layer::Runtime);
        let top = ("nats-server", Layer::Top);
        assert!(allowed(core, leaf) && allowed(js, core) && allowed(mqtt, js));
        assert!(allowed(top, mqtt) && allowed(leaf, ("natrium-auth", Layer::Leaf)));
        assert!(!allowed(leaf, core) && !allowed(core, js) && !allowed(js, mqtt));
        assert!(!allowed(js, top) && !allowed(core, top) && !allowed(leaf, top));
    }
}
