//! The pods pane: the current attempt's pods with phase, readiness, restarts, node, age, and
//! why when waiting or terminated.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::theme::Theme;
use super::widgets::{age, col, pane, short_node};
use crate::app::{App, Focus};
use crate::engine::Model;
use crate::sanitize::one_line;

pub fn draw(
    frame: &mut Frame,
    area: Rect,
    model: &Model,
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
    // NODE takes what NAME, READY, STATUS, RST and AGE leave.
    let node_w = width.saturating_sub(29 + 6 + 17 + 4 + 5).clamp(8, 40);
    let name_w = if wide {
        28
    } else {
        width.saturating_sub(33).clamp(6, 30)
    };
    let attempt = app
        .selection
        .attempt(&model.jobs)
        .map(|a| a.name.clone())
        .unwrap_or_default();
    let mut lines = vec![Line::styled(
        format!(
            "{}{}{}{}{}",
            col("NAME", name_w + 1),
            col("READY", 6),
            col("STATUS", 17),
            col("RST", 4),
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
    for p in pods.iter().skip(skip).take(body) {
        let status = p.status_word();
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
        if wide && let Some(message) = &p.message {
            spans.push(Span::styled(format!(" {}", one_line(message)), theme.dim()));
        }
        let mut line = Line::from(spans);
        if selected == Some(p.name.as_str()) && app.focus == Focus::Pods {
            line = line.style(theme.selected());
        }
        lines.push(super::widgets::truncate_line(line, width));
    }
    if pods.is_empty() {
        lines.push(Line::styled("no pods", theme.dim()));
    }
    let title = Line::from(vec![
        Span::styled(format!(" Pods {attempt} "), theme.title()),
        Span::styled(format!("{} ", pods.len()), theme.dim()),
    ]);
    frame.render_widget(
        Paragraph::new(lines).block(pane(title, app.focus == Focus::Pods, theme)),
        area,
    );
}
