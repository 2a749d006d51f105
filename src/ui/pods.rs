//! The pods pane: the current attempt's pods with phase, readiness, restarts, what each uses
//! (CPU and memory from metrics.k8s.io, `n/a` without metrics-server), its GPUs (how busy and
//! how full, from the DCGM exporters, where there is room; else how many it asked for), node,
//! age, and why when waiting or terminated; the selected pod's GPUs each on a line under it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::theme::Theme;
use super::widgets::{age, col, pane, short_node};
use crate::app::{App, Focus};
use crate::engine::World;
use crate::k8s::usage::{cpu_text, memory_text};
use crate::sanitize::one_line;

const CPU_W: usize = 6;
const MEM_W: usize = 7;
const GPU_W: usize = 4;
/// `100% 568G/640G `: eight H100s' figures.
const GPU_FIGURES_W: usize = 15;

/// The optional columns that fit.
#[derive(Clone, Copy)]
struct Shown {
    cpu: bool,
    mem: bool,
    gpu: bool,
    /// The GPUs' figures, not their count.
    figures: bool,
}

impl Shown {
    /// CPU and MEM (metrics.k8s.io) where they fit: both from 51 columns, MEM alone from 45;
    /// GPU when a pod asked for one, from 55: its figures once read, from 70.
    fn at(width: usize, gpus: bool, figures: bool) -> Shown {
        let gpu = gpus && width >= 55;
        Shown {
            cpu: width >= 51,
            mem: width >= 45,
            gpu,
            figures: gpu && figures && width >= 70,
        }
    }

    fn gpu_width(self) -> usize {
        if self.figures { GPU_FIGURES_W } else { GPU_W }
    }

    fn width(self) -> usize {
        usize::from(self.cpu) * CPU_W
            + usize::from(self.mem) * MEM_W
            + usize::from(self.gpu) * self.gpu_width()
    }

    fn header(self) -> String {
        let mut h = String::new();
        if self.cpu {
            h.push_str(&col("CPU", CPU_W));
        }
        if self.mem {
            h.push_str(&col("MEM", MEM_W));
        }
        if self.gpu {
            h.push_str(&col("GPU", self.gpu_width()));
        }
        h
    }
}

