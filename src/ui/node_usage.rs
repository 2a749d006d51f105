//! The cluster pane's usage line: what all nodes use of what they can give, then each node, the
//! busiest first, as far as the width goes (`kubectl top nodes` in one line).

use ratatui::text::{Line, Span};

use super::theme::Theme;
use crate::engine::world::Usage;
use crate::k8s::usage::{NodeUsage, cpu_text, memory_text, total};

/// The line, or None before the first reading; `gpus`: the GPUs' part
/// (`GPU 6/8 busy · 412 W`), after the memory.
pub fn line(
    usage: &Usage,
    cluster: &str,
    gpus: Option<String>,
    theme: &Theme,
) -> Option<Line<'static>> {
    let gpu_spans = |spans: &mut Vec<Span<'static>>| {
        if let Some(gpus) = &gpus {
            spans.push(Span::styled("  ·  ", theme.dim()));
            spans.push(Span::raw(gpus.clone()));
        }
    };
    let nodes = match usage {
        Usage::Unknown if gpus.is_some() => {
            let mut spans = Vec::new();
            gpu_spans(&mut spans);
            spans.remove(0);
            return Some(Line::from(spans));
        }
        Usage::Unknown => return None,
        Usage::Unavailable => {
            let mut spans = vec![
                Span::styled("usage ", theme.dim()),
                Span::raw("n/a"),
                Span::styled(" (no metrics-server on this cluster)", theme.dim()),
            ];
            gpu_spans(&mut spans);
            return Some(Line::from(spans));
        }
        Usage::Known(reading) if reading.nodes.is_empty() => return None,
        Usage::Known(reading) => &reading.nodes,
    };
    let all = total(nodes);
    let (cpu_pct, mem_pct) = all.percents();
    let mut spans = vec![Span::styled("CPU ", theme.dim())];
    spans.push(Span::raw(used_of(
        cpu_text(all.cpu_millis),
        cpu_text(all.cpu_allocatable_millis),
        cpu_pct,
    )));
    spans.push(Span::styled("  ·  MEM ", theme.dim()));
    spans.push(Span::raw(used_of(
        memory_text(all.memory_bytes),
        memory_text(all.memory_allocatable_bytes),
        mem_pct,
    )));
    gpu_spans(&mut spans);
    let mut busiest: Vec<&NodeUsage> = nodes.iter().collect();
    busiest.sort_by(|a, b| {
        b.cpu_millis
            .cmp(&a.cpu_millis)
            .then_with(|| a.name.cmp(&b.name))
    });
    let names = short_names(nodes, cluster);
    for (i, node) in busiest.into_iter().enumerate() {
        let (cpu, mem) = node.percents();
        spans.push(Span::styled(
            if i == 0 { "  ·  " } else { "  " },
            theme.dim(),
        ));
        spans.push(Span::styled(format!("{} ", names(&node.name)), theme.dim()));
        spans.push(Span::raw(format!(
            "{}/{}",
            cpu.map_or("-".into(), |p| format!("{p}%")),
            mem.map_or("-".into(), |p| format!("{p}%"))
        )));
    }
    Some(Line::from(spans))
}

/// `1.0/2.8 (36%)`: used of allocatable, and the share when there is one.
fn used_of(used: String, of: String, percent: Option<u64>) -> String {
    let share = percent.map(|p| format!(" ({p}%)")).unwrap_or_default();
    format!("{used}/{of}{share}")
}

/// Node names as short as tells them apart: the last `-` segment when it is unique among the
/// nodes (GKE's `…-x1y2`), else the name without `gke-<cluster>-`.
fn short_names<'a>(nodes: &'a [NodeUsage], cluster: &'a str) -> impl Fn(&'a str) -> String {
    let last = |name: &'a str| name.rsplit('-').next().unwrap_or(name);
    let unique = {
        let mut seen = std::collections::HashMap::new();
        for n in nodes {
            *seen.entry(last(&n.name)).or_insert(0usize) += 1;
        }
        nodes.len() > 1 && seen.values().all(|&c| c == 1)
    };
    move |name: &'a str| {
        crate::sanitize::one_line(if unique {
            last(name)
        } else {
            super::widgets::short_node(name, cluster)
        })
    }
}
