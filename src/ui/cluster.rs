//! The cluster pane: name, place, status, drift from the config, what it costs (per hour, and
//! so far by the meter), progress of an operation, pools and endpoint, and what the nodes use. Its title
//! keeps the status and the drift marker, its first line the nodes and the cost, at any width.
//! The whole plan is behind `P`.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::theme::Theme;
use super::widgets::{duration, pane};
use crate::app::App;
use crate::engine::World;
use crate::engine::world::cluster::ClusterPhase;
use crate::gke::ClusterStatus;
use crate::gke::cost::{self, RunningCost};
use crate::keys::Action;
use crate::pricing::format::usd;

pub fn draw(
    frame: &mut Frame,
    area: Rect,
    model: &World,
    app: &App,
    theme: &Theme,
    now: jiff::Timestamp,
) {
    let view = &model.cluster;
    let place = view
        .target
        .as_ref()
        .map(|t| t.place.clone())
        .unwrap_or_default();
    let status = view
        .summary
        .as_ref()
        .map_or("…", |s| s.status.name())
        .to_string();
    let shown_status = match view.phase() {
        ClusterPhase::NotCreated => "NOT CREATED".to_string(),
        ClusterPhase::Deleting => "DELETING".to_string(),
        ClusterPhase::Checking => "checking…".to_string(),
        _ => status.clone(),
    };
    let place = if view.managed() {
        place
    } else {
        "kubeconfig context".to_string()
    };
    let mut title = vec![
        Span::styled(format!(" {} ", view.name()), theme.title()),
        Span::styled(place, theme.dim()),
        Span::raw(" "),
        Span::styled(format!("{shown_status} "), theme.status(&status)),
    ];
    let drifted = view.drifted();
    if drifted.is_some() {
        title.push(Span::styled("⚠ drift ", theme.warning()));
    }
    if view.target.as_ref().is_some_and(|t| t.simulated) {
        title.push(Span::styled("(simulated) ", theme.dim()));
    }
    let width = area.width.saturating_sub(2) as usize;
    let mut lines = Vec::new();
    if let Some(s) = &view.summary
        && s.status != ClusterStatus::NotFound
        && !view.managed()
    {
        lines.push(Line::from(vec![
            Span::raw(format!("{} nodes", s.node_count)),
            Span::styled("  ·  ", theme.dim()),
            Span::raw(format!("v{}", s.version)),
            Span::styled("  ·  ", theme.dim()),
            Span::raw(s.location.clone()),
            Span::styled("  ·  ", theme.dim()),
            // The meter prices GKE's nodes only (`meter::NOT_PRICED_ON_A_CONTEXT`).
            Span::raw("cost unavailable"),
        ]));
    } else if let Some(s) = &view.summary
        && s.status != ClusterStatus::NotFound
    {
        let pools: Vec<String> = s
            .node_pools
            .iter()
            .map(|p| {
                let gpu = p
                    .accelerator
                    .as_ref()
                    .map(|a| format!(" +{a}"))
                    .unwrap_or_default();
                format!(
                    "{}: {}×{}{gpu}",
                    p.name, p.initial_node_count, p.machine_type
                )
            })
            .collect();
        lines.push(Line::from(vec![
            Span::raw(format!("{} nodes", s.node_count)),
            Span::styled("  ·  ", theme.dim()),
            Span::raw(running_cost(model, s, now)),
            Span::styled("  ·  ", theme.dim()),
            Span::raw(pools.join(", ")),
            Span::styled("  ·  ", theme.dim()),
            Span::raw(if s.version.is_empty() {
                "-".to_string()
            } else {
                format!("v{}", s.version)
            }),
            Span::styled("  ·  ", theme.dim()),
            Span::raw(if s.endpoint.is_empty() {
                "no endpoint yet".to_string()
            } else {
                s.endpoint.clone()
            }),
        ]));
    }
    if let Some(p) = &view.progress {
        let bar_width = 12usize;
        let filled = (p.fraction() * bar_width as f64).round() as usize;
        let stage = p
            .stage
            .as_ref()
            .map(|s| format!("{}/{} {}", s.index, s.total, s.name))
            .unwrap_or_else(|| p.status.clone());
        let detail = if p.detail.is_empty() {
            String::new()
        } else {
            format!(" — {}", crate::sanitize::one_line(&p.detail))
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{} ", p.kind.as_str()), theme.busy()),
            Span::styled("█".repeat(filled), theme.busy()),
            Span::styled("░".repeat(bar_width - filled.min(bar_width)), theme.dim()),
            Span::raw(format!(
                " {} · {stage}{detail}",
                duration(p.elapsed_at(now))
            )),
        ]));
    } else {
        match view.phase() {
            ClusterPhase::NotCreated if app.read_only() => {
                lines.push(Line::styled(
                    "Not created (read-only: Gantry will not create it).",
                    theme.dim(),
                ));
            }
            ClusterPhase::NotCreated => {
                let c = &app.config.cluster;
                let keys = app.keymap.keys_for(Action::CreateCluster);
                lines.push(Line::from(vec![
                    Span::raw("Not created. Press "),
                    Span::styled(keys, theme.key()),
                    Span::raw(format!(
                        " to create it ({} × {}{}).",
                        c.node_count,
                        c.machine_type,
                        configured_cost(c, view.summary.as_ref())
                    )),
                ]));
            }
            ClusterPhase::Error => {
                let msg = view
                    .summary
                    .as_ref()
                    .map(|s| crate::sanitize::one_line(&s.status_message))
                    .unwrap_or_default();
                lines.push(Line::styled(msg, theme.bad()));
            }
            _ => {}
        }
    }
    if view.progress.is_none()
        && lines.len() < 2
        && let Some(difference) = drifted.and_then(crate::gke::plan_text::difference)
    {
        lines.push(Line::from(vec![
            Span::styled("⚠ ", theme.warning()),
            Span::raw(crate::sanitize::one_line(&difference)),
            Span::styled("  ", theme.dim()),
            Span::styled(app.keymap.keys_for(Action::Plan), theme.key()),
            Span::styled(" plan", theme.dim()),
        ]));
    }
    if let Some(e) = &view.last_error
        && lines.len() < 2
    {
        lines.push(Line::styled(e.clone(), theme.bad()));
    }
    if lines.len() < 2
        && view.progress.is_none()
        && view.summary.as_ref().map(|s| s.status) == Some(ClusterStatus::Running)
        && let Some(usage) = super::node_usage::line(
            &model.usage,
            view.name(),
            super::gpus::cluster_part(model, app.config.guards.gpu_idle_below),
            theme,
        )
    {
        lines.push(usage);
    }
    let lines: Vec<Line> = lines
        .into_iter()
        .map(|l| super::widgets::truncate_line(l, width))
        .collect();
    let block = pane(Line::from(title), false, theme);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// "$0.28/h ($0.64 so far)": what the cluster costs now, and what it cost since its creation —
/// each node's price over its life and GKE's fee (`meter`), "at least" when some of that time
/// nobody watched the nodes; nothing said of it before the nodes are listed.
fn running_cost(
    model: &World,
    summary: &crate::gke::ClusterSummary,
    now: jiff::Timestamp,
) -> String {
    let Some(per_hour) = RunningCost::of(summary).per_hour.usd() else {
        return "price unknown".to_string();
    };
    let per_hour = format!("{}/h", usd(per_hour));
    match model.cluster_cost_so_far(now) {
        Some(so_far) => format!(
            "{per_hour} ({} so far)",
            crate::meter::words(so_far.usd, so_far.partial)
        ),
        None => per_hour,
    }
}

/// ", ≈ $0.28/h" for the cluster the config describes, where it would be created; ", price
/// unknown" when the snapshot lacks a price.
fn configured_cost(
    config: &crate::config::ClusterConfig,
    summary: Option<&crate::gke::ClusterSummary>,
) -> String {
    let Some(location) = summary.map(|s| s.location.as_str()) else {
        return String::new();
    };
    match cost::per_hour(&cost::configured_shape(config, location)).usd() {
        Some(per_hour) => format!(", ≈ {}/h", usd(per_hour)),
        None => ", price unknown".to_string(),
    }
}
