//! The watcher in a plan, said once for `gantry plan` (text and `--json`) and the plan overlay:
//! what `gantry up` (or the overlay's `y`) would make — its Deployment, what it runs, its image
//! and requests, its RBAC and settings objects — or that the one in the cluster is current, or
//! what of it would change; and what it costs. Its cost is priced as a pod's end is
//! (`ends::cost`): its CPU and memory requests' largest share of the node it would run on, a
//! node of the config's default pool, at that node's price in the snapshot.

use k8s_openapi::api::apps::v1::Deployment;
use serde::Serialize;

use super::desired::Desired;
use crate::config::Config;
use crate::ends::cost::NodeFacts;
use crate::pricing::{Catalogue, format};
use crate::vocabulary::Requests;

/// The watcher in the cluster, as far as a plan compares it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct There {
    /// Its [`super::DESIRED_ANNOTATION`]; None on one an older Gantry installed.
    pub desired: Option<String>,
    pub image: Option<String>,
    pub cpu: Option<String>,
    pub memory: Option<String>,
    pub serves: bool,
    pub version: Option<String>,
}

impl There {
    pub fn of(deployment: &Deployment) -> There {
        let container = deployment
            .spec
            .as_ref()
            .and_then(|s| s.template.spec.as_ref())
            .and_then(|p| p.containers.first());
        let request = |key: &str| {
            container
                .and_then(|c| c.resources.as_ref())
                .and_then(|r| r.requests.as_ref())
                .and_then(|r| r.get(key))
                .map(|q| crate::sanitize::one_line(&q.0))
        };
        let annotation = |key: &str| {
            deployment
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(key))
                .map(|v| crate::sanitize::one_line(v))
        };
        There {
            desired: annotation(super::DESIRED_ANNOTATION),
            image: container
                .and_then(|c| c.image.as_deref())
                .map(crate::sanitize::one_line),
            cpu: request("cpu"),
            memory: request("memory"),
            serves: container
                .and_then(|c| c.args.as_ref())
                .is_some_and(|args| args.iter().any(|a| a == "serve")),
            version: deployment
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(super::VERSION_LABEL))
                .map(|v| crate::sanitize::one_line(v)),
        }
    }
}

/// The watcher in the cluster against the config's.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "is", rename_all = "kebab-case")]
pub enum State {
    /// Not in the cluster (or no cluster yet): made.
    New,
    /// What the config asks for.
    Current,
    /// There, and these differ: brought up to date in place (its pod restarts).
    Changes { what: Vec<String> },
    /// The cluster could not be read: made or brought up to date either way.
    Unknown { why: String },
}

/// What the watcher costs: its requests' share of a node of the default pool.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    pub pool: String,
    pub machine_type: String,
    pub spot: bool,
    /// Of the node (0 to 1), and the request that decides it (`CPU`, `memory`); None where the
    /// snapshot does not know the machine type's size.
    pub share: Option<f64>,
    pub by: Option<&'static str>,
    /// US dollars; None where the snapshot has no price, never 0.
    pub node_per_hour: Option<f64>,
    pub per_hour: Option<f64>,
    pub per_month: Option<f64>,
}

/// The watcher in a plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Planned {
    pub deployment: String,
    pub namespace: String,
    pub image: String,
    /// `watch` or `serve`.
    pub runs: &'static str,
    pub cpu: String,
    pub memory: String,
    /// Every other object it is made of: `ServiceAccount/…`, `Role/…`, …
    pub objects: Vec<String>,
    pub state: State,
    pub cost: Cost,
    /// The config's ([`Desired::fingerprint`]): what the one there is compared by.
    #[serde(skip)]
    pub fingerprint: String,
}

impl Planned {
    /// The config's watcher against what is in the cluster (`Ok(None)`: not there, or no
    /// cluster yet; `Err`: the cluster could not be read, and why). `location`: the cluster's.
    pub fn of(
        desired: &Desired,
        config: &Config,
        location: &str,
        there: Result<Option<&There>, String>,
    ) -> Planned {
        let plan = &desired.plan;
        let mut objects = vec![
            format!("ServiceAccount/{}", super::name(&plan.job)),
            format!("Role/{}", super::name(&plan.job)),
            format!("RoleBinding/{}", super::name(&plan.job)),
            format!(
                "ClusterRole/{}",
                super::cluster_name(&plan.namespace, &plan.job)
            ),
            format!(
                "ClusterRoleBinding/{}",
                super::cluster_name(&plan.namespace, &plan.job)
            ),
            format!("ConfigMap/{}", super::name(&plan.job)),
            format!("Secret/{}", super::name(&plan.job)),
        ];
        if plan.load_balancer().is_some() {
            objects.push(format!("Service/{}", super::name(&plan.job)));
        }
        let mut planned = Planned {
            deployment: super::name(&plan.job),
            namespace: plan.namespace.clone(),
            image: plan.image.clone(),
            runs: if plan.serve { "serve" } else { "watch" },
            cpu: plan.cpu.clone(),
            memory: plan.memory.clone(),
            objects,
            state: State::New,
            cost: cost(config, location),
            fingerprint: desired.fingerprint(),
        };
        planned.seen(there);
        planned
    }

    /// What is in the cluster now (`Ok(None)`: no watcher, or no cluster yet; `Err`: it could
    /// not be read, and why).
    pub fn seen(&mut self, there: Result<Option<&There>, String>) {
        self.state = match there {
            Err(why) => State::Unknown { why },
            Ok(None) => State::New,
            Ok(Some(there)) => self.compare(there),
        };
    }

