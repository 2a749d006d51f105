//! The Job pane: every attempt, its status, failures used of backoffLimit, start and duration.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::theme::Theme;
use super::widgets::{col, pane};
use crate::app::{App, Focus};
use crate::engine::World;
use crate::k8s::status::AttemptPhase;

/// An attempt as the pane names it: its Job name when there is room, else `#N`.
fn attempt_label(a: &crate::k8s::status::AttemptSummary, roomy: bool) -> String {
    match a.attempt {
        Some(n) if !roomy => format!("#{n}"),
        _ => a.name.clone(),
    }
}

pub fn draw(
    frame: &mut Frame,
    area: Rect,
    model: &World,
    app: &App,
    theme: &Theme,
    now: jiff::Timestamp,
) {
    let attempts = model.jobs.attempts();
    let current = app.selection.attempt(&model.jobs).map(|a| a.name.clone());
    let width = area.width.saturating_sub(2) as usize;
    let rows = area.height.saturating_sub(2) as usize;
    let backoff = app.config.job.backoff_limit;
    let mut lines: Vec<Line> = Vec::new();
    if attempts.is_empty() {
        let hint = if model.connected {
            format!(
                "No attempt yet: {} launches.",
                app.keymap.keys_for(crate::keys::Action::Launch)
            )
        } else {
            "Waiting for the cluster…".to_string()
        };
        lines.push(Line::styled(hint, theme.dim()));
    }
    // Narrow: `#N`, status, failures and, when it fits, the time it took; from 44 columns the
    // attempt's Job name.
    let roomy = width >= 44;
    // Under the header the column is failures of backoffLimit (`1/2`). Without the header
    // (narrow) `1/2` would read as kubectl's completions: failures are said in words, and
    // only when there are any.
    let headed = area.width >= 46;
    let ends: Vec<Vec<crate::vocabulary::ends::PodEnd>> =
        attempts.iter().map(|a| model.ends_of(a)).collect();
    // A preemption is not a failure: the Job absorbed it (`0/2⟳3`).
    let preempted: Vec<usize> = ends
        .iter()
        .map(crate::vocabulary::ends::preemptions)
        .collect();
    // Failures of backoffLimit (`1/2`) headed, in words (`1 fail`) narrow; `⟳3` after them.
    let fails_text = |failed: i32, preempted: usize| {
        let fails = match failed {
            _ if headed => format!("{failed}/{backoff}"),
            0 => String::new(),
            1 => "1 fail".to_string(),
            n => format!("{n} fails"),
        };
        match preempted {
            0 => fails,
            n => format!("{fails}⟳{n}"),
        }
    };
    let widest = attempts
        .iter()
        .zip(&preempted)
        .map(|(a, p)| fails_text(a.failed, *p).chars().count())
        .max()
        .unwrap_or(0);
    let fails_w = widest.max(if headed { 5 } else { 7 });
    let name_w = if roomy {
        width.saturating_sub(26).clamp(6, 40)
    } else {
        4
    };
    let mut rows_of: Vec<(bool, Line)> = Vec::new();
    for (i, a) in attempts.iter().enumerate() {
        let is_current = current.as_deref() == Some(a.name.as_str());
        let status = if a.deleting {
            "Deleting"
        } else {
            a.status.word()
        };
        let fails = fails_text(a.failed, preempted[i]);
        let took = match (a.start_time, a.completion_time) {
            (Some(s), Some(e)) => super::widgets::duration(std::time::Duration::from_secs(
                (e - s).get_seconds().max(0) as u64,
            )),
            (Some(s), None) => super::widgets::age(Some(s), now),
            _ => "-".into(),
        };
        let mut spans = vec![
            Span::raw(col(&attempt_label(a, roomy), name_w)),
            Span::raw(" "),
            Span::styled(col(status, 9), theme.status(status)),
            Span::raw(" "),
            Span::styled(
                col(&fails, fails_w),
                if a.failed as u32 > backoff {
                    theme.bad()
                } else {
                    theme.dim()
                },
            ),
        ];
        // Why it ended, when the status does not say it all (a success says it all): narrow,
        // it goes before the time it took.
        let reason = a
            .reason
            .as_ref()
            .filter(|_| a.status != AttemptPhase::Succeeded);
        let with_took = roomy || (reason.is_none() && width >= name_w + 12 + fails_w + 8);
        if with_took {
            spans.push(Span::raw(" "));
            spans.push(Span::raw(col(&took, 7)));
        }
        if let Some(reason) = reason
            && width >= name_w + if with_took { 21 } else { 12 } + fails_w + 8
        {
            spans.push(Span::styled(format!(" {reason}"), theme.status(reason)));
        }
        let mut line = Line::from(spans);
        if is_current && app.focus == Focus::Jobs {
            line = line.style(theme.selected());
        }
        rows_of.push((is_current, super::widgets::truncate_line(line, width)));
        if let Some(line) = progress_line(model, a, theme, width) {
            rows_of.push((is_current, line));
        } else if let Some(line) = waiting_line(model, a, theme, width) {
            rows_of.push((is_current, line));
        }
        if is_current && let Some(code) = &a.code {
            let text = super::widgets::fit(&format!("  code {}", code.said()), width);
            rows_of.push((true, Line::styled(text, theme.dim())));
        }
        if is_current {
            // Its newest ends in the rows left (earlier attempts stay in view), at least one.
            let room = rows.saturating_sub(rows_of.len()).clamp(1, MAX_END_LINES);
            for line in end_lines(&ends[i], room, theme, width) {
                rows_of.push((true, line));
            }
        }
    }
    // Keep the current attempt (with its progress) in view.
    let last = rows_of.iter().rposition(|(c, _)| *c).unwrap_or(0);
    let skip = (last + 1).saturating_sub(rows);
    lines.extend(rows_of.into_iter().skip(skip).take(rows).map(|(_, l)| l));
    let mut title = vec![Span::styled(
        format!(" Job {} ", app.config.job.name),
        theme.title(),
    )];
    // Attempts Gantry made by itself in the newest run (`↻2`), and who makes them when it is
    // another engine.
    let recoveries = attempts
        .last()
        .and_then(|a| a.run.as_ref())
        .map_or(0, |r| r.recoveries);
    if recoveries > 0 {
        title.push(Span::styled(format!("↻{recoveries} "), theme.busy()));
    }
    title.push(Span::styled(
        if headed { "status fails took " } else { "" },
        theme.dim(),
    ));
    if let Some(holder) = model.lease.holder().filter(|h| !h.mine) {
        let text = if holder.stamp.in_cluster {
            format!(
                "watched in the cluster by {}{} ",
                holder.identity,
                holder
                    .stamp
                    .version
                    .map(|v| format!(" ({v})"))
                    .unwrap_or_default()
            )
        } else {
            format!("recoverer {} ", holder.identity)
        };
        title.push(Span::styled(text, theme.dim()));
    }
    let title = Line::from(title);
    frame.render_widget(
        Paragraph::new(lines).block(pane(title, app.focus == Focus::Jobs, theme)),
        area,
    );
}

