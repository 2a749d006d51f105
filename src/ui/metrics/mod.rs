//! The metrics pane: a braille line chart of one training metric of the attempt shown, a line
//! per rank in its logs colour (or, past [`RANKS_KEPT`] ranks or once the store let their
//! series go, the lowest, mean and highest across ranks), the previous attempt dimmed behind,
//! and the latest and best values in the border. Drawn from the store's bounded series, so a
//! frame costs the same after a million points as after ten.

mod gpu;
pub mod scale;

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, LegendPosition, Paragraph};

use super::theme::Theme;
use super::widgets::{fit, pane, short_name};
use crate::app::App;
use crate::engine::World;
use crate::engine::world::training::RANKS_KEPT;
use crate::metrics::series::Series;
use crate::metrics::store::Store;

/// One curve to draw.
struct Curve {
    points: Vec<(f64, f64)>,
    style: Style,
    name: String,
}

pub fn draw(frame: &mut Frame, area: Rect, model: &World, app: &App, theme: &Theme) {
    let store = &model.training.store;
    let Some(attempt) = app.selection.attempt(&model.jobs) else {
        return message(frame, area, theme, "No attempt yet.", None);
    };
    let number = attempt.number();
    let names = crate::app::metric_names(model, attempt);
    let Some(metric) = app.metrics.metric(&names) else {
        return message(
            frame,
            area,
            theme,
            &format!("No training metrics in the logs of {} yet.", attempt.name),
            Some(
                "Read from JSON lines, Hugging Face dicts, tqdm, Lightning and Keras bars, key=value.",
            ),
        );
    };
    if crate::engine::world::gpus::SERIES.contains(&metric) {
        return gpu::draw(frame, area, model, attempt, metric, &names, theme);
    }
    let mut curves = Vec::new();
    if let Some(previous) = model.training.previous(number)
        && let Some(points) = aggregate(store, previous, metric)
    {
        curves.push(Curve {
            points,
            style: theme.dim(),
            name: format!("#{previous}"),
        });
    }
    let previous_drawn = !curves.is_empty();
    let ranks = ranks(model, store, number, metric, theme, &attempt.name);
    let drawn_ranks = ranks.len();
    match ranks {
        ranks if !ranks.is_empty() => curves.extend(ranks),
        _ => curves.extend(band(store, number, metric, theme)),
    }
    if app.metrics.smooth {
        for c in &mut curves {
            scale::smooth(&mut c.points);
        }
    }
    let extent = extent(&curves);
    let short = area.height < SHORT + 2;
    let range = extent.filter(|_| short).map(|e| (e.x0, e.x1));
    let title = title(store, number, metric, &names, theme);
    let ranks = store.ranks(number);
    let bottom = bottom(model, number, previous_drawn, range, theme);
    let mut bottom = bottom;
    if ranks > 1 {
        let how = if drawn_ranks > 0 {
            ""
        } else {
            ": min, mean, max"
        };
        bottom.push_span(Span::styled(format!("· {ranks} ranks{how} "), theme.dim()));
    }
    if app.metrics.smooth {
        bottom.push_span(Span::styled("· smoothed ", theme.dim()));
    }
    let block = pane(title, false, theme).title_bottom(bottom);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    match extent {
        Some(extent) => chart(frame, inner, &curves, extent, theme),
        None => frame.render_widget(
            Paragraph::new(Line::styled(
                fit("No finite values of this metric yet.", inner.width as usize),
                theme.dim(),
            )),
            inner,
        ),
    }
}

/// Charts with fewer rows than this give every row to the curve: the x range goes in the
/// border instead of under the chart.
const SHORT: u16 = 8;

