//! What each attempt used, under the attempts table of `gantry status`: node-hours (its
//! duration × the cluster's nodes) and their cost at the cluster's hourly price. Counted from
//! the cluster as it is now: a cluster resized since is counted at its present size.

use jiff::Timestamp;

use super::job::AttemptStatus;
use crate::gke::cost::Used;
use crate::pricing::Estimate;
use crate::pricing::format::usd;
use crate::ui::widgets::col;

/// A table of each attempt's node-hours and cost, and how they were counted.
pub fn attempt_costs(
    out: &mut Vec<String>,
    attempts: &[AttemptStatus],
    nodes: u32,
    per_hour: &Estimate,
    now: Timestamp,
) {
    out.push(format!(
        "  {}{}COST",
        col("ATTEMPT", 24),
        col("NODE-HOURS", 12)
    ));
    for a in attempts {
        let (hours, cost) = match used(a, nodes, per_hour, now) {
            Some(used) => (
                format!("{:.2}", used.node_hours),
                used.cost
                    .usd()
                    .map_or_else(|| "price unknown".to_string(), usd),
            ),
            None => ("-".to_string(), "-".to_string()),
        };
        out.push(format!(
            "  {}{}{cost}",
            col(&a.summary.name, 24),
            col(&hours, 12)
        ));
    }
    let node_word = if nodes == 1 { "node" } else { "nodes" };
    out.push(format!(
        "  (duration × the cluster's {nodes} {node_word} now, at its price per hour)"
    ));
}

/// From its start to its end, or to `now` while it runs; none before it starts or when its end
/// is not known.
fn used(a: &AttemptStatus, nodes: u32, per_hour: &Estimate, now: Timestamp) -> Option<Used> {
    let s = &a.summary;
    let start = s.start_time?;
    let end = match s.finished_at.or(s.completion_time) {
        Some(end) => end,
        None if !s.status.is_finished() => now,
        None => return None,
    };
    Some(Used::over(start, end, nodes, per_hour))
}