/// The most lines the selected attempt's pod ends take.
const MAX_END_LINES: usize = 3;

/// The selected attempt's pod ends, newest last, at most `room` lines: when there are more, the
/// first says how many of each class there were.
fn end_lines<'a>(
    ends: &[crate::vocabulary::ends::PodEnd],
    room: usize,
    theme: &Theme,
    width: usize,
) -> Vec<Line<'a>> {
    if room == 0 || ends.is_empty() {
        return Vec::new();
    }
    let mut lines = Vec::new();
    let shown = if ends.len() > room {
        let mut counts: Vec<(crate::vocabulary::ends::Class, usize)> = Vec::new();
        for e in ends {
            match counts.iter_mut().find(|(c, _)| *c == e.class) {
                Some((_, n)) => *n += 1,
                None => counts.push((e.class, 1)),
            }
        }
        let said: Vec<String> = counts.iter().map(|(c, n)| format!("{n} {c}")).collect();
        lines.push(Line::styled(
            super::widgets::fit(
                &format!("  {} ends: {}", ends.len(), said.join(", ")),
                width,
            ),
            theme.dim(),
        ));
        &ends[ends.len() - (room - 1)..]
    } else {
        ends
    };
    for e in shown {
        let ran = super::widgets::duration(std::time::Duration::from_secs(e.ran_seconds));
        let cost = e.cost.map(crate::pricing::format::usd).unwrap_or_default();
        let text = format!(
            "  {} {} ran {ran} {cost} {}",
            e.class,
            e.pod.rsplit('-').next().unwrap_or(&e.pod),
            crate::sanitize::one_line(&e.detail)
        );
        let style = if e.class.is_failure() {
            theme.bad()
        } else {
            theme.dim()
        };
        lines.push(Line::styled(super::widgets::fit(&text, width), style));
    }
    lines
}

