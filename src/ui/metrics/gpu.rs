//! A GPU series in the metrics pane: each pod's GPU utilisation (the mean of its GPUs) or their
//! memory used, over the seconds since the attempt started, a line per pod in its logs colour,
//! so the GPUs' activity reads beside the loss curve. Kept from this engine's readings alone:
//! the border says they are not in the saved logs.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{Curve, chart, extent, finite, scale};
use crate::engine::World;
use crate::k8s::status::AttemptSummary;
use crate::ui::theme::Theme;
use crate::ui::widgets::{fit, pane, short_name};

pub(super) fn draw(
    frame: &mut Frame,
    area: Rect,
    model: &World,
    attempt: &AttemptSummary,
    metric: &str,
    names: &[&str],
    theme: &Theme,
) {
    let start = attempt
        .start_time
        .or(attempt.created)
        .map_or(0.0, |t| t.as_second() as f64);
    let mut curves = Vec::new();
    let mut latest = None;
    for pod in model.jobs.pods_of(&attempt.name) {
        let Some(series) = model.gpus.series.get(&pod.name).and_then(|s| s.of(metric)) else {
            continue;
        };
        if latest.is_none() {
            latest = series.latest().map(|p| p.y);
        }
        let colour = model
            .logs
            .pods
            .iter()
            .position(|p| *p == pod.name)
            .unwrap_or(curves.len());
        curves.push(Curve {
            points: finite(series.points().map(|p| (p.x - start, p.y))),
            style: theme.pod(colour as u32),
            name: short_name(&pod.name, &attempt.name).to_string(),
        });
    }
    let at = names.iter().position(|n| *n == metric).unwrap_or(0) + 1;
    let mut title = vec![
        Span::styled(" Metrics ", theme.title()),
        Span::styled(metric.to_string(), theme.key()),
        Span::styled(format!(" {at}/{} ", names.len()), theme.dim()),
    ];
    if let Some(latest) = latest {
        title.push(Span::raw(format!("latest {} ", scale::value(latest))));
    }
    // Said where the chart is: these series are this Gantry's own, not the saved logs'.
    let room = usize::from(area.width.saturating_sub(4));
    let bottom = [
        " x: seconds since the attempt started · GPU series are not in the saved logs: a restart starts them afresh ",
        " x: s since the attempt started · not in the saved logs: a restart starts afresh ",
        " x: s since start · not in the saved logs ",
        " not in the saved logs ",
    ]
    .into_iter()
    .find(|words| words.chars().count() <= room)
    .unwrap_or_default();
    let bottom = Line::from(Span::styled(bottom, theme.dim()));
    let block = pane(Line::from(title), false, theme).title_bottom(bottom);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    match extent(&curves) {
        Some(extent) => chart(frame, inner, &curves, extent, theme),
        None => frame.render_widget(
            Paragraph::new(Line::styled(
                fit(
                    "No GPU readings of this attempt's pods yet.",
                    inner.width as usize,
                ),
                theme.dim(),
            )),
            inner,
        ),
    }
}
