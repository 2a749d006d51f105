//! The events pane: the Job's and its pods' events, warnings first.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::theme::Theme;
use super::widgets::{age, col, pane};
use crate::app::{App, Focus};
use crate::engine::World;
use crate::sanitize::one_line;

pub fn draw(
    frame: &mut Frame,
    area: Rect,
    model: &World,
    app: &App,
    theme: &Theme,
    now: jiff::Timestamp,
) {
    let events = app.selection.events(&model.jobs);
    let width = area.width.saturating_sub(2) as usize;
    let rows = area.height.saturating_sub(2) as usize;
    let attempt = app
        .selection
        .attempt(&model.jobs)
        .map(|a| a.name.clone())
        .unwrap_or_default();
    let mut lines = Vec::new();
    for e in events.iter().take(rows) {
        let style = if e.type_ == "Warning" {
            theme.bad()
        } else {
            theme.dim()
        };
        let count = if e.count > 1 {
            format!(" ×{}", e.count)
        } else {
            String::new()
        };
        let line = Line::from(vec![
            Span::raw(col(&age(e.last_seen, now), 6)),
            Span::styled(col(&one_line(&e.reason), 21), style),
            Span::raw(col(
                &format!(
                    "{}/{}",
                    e.kind.to_lowercase(),
                    super::widgets::short_name(&e.object, &attempt)
                ),
                26,
            )),
            Span::raw(" "),
            Span::raw(format!("{}{count}", one_line(&e.message))),
        ]);
        lines.push(super::widgets::truncate_line(line, width));
    }
    if events.is_empty() {
        lines.push(Line::styled("no events", theme.dim()));
    }
    let warnings = events.iter().filter(|e| e.type_ == "Warning").count();
    let title = Line::from(vec![
        Span::styled(" Events ", theme.title()),
        if warnings > 0 {
            Span::styled(
                format!(
                    "{warnings} warning{} ",
                    if warnings == 1 { "" } else { "s" }
                ),
                theme.bad(),
            )
        } else {
            Span::raw("")
        },
    ]);
    frame.render_widget(
        Paragraph::new(lines).block(pane(title, app.focus == Focus::Events, theme)),
        area,
    );
}