/// While none of an attempt's pods runs: how many wait, and the most telling cause
/// (`1/2 waiting: no GPU node yet`), to fit the pane at 80 columns.
fn waiting_line<'a>(
    model: &World,
    a: &crate::k8s::status::AttemptSummary,
    theme: &Theme,
    width: usize,
) -> Option<Line<'a>> {
    if a.status.is_finished() {
        return None;
    }
    let pods = model.jobs.pods_of(&a.name);
    let waits: Vec<&crate::waiting::Waiting> = pods
        .iter()
        .filter_map(|p| model.waits.of(&p.name))
        .collect();
    let first = waits.iter().min_by_key(|w| w.cause.rank())?;
    let text = format!(
        "  {}/{} waiting: {}",
        waits.len(),
        pods.len(),
        first.phrase()
    );
    Some(super::widgets::truncate_line(
        Line::styled(text, theme.busy()),
        width,
    ))
}

/// An attempt's progress as its logs say (`epoch 2/3 · step 450/1,000 · 45% · ETA 3m20s`),
/// under its row, while there is any.
fn progress_line<'a>(
    model: &World,
    a: &crate::k8s::status::AttemptSummary,
    theme: &Theme,
    width: usize,
) -> Option<Line<'a>> {
    let shown = model.training.attempt(a.number())?.progress?;
    let counter = |word: &str, c: crate::metrics::Counter| {
        format!(
            "{word} {}/{}",
            super::metrics::scale::x_value(c.done),
            super::metrics::scale::x_value(c.total)
        )
    };
    // Without a count of epochs the counter, the share and the time left are the epoch's.
    let of_epoch = if shown.epoch.is_some() {
        " (epoch)"
    } else {
        ""
    };
    let eta = (!a.status.is_finished())
        .then_some(shown.remaining)
        .flatten()
        .map(|left| format!("ETA {}{of_epoch}", crate::metrics::eta::format_secs(left)));
    // A run that succeeded is done, whatever its last counter said (`epoch 3/3 done` reads
    // as the start of the third epoch).
    let fraction = match a.status {
        crate::k8s::status::AttemptPhase::Succeeded => Some(1.0),
        _ => shown.fraction,
    };
    let percent = fraction.map(|f| format!("{:.0}%", f * 100.0));
    let counters: Vec<String> = shown
        .epoch
        .map(|e| format!("epoch {}", super::metrics::scale::x_value(e)))
        .into_iter()
        .chain(
            [
                ("epoch", shown.progress.epoch),
                ("step", shown.progress.step),
            ]
            .into_iter()
            .filter_map(|(word, c)| Some(counter(word, c?))),
        )
        .collect();
    // The widest that fits: the percentage goes first, then the words before the counters.
    let full: Vec<String> = counters
        .iter()
        .cloned()
        .chain(percent.clone())
        .chain(eta.clone())
        .collect();
    let no_percent: Vec<String> = if counters.is_empty() {
        full.clone()
    } else {
        counters.iter().cloned().chain(eta.clone()).collect()
    };
    let bare: Vec<String> = no_percent
        .iter()
        .map(|p| {
            p.trim_start_matches("epoch ")
                .trim_start_matches("step ")
                .to_string()
        })
        .collect();
    let variants: Vec<String> = [full, no_percent, bare]
        .into_iter()
        .map(|parts| format!("  {}", parts.join(" · ")))
        .collect();
    let text = variants
        .iter()
        .find(|t| unicode_width::UnicodeWidthStr::width(t.as_str()) <= width)
        .or(variants.last())
        .cloned()
        .unwrap_or_default();
    if text.trim().is_empty() {
        return None;
    }
    Some(Line::styled(super::widgets::fit(&text, width), theme.dim()))
}
