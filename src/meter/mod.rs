//! What the cluster truly cost, and what a run did: each node's price over its own life, plus
//! GKE's fee for every hour the cluster existed — not its price now times its age, which is wrong
//! after any resize, autoscaling or scale to zero.
//!
//! A figure is exact over time someone watched the nodes (an engine's Node watch). Nodes alive
//! now are counted from their creation whoever watched, but a node that came and went while
//! nobody watched is not known at all: a figure over such time is *partial*, a lower bound ("at
//! least $X"). A node whose price the snapshot lacks makes the figure unknown (`None`), never 0.
//!
//! One file per job:
//! - [`spans`]: the arithmetic — node spans and watched stretches → the cost between two
//!   instants. Pure.
//! - [`nodes`]: a Node as a span's facts, and its price per hour (the ends' pricing of a node,
//!   `ends::cost::NodeFacts`, plus its pool's boot disk).
//! - [`run`]: a run's figure from its attempts: since its start until it ended (or now),
//!   carried on from what an engine recorded.
//! - [`ledger`]: that figure kept on the run's newest attempt (the `gantry.dev/cost`
//!   annotation), so a restarted Gantry, or `gantry status`, carries on from it.

pub mod ledger;
pub mod nodes;
pub mod run;
pub mod spans;
#[cfg(test)]
mod tests;

pub use nodes::{NodeSeen, PoolDisks};
pub use run::{RunCost, RunSpan};
pub use spans::{Figure, Meter, NodeSpan, PerHour, Stretch};

/// Why there is no figure on a cluster Gantry does not manage (`--context`): it prices GKE's
/// nodes only.
pub const NOT_PRICED_ON_A_CONTEXT: &str = "a kubeconfig context's nodes are not priced";

/// "$0.64", "at least $0.64", or `unknown` as people read a figure.
pub fn words(usd: Option<f64>, partial: bool) -> String {
    match usd {
        Some(usd) if partial => format!("at least {}", crate::pricing::format::usd(usd)),
        Some(usd) => crate::pricing::format::usd(usd),
        None => "unknown".to_string(),
    }
}
