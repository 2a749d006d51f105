//! Overlays drawn over the panes: the help (made from the keymap) and confirmation dialogs.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

use super::theme::Theme;
use super::widgets::pane;
use crate::app::App;
use crate::app::confirm::{Answer, Confirm};

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
