//! A plan as people read it, said once for every place that shows it: `gantry plan` prints it,
//! the TUI's plan overlay lists it, and the cluster pane says the gist of it in one line.

use serde_json::Value;

use super::ClusterRef;
use super::plan::{Action, Change, How, Plan};
use crate::pricing::{Catalogue, ClusterShape, Estimate, PoolShape, format};

/// The whole plan: a header naming the cluster, then [`body`].
pub fn render(plan: &Plan, cluster: &ClusterRef) -> Vec<String> {
    let mut lines = vec![format!("Plan for cluster {cluster}:")];
    lines.extend(body(plan, &cluster.name));
    lines
}

/// One line per change (or what a create would make, or that nothing would change), then the
/// cost before and after.
pub fn body(plan: &Plan, cluster: &str) -> Vec<String> {
    let mut lines = Vec::new();
    match plan.action {
        Action::None => lines.push("No changes: the cluster matches the config.".into()),
        Action::Create => {
            lines.push(format!(
                "  + cluster {cluster} in {}",
                plan.desired.location
            ));
            lines.extend(describe_pools(&plan.desired));
        }
        Action::Update => lines.extend(plan.changes.iter().map(|change| {
            let fallback = change
                .pool
                .as_deref()
                .and_then(|pool| plan.fallbacks.iter().find(|f| f.pool == pool))
                .filter(|_| change.field == "nodePool");
            match fallback {
                Some(f) => format!(
                    "  - pool {}: {}, Gantry's on-demand fallback for {}; no run needs it now (DeleteNodePool removes it and its nodes, {})",
                    f.pool,
                    value(&change.current),
                    f.of,
                    change.how.describe()
                ),
                None => change_line(change),
            }
        })),
    }
    lines.extend(plan.fallbacks.iter().filter(|f| f.in_use).map(|f| {
        format!(
            "  = pool {}: Gantry's on-demand fallback for {}, kept while a run uses it",
            f.pool, f.of
        )
    }));
    lines.push(cost_line(plan));
    lines
}

/// The gist of an update in one line, config first: "config 3 × n1-standard-1 · cluster 1 ×
/// e2-medium", and "(+N more)" when other pools or labels differ too. None when there is
/// nothing to update.
pub fn difference(plan: &Plan) -> Option<String> {
    if plan.action != Action::Update {
        return None;
    }
    // What differs: each pool once, whatever of it differs; each cluster field on its own.
    let mut subjects: Vec<(Option<&str>, &str)> = Vec::new();
    for change in &plan.changes {
        let subject = match &change.pool {
            Some(pool) => (Some(pool.as_str()), ""),
            None => (None, change.field.as_str()),
        };
        if !subjects.contains(&subject) {
            subjects.push(subject);
        }
    }
    let first = plan.changes.first()?;
    let (config, cluster) = match &first.pool {
        Some(pool) => pool_sides(plan, pool),
        None => (
            format!("{} {}", first.field, value(&first.desired)),
            format!("{} {}", first.field, value(&first.current)),
        ),
    };
    let mut line = format!("config {config} · cluster {cluster}");
    if subjects.len() > 1 {
        line.push_str(&format!(" (+{} more)", subjects.len() - 1));
    }
    Some(line)
}

/// A pool as the config wants it and as the cluster has it, with whichever of its fields
/// differ beyond the node count and machine type.
fn pool_sides(plan: &Plan, pool: &str) -> (String, String) {
    let fields: Vec<&str> = plan
        .changes
        .iter()
        .filter(|c| c.pool.as_deref() == Some(pool))
        .map(|c| c.field.as_str())
        .collect();
    let find = |shape: Option<&ClusterShape>| {
        shape
            .and_then(|s| s.pools.iter().find(|p| p.name == pool))
            .map_or_else(|| format!("no pool {pool}"), |p| describe_pool(p, &fields))
    };
    (find(Some(&plan.desired)), find(plan.current.as_ref()))
}

/// "3 × n1-standard-1", with the GPUs, disk and spot setting when they are among `fields`.
fn describe_pool(pool: &PoolShape, fields: &[&str]) -> String {
    let mut text = format!("{} × {}", pool.nodes, pool.machine_type);
    if fields.contains(&"accelerators") {
        match &pool.accelerator {
            Some(gpu) => text.push_str(&format!(" with {} x {}", gpu.count, gpu.kind)),
            None => text.push_str(" without GPUs"),
        }
    }
    if fields.contains(&"diskType") || fields.contains(&"diskSizeGb") {
        text.push_str(&format!(", {} GB {}", pool.disk_size_gb, pool.disk_type));
    }
    if fields.contains(&"spot") {
        text.push_str(if pool.spot { ", spot" } else { ", on-demand" });
    }
    text
}

fn describe_pools(shape: &ClusterShape) -> impl Iterator<Item = String> + '_ {
    shape.pools.iter().map(|p| {
        let gpu = p
            .accelerator
            .as_ref()
            .map(|a| format!(" with {} x {}", a.count, a.kind))
            .unwrap_or_default();
        let spot = if p.spot { ", spot" } else { "" };
        format!(
            "  + pool {}: {} × {}{gpu}, {} GB {}{spot}",
            p.name, p.nodes, p.machine_type, p.disk_size_gb, p.disk_type
        )
    })
}

/// "  ~ default-pool.nodeCount: 1 → 3 (in place)", and the like for each kind of change.
pub fn change_line(change: &Change) -> String {
    let how = change.how.describe();
    let current = value(&change.current);
    let desired = value(&change.desired);
    match (change.field.as_str(), &change.pool) {
        ("nodePool", Some(pool)) if change.current.is_null() => {
            format!("  + pool {pool}: {desired} ({how})")
        }
        ("nodePool", Some(pool)) => format!(
            "  - pool {pool}: {current}, not in the config (DeleteNodePool would remove it and its nodes, {how})"
        ),
        (field, Some(pool)) => format!("  ~ {pool}.{field}: {current} → {desired} ({how})"),
        (field, None) => {
            let mark = if change.how == How::NewCluster {
                '!'
            } else {
                '~'
            };
            format!("  {mark} {field}: {current} → {desired} ({how})")
        }
    }
}

fn value(v: &Value) -> String {
    match v {
        Value::Null => "(none)".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// "Cost: ≈ $0.05/h → $0.28/h ($37/month → $207/month)"; either side may be "price unknown (…)".
pub fn cost_line(plan: &Plan) -> String {
    let month = Catalogue::embedded().hours_per_month();
    let after = &plan.cost_after;
    match (&plan.cost_now, plan.action) {
        (Some(now), Action::Update) => match (now, after) {
            (Estimate::Known(a), Estimate::Known(b)) => format!(
                "Cost: ≈ {}/h → {}/h ({}/month → {}/month)",
                format::usd(*a),
                format::usd(*b),
                format::usd_rounded(a * month),
                format::usd_rounded(b * month)
            ),
            _ => format!(
                "Cost: {} → {}",
                format::estimate(now, month),
                format::estimate(after, month)
            ),
        },
        _ => format!("Cost: {}", format::estimate(after, month)),
    }
}

#[cfg(test)]
#[path = "plan_text_tests.rs"]
mod tests;
