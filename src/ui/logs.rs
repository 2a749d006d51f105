//! The logs pane: the newest attempt's lines from the engine's store (every pod's merged, or
//! one pod's), or this viewer's own fetch. Only the lines in view are laid out, so a frame costs
//! the same with ten lines held or a hundred thousand.

use std::ops::Range;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr;

use super::theme::Theme;
use super::widgets::{fit, pane};
use crate::app::{App, Focus, LogCursor, Shown};
use crate::engine::World;
use crate::engine::world::Line as HeldLine;
use crate::engine::world::log_store::time_of_day;

pub fn draw(frame: &mut Frame, area: Rect, model: &World, app: &App, theme: &Theme) {
    let view = &app.logs;
    let shown = view.shown(model);
    let store = shown.store;
    let width = area.width.saturating_sub(2) as usize;
    let rows = area.height.saturating_sub(2) as usize;
    let lines = visible_lines(view, &shown, width, rows, theme);
    let mut title = vec![
        Span::styled(format!(" Logs {} ", view.label(model)), theme.title()),
        Span::styled(
            format!(
                "{} lines ",
                match shown.only {
                    Some(pod) => store.received_of.get(pod as usize).copied().unwrap_or(0),
                    None => store.received,
                }
            ),
            theme.dim(),
        ),
        if view.follow {
            Span::styled("follow ", theme.good())
        } else {
            Span::styled(format!("paused ↑{} ", shown.below()), theme.busy())
        },
    ];
    if view.wrap {
        title.push(Span::styled("wrap ", theme.dim()));
    }
    if let Some(q) = &view.search {
        title.push(Span::styled(format!("/{q} "), theme.highlight()));
    }
    if store.pods_stale.is_some() {
        title.push(Span::styled("⚠ pod list stale ", theme.busy()));
    }
    if let Some(dir) = &store.saved_to {
        let room =
            width.saturating_sub(title.iter().map(|s| s.content.width()).sum::<usize>() + 10);
        if room > 12 {
            title.push(Span::styled(format!("→ {} ", fit(dir, room)), theme.dim()));
        }
    }
    let block = pane(Line::from(title), app.focus == Focus::Logs, theme);
    frame.render_widget(Paragraph::new(lines).block(block), area);
    if let Some(typed) = &view.typing {
        let prompt = Rect {
            x: area.x + 1,
            y: area.y + area.height.saturating_sub(2),
            width: area.width.saturating_sub(2),
            height: 1,
        };
        let text = Line::from(vec![
            Span::styled("/", theme.key()),
            Span::raw(typed.clone()),
            Span::styled("█", theme.dim()),
        ]);
        frame.render_widget(ratatui::widgets::Clear, prompt);
        frame.render_widget(Paragraph::new(text), prompt);
    }
}

/// The lines that fill the pane, bottom-up from the line at the bottom of the view.
fn visible_lines<'a>(
    view: &LogCursor,
    shown: &Shown<'a>,
    width: usize,
    rows: usize,
    theme: &Theme,
) -> Vec<Line<'a>> {
    let store = shown.store;
    let Some(bottom) = shown.bottom else {
        let text = match &store.source {
            None => "No logs yet.",
            Some(_) => "Waiting for the first line…",
        };
        return vec![Line::styled(text, theme.dim())];
    };
    // Every pod's lines together carry each line's pod; one pod's lines need no tag (a Job of
    // one pod, the usual case, keeps its lines' full width, and a new line costs less to send).
    let merged = shown.only.is_none()
        && store.source.as_ref().is_some_and(|s| s.pod.is_none())
        && store.pods.len() > 1;
    let query = view
        .search
        .as_ref()
        .map(|q| q.to_lowercase())
        .filter(|q| !q.is_empty());
    let mut out: Vec<Line> = Vec::with_capacity(rows);
    for i in (0..=bottom).rev() {
        if out.len() >= rows {
            break;
        }
        if !shown.matches(i) {
            continue;
        }
        let Some(entry) = store.lines.get(i) else {
            continue;
        };
        let mut spans = prefix(view, shown, entry, merged, theme);
        let used: usize = spans.iter().map(|s| s.content.width()).sum();
        let room = width.saturating_sub(used).max(1);
        if view.wrap {
            let pieces = wrap(entry.text, room);
            let mut wrapped: Vec<Line> = Vec::new();
            for (n, piece) in pieces.into_iter().enumerate() {
                let mut line_spans = if n == 0 {
                    std::mem::take(&mut spans)
                } else {
                    vec![Span::raw(" ".repeat(used))]
                };
                line_spans.extend(content(&entry, piece, query.as_deref(), theme));
                wrapped.push(Line::from(line_spans));
            }
            for line in wrapped.into_iter().rev() {
                if out.len() < rows {
                    out.push(line);
                }
            }
        } else {
            if entry.text.width() > room {
                // The cut text is the line's beginning, then an ellipsis.
                let cut = fit(entry.text, room);
                let kept = cut
                    .len()
                    .saturating_sub('…'.len_utf8())
                    .min(entry.text.len());
                spans.extend(content(&entry, 0..kept, query.as_deref(), theme));
                spans.push(Span::raw("…"));
            } else {
                spans.extend(content(
                    &entry,
                    0..entry.text.len(),
                    query.as_deref(),
                    theme,
                ));
            }
            out.push(Line::from(spans));
        }
    }
    out.reverse();
    out
}

