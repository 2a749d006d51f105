//! Small pieces every pane uses: bordered blocks, text and lines cut to width, pod names
//! without their attempt, ages.

use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders};
use unicode_width::UnicodeWidthStr;

use super::theme::Theme;

pub fn pane<'a>(title: Line<'a>, focused: bool, theme: &Theme) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .border_style(if focused {
            theme.focused_border()
        } else {
            theme.border()
        })
        .title(title)
}

/// Text cut to a display width, with an ellipsis when cut.
pub fn fit(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// Padded (or cut) to exactly `width` columns.
pub fn col(text: &str, width: usize) -> String {
    let cut = fit(text, width);
    let pad = width.saturating_sub(cut.width());
    format!("{cut}{}", " ".repeat(pad))
}

/// Age as kubectl prints it, from a timestamp.
pub fn age(since: Option<jiff::Timestamp>, now: jiff::Timestamp) -> String {
    match since {
        Some(t) => crate::k8s::age::human_duration((now - t).get_seconds()),
        None => "-".into(),
    }
}

pub fn duration(d: std::time::Duration) -> String {
    crate::k8s::age::human_duration(d.as_secs() as i64)
}

/// Cuts a line to width; the rest is not drawn (it would only wrap into the next pane).
pub fn truncate_line(line: Line<'_>, width: usize) -> Line<'_> {
    let mut left = width;
    let mut spans = Vec::new();
    for span in line.spans {
        if left == 0 {
            break;
        }
        let text = fit(&span.content, left);
        left = left.saturating_sub(unicode_width::UnicodeWidthStr::width(text.as_str()));
        spans.push(Span::styled(text, span.style));
    }
    Line::from(spans)
}

/// A pod's name without its attempt's prefix (the pane's title names the attempt).
pub fn short_name<'a>(pod: &'a str, attempt: &str) -> &'a str {
    match pod
        .strip_prefix(attempt)
        .and_then(|rest| rest.strip_prefix('-'))
    {
        Some(rest) if !rest.is_empty() && !attempt.is_empty() => rest,
        _ => pod,
    }
}

/// A GKE node's name without the `gke-<cluster>-` every node of the cluster starts with.
pub fn short_node<'a>(node: &'a str, cluster: &str) -> &'a str {
    node.strip_prefix("gke-")
        .and_then(|rest| rest.strip_prefix(cluster))
        .and_then(|rest| rest.strip_prefix('-'))
        .filter(|rest| !rest.is_empty())
        .unwrap_or(node)
}
