//! Drawing: a pure function of `App`. A compact layout fits every pane in 80×24; from 120
//! columns and 40 rows the logs get a column of their own.

mod cluster;
mod events;
pub mod gpus;
mod jobs;
mod logs;
pub mod metrics;
mod node_usage;
mod overlay;
mod pods;
mod status;
pub mod theme;
pub mod widgets;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};

use crate::app::{App, Overlay};
use crate::engine::World;
use theme::Theme;

/// The rectangles of each pane for a screen size.
struct Areas {
    cluster: Rect,
    jobs: Rect,
    pods: Rect,
    /// Zero-sized while the metrics pane takes the logs' place.
    logs: Rect,
    metrics: Option<Rect>,
    events: Rect,
    status: Rect,
}

/// Where the metrics pane goes when shown: in the logs' place when they share the screen's
/// width with nothing (below 120 columns); beside them from 120 columns; in the two-column
/// layout above them, until their column is wide enough for two panes side by side.
fn with_metrics(logs: Rect, screen_width: u16, column: bool) -> (Rect, Rect) {
    if screen_width < 120 {
        return (Rect::default(), logs);
    }
    if column && logs.width < 100 {
        let [metrics, logs] =
            Layout::vertical([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(logs);
        return (logs, metrics);
    }
    let [logs, metrics] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(logs);
    (logs, metrics)
}

fn layout(area: Rect, metrics_shown: bool) -> Areas {
    let mut areas = base_layout(area);
    if metrics_shown {
        let roomy = area.width >= 120 && area.height >= 40;
        let (logs, metrics) = with_metrics(areas.logs, area.width, roomy);
        areas.logs = logs;
        areas.metrics = Some(metrics);
    }
    areas
}

fn base_layout(area: Rect) -> Areas {
    let [main, status] = Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(area);
    if area.width >= 120 && area.height >= 40 {
        let [cluster, body] =
            Layout::vertical([Constraint::Length(4), Constraint::Min(0)]).areas(main);
        let [left, logs] =
            Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)])
                .areas(body);
        let [jobs, pods, events] = Layout::vertical([
            Constraint::Length(8),
            Constraint::Min(6),
            Constraint::Length(12),
        ])
        .areas(left);
        return Areas {
            cluster,
            jobs,
            pods,
            logs,
            metrics: None,
            events,
            status,
        };
    }
    let events_rows = if area.height >= 30 { 6 } else { 4 };
    let lists_rows = if area.height >= 30 { 9 } else { 7 };
    let [cluster, lists, logs, events] = Layout::vertical([
        Constraint::Length(4),
        Constraint::Length(lists_rows),
        Constraint::Min(3),
        Constraint::Length(events_rows),
    ])
    .areas(main);
    let jobs_width = if area.width >= 100 { 46 } else { 34 };
    let [jobs, pods] =
        Layout::horizontal([Constraint::Length(jobs_width), Constraint::Min(0)]).areas(lists);
    Areas {
        cluster,
        jobs,
        pods,
        logs,
        metrics: None,
        events,
        status,
    }
}

/// Draws the whole screen. `now` is passed in so a frame is a pure function of its inputs.
pub fn draw(frame: &mut Frame, model: &World, app: &App, theme: &Theme, now: jiff::Timestamp) {
    let areas = layout(frame.area(), app.metrics.shown);
    cluster::draw(frame, areas.cluster, model, app, theme, now);
    jobs::draw(frame, areas.jobs, model, app, theme, now);
    pods::draw(frame, areas.pods, model, app, theme, now);
    if !areas.logs.is_empty() {
        logs::draw(frame, areas.logs, model, app, theme);
    }
    if let Some(area) = areas.metrics {
        metrics::draw(frame, area, model, app, theme);
    }
    events::draw(frame, areas.events, model, app, theme, now);
    status::draw(frame, areas.status, model, app, theme, now);
    match &app.overlay {
        Some(Overlay::Help) => overlay::help(frame, app, theme),
        Some(Overlay::Confirm(dialog)) => overlay::confirm(frame, dialog, theme),
        Some(Overlay::Plan(view)) => overlay::plan(frame, view, model, app, theme),
        None => {}
    }
    keep_inert(frame.buffer_mut());
}

/// The last word before a frame reaches a terminal: a cell holding anything a terminal would
/// act on (a control, a bidirectional override) shows U+FFFD instead. Panes clean the text
/// they draw (`sanitize::screen`); this guard makes it hold for every pane, present and future,
/// and for every viewer the frame is sent to.
fn keep_inert(buffer: &mut ratatui::buffer::Buffer) {
    for cell in buffer.content.iter_mut() {
        if !crate::sanitize::is_inert(cell.symbol()) {
            cell.set_symbol("\u{fffd}");
        }
    }
}

/// Rows the logs pane has for lines at a screen size (for paging).
pub fn log_rows(width: u16, height: u16, metrics_shown: bool) -> usize {
    layout(Rect::new(0, 0, width, height), metrics_shown)
        .logs
        .height
        .saturating_sub(2) as usize
}

/// The rows that hold the logs pane's lines when the pane spans the screen's whole width (rows
/// `top..bottom` a terminal can scroll as a band), if it does.
pub fn full_width_log_rows(width: u16, height: u16, metrics_shown: bool) -> Option<(u16, u16)> {
    let logs = layout(Rect::new(0, 0, width, height), metrics_shown).logs;
    (logs.x == 0 && logs.width == width && logs.height > 3).then(|| (logs.y + 1, logs.bottom() - 1))
}
