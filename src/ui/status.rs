//! The status bar: where Gantry works, READ-ONLY or GUARDED (and the guards), the last notice or
//! error, what an idle cluster costs (after the config's `idle-reminder`), and key hints.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::theme::Theme;
use super::widgets::fit;
use crate::app::App;
use crate::engine::World;
use crate::engine::policies::idle::{self, IdleSettings};
use crate::keys::Action;
use crate::sanitize::one_line;
use crate::vocabulary::Severity;

const HINTS: [(Action, &str); 7] = [
    (Action::CreateCluster, "create"),
    (Action::Plan, "plan"),
    (Action::Launch, "launch"),
    (Action::Retry, "retry"),
    (Action::Search, "search"),
    (Action::Help, "help"),
    (Action::Quit, "quit"),
];

pub fn draw(
    frame: &mut Frame,
    area: Rect,
    model: &World,
    app: &App,
    theme: &Theme,
    now: jiff::Timestamp,
) {
    let width = area.width as usize;
    let mut spans = Vec::new();
    if app.read_only() {
        spans.push(Span::styled(" READ-ONLY ", theme.badge()));
        spans.push(Span::raw(" "));
    } else if app.config.guards.armed().is_some() {
        // Guards that may end a run or scale the pools: said while they are armed.
        spans.push(Span::styled(" GUARDED ", theme.badge()));
        spans.push(Span::raw(" "));
    }
    let reminder = idle::decide(model, &IdleSettings::of(&app.config, app.read_only()), now)
        .reminder()
        .map(|text| Span::styled(text, theme.busy()));
    // What an idle cluster costs matters more than news of how it came to be there.
    let notice = app
        .notice
        .as_ref()
        .filter(|n| n.severity != Severity::Info || reminder.is_none());
    let message = match (model.trouble(), notice) {
        (Some(t), _) => Some(Span::styled(
            match model.troubles.len() {
                1 => format!("⚠ {}", one_line(t)),
                n => format!("⚠ {} (+{} more)", one_line(t), n - 1),
            },
            theme.busy(),
        )),
        (None, Some(n)) => Some(Span::styled(
            one_line(&n.text),
            match n.severity {
                Severity::Info => theme.good(),
                Severity::Warning => theme.busy(),
                Severity::Critical => theme.bad(),
            },
        )),
        (None, None) => reminder,
    };
    let hints: Vec<Span> = HINTS
        .iter()
        .filter(|(a, _)| !(app.read_only() && a.mutates()))
        .filter(|(a, _)| model.cluster.managed() || !matches!(a, Action::CreateCluster))
        // The plan's key is worth the room only while there is something to see in it.
        .filter(|(a, _)| *a != Action::Plan || model.cluster.drifted().is_some())
        .flat_map(|(a, label)| {
            [
                Span::styled(app.keymap.keys_for(*a), theme.key()),
                Span::styled(format!(" {label}  "), theme.dim()),
            ]
        })
        .collect();
    let hints_width: usize = hints
        .iter()
        .map(|s| unicode_width::UnicodeWidthStr::width(s.content.as_ref()))
        .sum();
    let used: usize = spans
        .iter()
        .map(|s| unicode_width::UnicodeWidthStr::width(s.content.as_ref()))
        .sum();
    match message {
        Some(m) => {
            // The message comes first; hints take what room is left.
            let room = width.saturating_sub(used + 1);
            let text = fit(&m.content, room);
            let left =
                room.saturating_sub(unicode_width::UnicodeWidthStr::width(text.as_str()) + 2);
            spans.push(Span::styled(text, m.style));
            if left >= hints_width {
                spans.push(Span::raw("  "));
                spans.extend(hints);
            }
        }
        None => {
            let mut context = model.target().map(|t| t.place.clone()).unwrap_or_default();
            if let Some(armed) = app.config.guards.armed() {
                context = format!("{context} · guards: {armed}");
            }
            spans.push(Span::styled(
                fit(&context, width.saturating_sub(used + hints_width + 2)),
                theme.dim(),
            ));
            spans.push(Span::raw("  "));
            spans.extend(hints);
        }
    }
    frame.render_widget(
        Paragraph::new(super::widgets::truncate_line(Line::from(spans), width)),
        area,
    );
}