    /// Whether `gantry up` (or `y`) has something to do for it.
    pub fn needs_install(&self) -> bool {
        self.state != State::Current
    }

    /// As `gantry plan` prints it and the overlay lists it, each line short enough for 80
    /// columns but for the names in it.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = vec!["Watcher ([watcher] in-cluster = true):".to_string()];
        let what = format!("deployment {} in {}", self.deployment, self.namespace);
        let detail = format!(
            "      image {}, requests {} CPU, {} memory",
            self.image, self.cpu, self.memory
        );
        match &self.state {
            State::New => {
                lines.push(format!("  + {what}: gantry {}", self.runs));
                lines.push(detail);
                let kinds: Vec<&str> = self
                    .objects
                    .iter()
                    .map(|o| o.split('/').next().unwrap_or(o))
                    .collect();
                let (rbac, rest) = kinds.split_at(kinds.len().min(5));
                lines.push(format!("  + {}", rbac.join(", ")));
                lines.push(format!("  + {}", rest.join(", ")));
            }
            State::Current => {
                lines.push(format!("  = {what}: current, gantry {}", self.runs));
                lines.push(detail);
            }
            State::Changes { what: changes } => {
                lines.push(format!("  ~ {what}: updated in place, its pod restarts"));
                lines.extend(changes.iter().map(|c| format!("      {c}")));
            }
            State::Unknown { why } => {
                lines.push(format!("  ? {what}: made or brought up to date"));
                lines.push(format!(
                    "      the cluster could not be read ({})",
                    crate::sanitize::one_line(why)
                ));
            }
        }
        lines.extend(self.cost_lines());
        lines
    }

    /// "Watcher cost: ≈ $0.0025/h, $1.85/month, its requests' share of a node", then which
    /// share of which node at what price.
    fn cost_lines(&self) -> Vec<String> {
        let c = &self.cost;
        let node = format!(
            "{}'s {}, {}",
            c.pool,
            c.machine_type,
            if c.spot { "spot" } else { "on-demand" }
        );
        let (Some(share), Some(by)) = (c.share, c.by) else {
            return vec![format!(
                "Watcher cost: unknown: the price snapshot has no size for {node}"
            )];
        };
        let (Some(per_hour), Some(per_month), Some(node_hour)) =
            (c.per_hour, c.per_month, c.node_per_hour)
        else {
            return vec![format!(
                "Watcher cost: price unknown ({} of {node}: no price in the snapshot)",
                percent(share)
            )];
        };
        vec![
            format!(
                "Watcher cost: ≈ {}/h, {}/month, its requests' share of a node",
                format::usd(per_hour),
                format::usd_rounded(per_month)
            ),
            // To a hundredth of a cent: a small node's price in cents says little.
            format!(
                "  {} (by {by}) of {node} at ${node_hour:.4}/h",
                percent(share)
            ),
        ]
    }
}

fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

impl Planned {
    /// What differs between the watcher there and the config's, in words; none: current.
    fn compare(&self, there: &There) -> State {
        if there.desired.as_deref() == Some(self.fingerprint.as_str()) {
            return State::Current;
        }
        let mut what = Vec::new();
        let was = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".into());
        if there.image.as_deref() != Some(self.image.as_str()) {
            what.push(format!("image {} → {}", was(&there.image), self.image));
        }
        let requests = |cpu: &str, memory: &str| format!("{cpu} CPU, {memory} memory");
        if there.cpu.as_deref() != Some(self.cpu.as_str())
            || there.memory.as_deref() != Some(self.memory.as_str())
        {
            what.push(format!(
                "requests {} → {}",
                requests(&was(&there.cpu), &was(&there.memory)),
                requests(&self.cpu, &self.memory)
            ));
        }
        let runs = if there.serves { "serve" } else { "watch" };
        if runs != self.runs {
            what.push(format!("gantry {runs} → gantry {}", self.runs));
        }
        if there.version.as_deref() != Some(super::VERSION) {
            what.push(format!(
                "Gantry {} → {}",
                was(&there.version),
                super::VERSION
            ));
        }
        if what.is_empty() {
            what.push("its settings, secrets or SSH keys".into());
        }
        State::Changes { what }
    }
}

/// Its requests' share of a node of the default pool, priced as a pod's end is.
fn cost(config: &Config, location: &str) -> Cost {
    let cluster = &config.cluster;
    let w = &config.watcher;
    let milli = |q: &str| crate::k8s::usage::milli(q).unwrap_or(0);
    let asked = Requests {
        cpu_millis: milli(&w.cpu),
        memory_bytes: milli(&w.memory) / 1000,
        gpus: 0,
    };
    let facts = NodeFacts::planned(&cluster.machine_type, location, cluster.spot);
    let share = facts.as_ref().map(|f| f.share(&asked, 1));
    let by = facts.as_ref().map(|f| {
        let cpu = asked.cpu_millis as f64 / f.allocatable.cpu_millis.max(1) as f64;
        let memory = asked.memory_bytes as f64 / f.allocatable.memory_bytes.max(1) as f64;
        if cpu >= memory { "CPU" } else { "memory" }
    });
    let per_hour = facts
        .as_ref()
        .zip(share)
        .and_then(|(f, share)| f.cost(share, 3600));
    Cost {
        pool: cluster.node_pool.clone(),
        machine_type: cluster.machine_type.clone(),
        spot: cluster.spot,
        share,
        by,
        node_per_hour: facts.as_ref().and_then(|f| f.per_hour),
        per_hour,
        per_month: per_hour.map(|h| format::round_usd(h * Catalogue::embedded().hours_per_month())),
    }
}

#[cfg(test)]
#[path = "planned_tests.rs"]
mod tests;