pub fn draw(
    frame: &mut Frame,
    area: Rect,
    model: &World,
    app: &App,
    theme: &Theme,
    now: jiff::Timestamp,
) {
    // Sorted once per frame (5,000 pods is a few hundred microseconds; asking `JobsModel` for the
    // selected pod and its index would sort them three more times).
    let pods = app.selection.pods(&model.jobs);
    let width = area.width.saturating_sub(2) as usize;
    let rows = area.height.saturating_sub(2) as usize;
    // As `Selection::pod`: the one chosen if it is still there, else the first.
    let at = app
        .selection
        .pod
        .as_ref()
        .and_then(|name| pods.iter().position(|p| &p.name == name))
        .unwrap_or(0);
    let selected = pods.get(at).map(|p| p.name.as_str());
    let wide = width >= 80;
    let figures: Vec<Option<String>> = pods
        .iter()
        .map(|p| {
            (p.gpus > 0)
                .then(|| super::gpus::pod_cell(model, p))
                .flatten()
        })
        .collect();
    let shown = Shown::at(
        width,
        pods.iter().any(|p| p.gpus > 0),
        figures.iter().any(Option::is_some),
    );
    let usage_w = shown.width();
    // NODE takes what NAME, READY, STATUS, RST, the usage and AGE leave.
    let node_w = width
        .saturating_sub(29 + 6 + 17 + 4 + 5 + usage_w)
        .clamp(8, 40);
    let name_w = if wide {
        28
    } else {
        width.saturating_sub(33 + usage_w).clamp(5, 30)
    };
    let attempt = app
        .selection
        .attempt(&model.jobs)
        .map(|a| a.name.clone())
        .unwrap_or_default();
    let mut lines = vec![Line::styled(
        format!(
            "{}{}{}{}{}{}",
            col("NAME", name_w + 1),
            col("READY", 6),
            col("STATUS", 17),
            col("RST", 4),
            shown.header(),
            if wide {
                format!("{}AGE", col("NODE", node_w))
            } else {
                "AGE".into()
            }
        ),
        theme.dim(),
    )];
    let body = rows.saturating_sub(1);
    let skip = (at + 1).saturating_sub(body);
    let mut shown_rows = 0;
    for (i, p) in pods.iter().enumerate().skip(skip) {
        if shown_rows >= body {
            break;
        }
        shown_rows += 1;
        let waiting = model.waits.of(&p.name);
        let status = waiting
            .and_then(|w| w.short())
            .map_or_else(|| p.status_word(), str::to_string);
        let ready = p.ready();
        let mut spans = vec![
            Span::raw(col(
                if wide {
                    &p.name
                } else {
                    super::widgets::short_name(&p.name, &attempt)
                },
                name_w,
            )),
            Span::raw(" "),
            Span::raw(col(ready, 6)),
            Span::styled(
                col(&one_line(&status), 17),
                theme.status(p.reason.as_deref().unwrap_or(&p.phase)),
            ),
            Span::raw(col(&p.restarts.to_string(), 4)),
        ];
        let usage = model.usage.of(&p.name);
        if shown.cpu {
            let cpu = usage.map_or_else(str::to_string, |u| cpu_text(u.cpu_millis));
            spans.push(Span::raw(col(&cpu, CPU_W)));
        }
        if shown.mem {
            let mem = usage.map_or_else(str::to_string, |u| memory_text(u.memory_bytes));
            spans.push(Span::raw(col(&mem, MEM_W)));
        }
        if shown.gpu {
            let cell = match &figures[i] {
                Some(figures) if shown.figures => figures.clone(),
                _ => p.gpus.to_string(),
            };
            spans.push(Span::raw(col(&cell, shown.gpu_width())));
        }
        if wide {
            spans.push(Span::styled(
                col(
                    short_node(p.node.as_deref().unwrap_or("<none>"), model.cluster.name()),
                    node_w,
                ),
                theme.dim(),
            ));
        }
        spans.push(Span::raw(col(&age(p.created, now), 5)));
        let is_selected = selected == Some(p.name.as_str());
        let detail = waiting.map(|w| w.detail(now));
        // A waiting pod's cause stands in its message's place; the selected one's has a line.
        if wide
            && !is_selected
            && let Some(message) = detail.as_ref().or(p.message.as_ref())
        {
            spans.push(Span::styled(format!(" {}", one_line(message)), theme.dim()));
        }
        let mut line = Line::from(spans);
        if is_selected && app.focus == Focus::Pods {
            line = line.style(theme.selected());
        }
        lines.push(super::widgets::truncate_line(line, width));
        if is_selected
            && let Some(w) = waiting
            && shown_rows < body
        {
            shown_rows += 1;
            let text = format!("  ↳ {} · {}", w.detail(now), w.hint());
            lines.push(super::widgets::truncate_line(
                Line::styled(one_line(&text), theme.busy()),
                width,
            ));
        } else if is_selected
            && !p.terminated
            && shown_rows < body
            && let Some(gpus) = super::gpus::pod_line(model, p)
        {
            shown_rows += 1;
            lines.push(super::widgets::truncate_line(
                Line::styled(format!("  ↳ {}", one_line(&gpus)), theme.dim()),
                width,
            ));
        }
    }
    if pods.is_empty() {
        lines.push(Line::styled("no pods", theme.dim()));
    }
    // The GPUs the attempt's live pods hold, in the title, where a GPU column may not fit.
    let gpus: u32 = pods.iter().filter(|p| !p.terminated).map(|p| p.gpus).sum();
    let title = Line::from(vec![
        Span::styled(format!(" Pods {attempt} "), theme.title()),
        Span::styled(format!("{} ", pods.len()), theme.dim()),
        Span::styled(
            if gpus > 0 {
                format!("· {gpus} GPU ")
            } else {
                String::new()
            },
            theme.dim(),
        ),
    ]);
    frame.render_widget(
        Paragraph::new(lines).block(pane(title, app.focus == Focus::Pods, theme)),
        area,
    );
}