#[derive(Debug, Clone, Copy)]
struct Extent {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

fn extent(curves: &[Curve]) -> Option<Extent> {
    let mut e = Extent {
        x0: f64::MAX,
        x1: f64::MIN,
        y0: f64::MAX,
        y1: f64::MIN,
    };
    for (x, y) in curves.iter().flat_map(|c| c.points.iter()) {
        e.x0 = e.x0.min(*x);
        e.x1 = e.x1.max(*x);
        e.y0 = e.y0.min(*y);
        e.y1 = e.y1.max(*y);
    }
    if e.x0 > e.x1 {
        return None;
    }
    if e.x1 <= e.x0 {
        e.x1 = e.x0 + 1.0;
    }
    Some(e)
}

/// The border's title: the metric and its place in the list, latest and best values.
fn title<'a>(store: &Store, number: u32, metric: &str, names: &[&str], theme: &Theme) -> Line<'a> {
    let at = names.iter().position(|n| *n == metric).unwrap_or(0) + 1;
    let mut spans = vec![
        Span::styled(" Metrics ", theme.title()),
        Span::styled(crate::sanitize::one_line(metric), theme.key()),
        Span::styled(format!(" {at}/{} ", names.len()), theme.dim()),
    ];
    if let Some(summary) = summary(store, number, metric) {
        spans.push(Span::raw(format!("latest {} ", scale::value(summary.0))));
        if let Some((best, x)) = summary.1 {
            spans.push(Span::styled(
                format!("best {} @ {} ", scale::value(best), scale::x_value(x)),
                theme.good(),
            ));
        }
    }
    Line::from(spans)
}

/// Latest value (the first rank's, or the mean's) and the best one across ranks with its x,
/// for metrics where lower or higher is better.
fn summary(store: &Store, number: u32, metric: &str) -> Option<(f64, Option<(f64, f64)>)> {
    let mut latest = None;
    let mut best: Option<(f64, f64)> = None;
    let lower = lower_is_better(metric);
    for pod in store.pods(number) {
        if latest.is_none() {
            latest = store.latest(number, pod, metric);
        }
        if let Some(s) = store.series(number, pod, metric).map(Series::summary) {
            let candidate = if lower { s.min } else { s.max };
            if let Some(p) = candidate
                && best.is_none_or(|(b, _)| if lower { p.y < b } else { p.y > b })
            {
                best = Some((p.y, p.x));
            }
        }
    }
    if latest.is_none() {
        let band = store.band(number, metric)?;
        latest = band.mean().summary().latest.map(|p| p.y);
    }
    let ranked = lower || higher_is_better(metric);
    Some((latest?, best.filter(|_| ranked)))
}

fn lower_is_better(metric: &str) -> bool {
    let m = metric.to_ascii_lowercase();
    [
        "loss",
        "err",
        "perplexity",
        "ppl",
        "wer",
        "cer",
        "mse",
        "mae",
        "rmse",
    ]
    .iter()
    .any(|w| m.contains(w))
}

fn higher_is_better(metric: &str) -> bool {
    let m = metric.to_ascii_lowercase();
    [
        "acc",
        "f1",
        "precision",
        "recall",
        "auc",
        "bleu",
        "rouge",
        "map",
        "iou",
        "score",
    ]
    .iter()
    .any(|w| m.contains(w))
}

/// Each rank's curve, in its logs colour, while there are few enough and their series kept.
fn ranks(
    model: &World,
    store: &Store,
    number: u32,
    metric: &str,
    theme: &Theme,
    attempt: &str,
) -> Vec<Curve> {
    let pods: Vec<&str> = store.pods(number).collect();
    if store.ranks(number).max(pods.len()) > RANKS_KEPT {
        return Vec::new();
    }
    let mut curves = Vec::new();
    for pod in pods {
        let Some(series) = store.series(number, pod, metric) else {
            return Vec::new();
        };
        let colour = model
            .logs
            .pods
            .iter()
            .position(|p| p == pod)
            .unwrap_or(curves.len());
        curves.push(Curve {
            points: finite(series.points().map(|p| (p.x, p.y))),
            style: theme.pod(colour as u32),
            name: short_name(pod, attempt).to_string(),
        });
    }
    curves
}

/// Lowest, mean and highest across ranks: the mean bright, the edges dim.
fn band(store: &Store, number: u32, metric: &str, theme: &Theme) -> Vec<Curve> {
    let Some(band) = store.band(number, metric) else {
        return Vec::new();
    };
    let pending: Vec<_> = band.pending().collect();
    let edge = |s: &Series, pick: fn(&crate::metrics::band::BandPoint) -> f64| {
        finite(
            s.points()
                .map(|p| (p.x, p.y))
                .chain(pending.iter().map(|b| (b.x, pick(b)))),
        )
    };
    vec![
        Curve {
            points: edge(band.lower(), |b| b.min),
            style: theme.dim(),
            name: "min".into(),
        },
        Curve {
            points: edge(band.upper(), |b| b.max),
            style: theme.dim(),
            name: "max".into(),
        },
        Curve {
            points: edge(band.mean(), |b| b.mean),
            style: theme.pod(0),
            name: "mean".into(),
        },
    ]
}

/// An attempt's curve as one line: the mean across its ranks.
fn aggregate(store: &Store, number: u32, metric: &str) -> Option<Vec<(f64, f64)>> {
    let band = store.band(number, metric)?;
    let points = finite(
        band.mean()
            .points()
            .map(|p| (p.x, p.y))
            .chain(band.pending().map(|b| (b.x, b.mean))),
    );
    (!points.is_empty()).then_some(points)
}

fn finite(points: impl Iterator<Item = (f64, f64)>) -> Vec<(f64, f64)> {
    points
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect()
}

/// The border's bottom: what the x axis counts and what is dimmed behind.
fn bottom<'a>(
    model: &World,
    number: u32,
    previous: bool,
    range: Option<(f64, f64)>,
    theme: &Theme,
) -> Line<'a> {
    let axis = model
        .training
        .attempt(number)
        .map(|a| a.axis.name())
        .unwrap_or("step");
    let text = match range {
        Some((x0, x1)) => format!(" {axis} {} … {} ", scale::x_value(x0), scale::x_value(x1)),
        None => format!(" x: {axis} "),
    };
    let mut spans = vec![Span::styled(text, theme.dim())];
    if previous && let Some(p) = model.training.previous(number) {
        spans.push(Span::styled(format!("· #{p} dimmed behind "), theme.dim()));
    }
    Line::from(spans)
}