fn prefix<'a>(
    view: &LogCursor,
    shown: &Shown<'a>,
    entry: HeldLine<'a>,
    merged: bool,
    theme: &Theme,
) -> Vec<Span<'a>> {
    let store = shown.store;
    let mut spans = Vec::new();
    if view.timestamps {
        spans.push(Span::styled(
            format!(
                "{} ",
                entry
                    .ts
                    .and_then(time_of_day)
                    .as_deref()
                    .unwrap_or("--:--:--.---")
            ),
            theme.dim(),
        ));
    }
    if merged {
        let pod = store
            .pods
            .get(entry.pod as usize)
            .map(String::as_str)
            .unwrap_or("?");
        let attempt = store
            .source
            .as_ref()
            .map(|s| s.attempt.as_str())
            .unwrap_or("");
        let name = super::widgets::short_name(pod, attempt);
        spans.push(Span::styled(
            format!("[{}] ", short_pod(name)),
            theme.pod(entry.pod),
        ));
    }
    spans
}

/// A pod's name without the Job's prefix when it is long: `…-0-x7k2p`.
fn short_pod(pod: &str) -> String {
    if pod.len() <= 24 {
        return pod.to_string();
    }
    let tail: String = pod
        .chars()
        .rev()
        .take(14)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("…{tail}")
}

/// The byte ranges of `text` that fill rows of `width` columns in turn.
fn wrap(text: &str, width: usize) -> Vec<Range<usize>> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut used = 0;
    for (at, c) in text.char_indices() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > width && at > start {
            pieces.push(start..at);
            start = at;
            used = 0;
        }
        used += w;
    }
    pieces.push(start..text.len());
    pieces
}

/// `range` of a held line as spans: in the container's colours (as the theme lets them
/// through), with every case-insensitive match of the query highlighted over them.
fn content<'a>(
    entry: &HeldLine<'_>,
    range: Range<usize>,
    query: Option<&str>,
    theme: &Theme,
) -> Vec<Span<'a>> {
    let Some(text) = entry.text.get(range.clone()) else {
        return Vec::new();
    };
    let matches = matches(text, query);
    if entry.runs.is_empty() && matches.is_empty() {
        return vec![Span::raw(text.to_string())];
    }
    // Where the style may change: run starts and match ends, relative to `text`.
    let mut cuts: Vec<usize> = vec![0, text.len()];
    cuts.extend(
        entry
            .runs
            .iter()
            .map(|r| r.start as usize)
            .filter(|s| range.contains(s))
            .map(|s| s - range.start),
    );
    cuts.extend(matches.iter().flat_map(|m| [m.start, m.end]));
    cuts.sort_unstable();
    cuts.dedup();
    let mut spans = Vec::with_capacity(cuts.len());
    for pair in cuts.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let Some(piece) = text.get(a..b) else {
            continue;
        };
        let ink = entry
            .runs
            .iter()
            .take_while(|r| r.start as usize <= range.start + a)
            .last()
            .map_or(Style::new(), |r| theme.ink(r.ink));
        let lit = matches.iter().any(|m| m.start <= a && b <= m.end);
        let style = if lit {
            ink.patch(theme.highlight())
        } else {
            ink
        };
        spans.push(Span::styled(piece.to_string(), style));
    }
    spans
}

/// Every case-insensitive match of the query in `text`, as byte ranges.
fn matches(text: &str, query: Option<&str>) -> Vec<Range<usize>> {
    let Some(q) = query else {
        return Vec::new();
    };
    let lower = text.to_lowercase();
    // Lower-casing can change byte lengths (rare scripts): then nothing is highlighted.
    if lower.len() != text.len() {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(i) = lower[at..].find(q) {
        let start = at + i;
        let end = start + q.len();
        if !text.is_char_boundary(start) || !text.is_char_boundary(end) {
            break;
        }
        found.push(start..end);
        at = end;
    }
    found
}
