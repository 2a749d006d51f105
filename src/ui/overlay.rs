//! Overlays drawn over the panes: the help (made from the keymap), confirmation dialogs, and
//! the plan.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

use super::theme::Theme;
use super::widgets::{pane, truncate_line};
use crate::app::confirm::{Answer, Confirm};
use crate::app::{App, PlanView};
use crate::engine::World;
use crate::gke::plan::{Action as PlanAction, How};
use crate::keys::Action;

fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let [row] = Layout::vertical([Constraint::Length(height.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [cell] = Layout::horizontal([Constraint::Length(width.min(area.width))])
        .flex(Flex::Center)
        .areas(row);
    cell
}

pub fn help(frame: &mut Frame, app: &App, theme: &Theme) {
    let rows = app.keymap.help_rows();
    let area = frame.area();
    let two_columns = area.width >= 76;
    let per_column = if two_columns {
        rows.len().div_ceil(2)
    } else {
        rows.len()
    };
    let height = (per_column as u16 + 2).min(area.height);
    let width = if two_columns {
        area.width.min(96)
    } else {
        area.width.min(60)
    };
    let rect = centered(area, width, height);
    frame.render_widget(Clear, rect);
    let title = Line::from(vec![
        Span::styled(" Keys ", theme.title()),
        Span::styled("Esc or ? closes ", theme.dim()),
    ]);
    let block = pane(title, true, theme);
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let columns: Vec<Rect> = if two_columns {
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
            .split(inner)
            .to_vec()
    } else {
        vec![inner]
    };
    for (n, column) in columns.iter().enumerate() {
        let lines: Vec<Line> = rows
            .iter()
            .skip(n * per_column)
            .take(per_column)
            .map(|(keys, what)| {
                Line::from(vec![
                    Span::styled(format!("{keys:>9} "), theme.key()),
                    Span::raw(*what),
                ])
            })
            .collect();
        frame.render_widget(Paragraph::new(lines), *column);
    }
}

pub fn confirm(frame: &mut Frame, dialog: &Confirm, theme: &Theme) {
    let area = frame.area();
    let height = dialog.lines.len() as u16 + 4;
    let rect = centered(area, area.width.min(72), height);
    frame.render_widget(Clear, rect);
    let block = pane(
        Line::styled(format!(" {} ", dialog.title), theme.bad()),
        true,
        theme,
    );
    let mut lines: Vec<Line> = dialog.lines.iter().map(|l| Line::raw(l.clone())).collect();
    lines.push(Line::raw(""));
    match &dialog.answer {
        Answer::YesNo => lines.push(Line::from(vec![
            Span::styled("y", theme.key()),
            Span::raw(" yes   "),
            Span::styled("any other key", theme.key()),
            Span::raw(" no"),
        ])),
        Answer::TypeName { typed, .. } => lines.push(Line::from(vec![
            Span::styled("> ", theme.key()),
            Span::raw(typed.clone()),
            Span::styled("█", theme.dim()),
        ])),
    }
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block),
        rect,
    );
}

/// The plan as it was when `P` opened it, scrolled; below it what `y` would do here.
pub fn plan(frame: &mut Frame, view: &PlanView, model: &World, app: &App, theme: &Theme) {
    let area = frame.area();
    let body = view.lines();
    let footer = plan_footer(view, model, app, theme);
    let width = area.width.min(100);
    let inner_width = width.saturating_sub(2) as usize;
    // The footer stays; the plan's lines scroll in the rows left.
    let rows = (area.height.saturating_sub(2) as usize)
        .saturating_sub(footer.len() + 1)
        .max(1);
    let top = view.scroll.min(body.len().saturating_sub(rows));
    let shown = body.len().min(rows);
    let height = (shown + footer.len() + 1 + 2) as u16;
    let rect = centered(area, width, height);
    frame.render_widget(Clear, rect);
    let mut title = vec![Span::styled(
        format!(" Plan for {} ", view.cluster),
        theme.title(),
    )];
    if body.len() > rows {
        title.push(Span::styled(
            format!(
                "lines {}–{} of {} (↑↓ scroll) ",
                top + 1,
                top + shown,
                body.len()
            ),
            theme.dim(),
        ));
    }
    let block = pane(Line::from(title), true, theme);
    let mut lines: Vec<Line> = body
        .iter()
        .skip(top)
        .take(rows)
        .map(|l| Line::raw(crate::sanitize::one_line(l)))
        .collect();
    lines.push(Line::raw(""));
    lines.extend(footer);
    let lines: Vec<Line> = lines
        .into_iter()
        .map(|l| truncate_line(l, inner_width))
        .collect();
    frame.render_widget(Paragraph::new(lines).block(block), rect);
}

/// What `y` does here: apply, or why it will not.
fn plan_footer<'a>(view: &PlanView, model: &World, app: &App, theme: &Theme) -> Vec<Line<'a>> {
    // `y` applies only where the last line says so; anywhere else every key closes.
    let close = |which: &'static str| vec![Span::styled(which, theme.key()), Span::raw(" closes")];
    let said = |text: String, style| {
        let mut spans = vec![Span::styled(text, style), Span::raw(" · ")];
        spans.extend(close("any key"));
        vec![Line::from(spans)]
    };
    if app.read_only() {
        return said("read-only: applying is refused".into(), theme.warning());
    }
    let and_watcher = view.watcher_to_install();
    match view.plan.action {
        PlanAction::None if and_watcher => {}
        PlanAction::None => return said("nothing to apply".into(), theme.dim()),
        PlanAction::Create => {
            let key = app.keymap.keys_for(Action::CreateCluster);
            return said(format!("no cluster yet: {key} creates it"), theme.dim());
        }
        PlanAction::Update => {}
    }
    if model.cluster.drift.generation() != view.generation {
        let key = app.keymap.keys_for(Action::Plan);
        return said(
            format!("the cluster changed since: not applicable; {key} shows the plan now"),
            theme.warning(),
        );
    }
    let mut lines = Vec::new();
    // A new pool in place of one (spot) or a new cluster: applying leaves these and says so.
    if view
        .plan
        .changes
        .iter()
        .any(|c| c.how == How::NewCluster || (c.how == How::NewPool && !c.current.is_null()))
    {
        lines.push(Line::styled(
            "What this cluster cannot take (a new cluster, a pool in place of one) is left as it is.",
            theme.dim(),
        ));
    }
    let does = match (view.plan.action, and_watcher) {
        (PlanAction::None, _) => " makes the watcher   ",
        (_, true) => " applies, then makes the watcher   ",
        (_, false) => " applies   ",
    };
    let mut spans = vec![Span::styled("y", theme.key()), Span::raw(does)];
    spans.extend(close("any other key"));
    lines.push(Line::from(spans));
    lines
}