fn chart(frame: &mut Frame, area: Rect, curves: &[Curve], e: Extent, theme: &Theme) {
    let y_ticks = scale::ticks(e.y0, e.y1, (area.height as usize / 3).min(6));
    let y_labels: Vec<Span> = y_ticks
        .iter()
        .map(|v| Span::raw(scale::value(*v)))
        .collect();
    let y_bounds = [
        y_ticks.first().copied().unwrap_or(e.y0),
        y_ticks.last().copied().unwrap_or(e.y1),
    ];
    let datasets: Vec<Dataset> = curves
        .iter()
        .map(|c| {
            let dataset = Dataset::default();
            let dataset = if curves.len() > 1 {
                dataset.name(c.name.clone())
            } else {
                dataset
            };
            dataset
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(c.style)
                .data(&c.points)
        })
        .collect();
    let mut x_axis = Axis::default().bounds([e.x0, e.x1]).style(theme.dim());
    if area.height >= SHORT {
        x_axis = x_axis.labels(vec![
            Span::raw(scale::x_value(e.x0)),
            Span::raw(scale::x_value(e.x1)),
        ]);
    }
    let chart = Chart::new(datasets)
        .x_axis(x_axis)
        .y_axis(
            Axis::default()
                .bounds(y_bounds)
                .labels(y_labels)
                .style(theme.dim()),
        )
        .legend_position(Some(LegendPosition::TopRight))
        .hidden_legend_constraints((Constraint::Ratio(1, 3), Constraint::Ratio(1, 2)));
    frame.render_widget(chart, area);
}

fn message(frame: &mut Frame, area: Rect, theme: &Theme, text: &str, hint: Option<&str>) {
    let width = area.width.saturating_sub(2) as usize;
    let mut lines = vec![Line::styled(fit(text, width), theme.dim())];
    if let Some(hint) = hint {
        lines.push(Line::styled(fit(hint, width), theme.dim()));
    }
    let title = Line::from(Span::styled(" Metrics ", theme.title()));
    frame.render_widget(Paragraph::new(lines).block(pane(title, false, theme)), area);
}
