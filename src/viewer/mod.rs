//! One viewer's loop, wherever its screen is: the local terminal (`tui`) or an SSH client
//! (`serve`). It feeds keys and model changes to the viewer's own `App`, hands the commands that
//! passed the App's gate to the engine, and draws — a key's answer in the next frame, at once;
//! frames that only new lines caused at most `max_fps` a second; nothing while nothing changed
//! but the ages' tick.

mod ansi;
mod memory;
pub mod output;
mod pacing;
pub mod screen;
mod scroll;
mod wide;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crossterm::event::KeyEvent;
use futures::{Stream, StreamExt};
use ratatui::layout::Rect;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub use ansi::WHOLE_REGION;
pub use pacing::{Flow, Pacing, default_max_fps, local_terminal_is_remote};
pub use screen::Screen;

use crate::app::App;
use crate::engine::{Command, EngineHandle, Fetch};
use crate::ui;
use crate::ui::theme::Theme;

/// Lines of the viewer's own fetch taken before a frame is considered.
const FETCHED_PER_TURN: usize = 4096;

/// What reaches a viewer from its screen.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    Key(KeyEvent),
    /// The screen is now this size (columns, rows).
    Resize(u16, u16),
    /// Something for the viewer's status line (its terminal is larger than what is drawn).
    Notice(String),
    /// From now on this viewer changes nothing, and why (its key left the operators).
    Restrict(String),
}

/// How frames reach the screen when it cannot always take them (an SSH client): `lost` says a
/// frame was dropped, so the next is drawn whole; `caught_up` says the screen can take one now.
#[derive(Clone, Default)]
pub struct Delivery {
    pub lost: Arc<AtomicBool>,
    pub caught_up: Arc<Notify>,
}

/// What a viewer is, apart from its App and its screen.
pub struct Viewer {
    pub engine: EngineHandle,
    pub theme: Theme,
    pub pacing: Pacing,
    /// Set by whatever ends the viewer from outside (a signal, the client leaving).
    pub stop: CancellationToken,
    pub delivery: Delivery,
}

/// Hands the viewer's commands to the engine through its App's gate; a fetch of its own is kept
/// here while it lasts.
fn send(viewer: &Viewer, app: &mut App, fetch: &mut Option<Fetch>, commands: Vec<Command>) {
    for command in commands {
        let Some(approved) = app.pass(command) else {
            continue;
        };
        if matches!(approved.command(), Command::FetchLogs { .. }) {
            *fetch = Some(viewer.engine.fetch(approved));
        } else {
            viewer.engine.run(approved);
        }
    }
}

/// Runs the viewer until it quits (its App says so), its input ends, or `stop` is cancelled.
/// `size` is the screen's size to begin with.
pub async fn run<W: std::io::Write>(
    screen: &mut Screen<W>,
    mut app: App,
    viewer: Viewer,
    mut input: impl Stream<Item = Input> + Unpin,
    size: Rect,
) -> std::io::Result<()> {
    let engine = &viewer.engine;
    let mut changed = engine.changed();
    // Every layout shows usage (the cluster pane's nodes, the pods pane's columns).
    let _usage = engine.show_usage();
    let mut fetch: Option<Fetch> = None;
    let mut trimmer = memory::Trimmer::new();
    let mut size = size;
    // The size the screen was last made at: a storm of resizes costs one resize a frame.
    let mut screen_size = size;
    let mut last_frame = Instant::now() - Duration::from_secs(1);
    let mut last_tick = Instant::now();
    // A key (or a resize) is answered in the next frame, whatever the pacing.
    let mut urgent = true;
    app.dirty = true;
    // For `GANTRY_LOG=gantry::frames=debug`: how long a key, and the model's news, waited for
    // the frame that showed them.
    let mut key_at: Option<Instant> = None;
    let mut news_at: Option<Instant> = None;
    let mut flow = Flow::default();
    loop {
        let due = viewer.pacing.next_frame(last_frame, urgent, &flow);
        if app.dirty && Instant::now() >= due && size.width > 0 && size.height > 0 {
            if screen_size != size {
                screen.resize(size)?;
                screen_size = size;
            }
            if viewer.delivery.lost.swap(false, Ordering::AcqRel) {
                screen.redraw_whole();
            }
            app.log_rows = ui::log_rows(size.width, size.height, app.metrics.shown);
            let band = ui::full_width_log_rows(size.width, size.height, app.metrics.shown);
            let now = jiff::Timestamp::now();
            if !urgent {
                // Lines waited when they came before this frame's turn.
                flow.after_frame(news_at.is_some_and(|at| at < due));
            }
            {
                // Drawn while the model is read; written once it is let go, so the engine
                // never waits for a terminal that does not read.
                let encoded = {
                    let model = engine.model();
                    screen.render(band, |frame| {
                        ui::draw(frame, &model, &app, &viewer.theme, now);
                    })?
                };
                let written = screen.write(encoded)?;
                let flushed = Instant::now();
                // Taken whether or not the debug line is written: a field of a disabled event
                // is never evaluated, and the next frame must not see this one's news.
                let (key, news) = (key_at.take(), news_at.take());
                tracing::debug!(
                    target: "gantry::frames",
                    bytes = written.bytes,
                    scrolled = written.scrolled,
                    key_to_frame_us = key.map(|t| (flushed - t).as_micros() as u64),
                    news_to_frame_us = news.map(|t| (flushed - t).as_micros() as u64),
                    "frame"
                );
            }
            app.dirty = false;
            urgent = false;
            last_frame = Instant::now();
            last_tick = last_frame;
            trimmer.after_frame();
        }
        // Ages and elapsed counters move by themselves: redraw each second while an operation
        // runs, else twice a minute; nothing else redraws an idle screen.
        let tick = if engine.model().ticking() {
            Duration::from_secs(1)
        } else {
            Duration::from_secs(30)
        };
        let next_frame = viewer.pacing.next_frame(last_frame, urgent, &flow);
        let mut commands = Vec::new();
        tokio::select! {
            _ = viewer.stop.cancelled() => break,
            input = input.next() => match input {
                Some(Input::Key(k)) => {
                    let arrived = Instant::now();
                    // Answered at once if it changed anything; a key bound to nothing draws
                    // nothing (and leaves the pace of news as it was).
                    let pending = std::mem::replace(&mut app.dirty, false);
                    commands.extend(app.on_key(k, &engine.model()));
                    if app.dirty {
                        urgent = true;
                        key_at.get_or_insert(arrived);
                    }
                    app.dirty |= pending;
                }
                Some(Input::Resize(width, height)) => {
                    // Drawn at the pace of frames: the first resize after a quiet spell at
                    // once, a storm of them once a frame.
                    size = Rect::new(0, 0, width, height);
                    app.dirty = true;
                }
                Some(Input::Notice(text)) => {
                    app.notify(crate::vocabulary::Severity::Warning, text);
                    urgent = true;
                }
                Some(Input::Restrict(why)) => {
                    app.restrict(&why);
                    urgent = true;
                }
                None => break,
            },
            news = changed.changed() => {
                if news.is_err() {
                    break;
                }
                app.on_model(&engine.model(), &engine.told());
                if !app.bells.pending.is_empty() {
                    screen.ring(&std::mem::take(&mut app.bells.pending))?;
                }
                if app.dirty {
                    news_at.get_or_insert_with(Instant::now);
                }
            }
            fetched = async { fetch.as_mut()?.lines.recv().await }, if fetch.is_some() => {
                match fetched {
                    Some((generation, event)) => {
                        app.on_fetched(generation, event);
                        for _ in 0..FETCHED_PER_TURN {
                            match fetch.as_mut().map(|f| f.lines.try_recv()) {
                                Some(Ok((g, e))) => app.on_fetched(g, e),
                                _ => break,
                            }
                        }
                        // What the viewer asked to read is an answer to its key.
                        urgent = true;
                    }
                    // The fetch is over (the pods' logs were read to their end).
                    None => fetch = None,
                }
            }
            _ = viewer.delivery.caught_up.notified() => {
                if viewer.delivery.lost.load(Ordering::Acquire) {
                    app.dirty = true;
                    urgent = true;
                }
            }
            _ = tokio::time::sleep_until(next_frame), if app.dirty => {}
            _ = tokio::time::sleep_until(last_tick + tick) => {
                app.dirty = true;
                last_tick = Instant::now();
            }
        }
        send(&viewer, &mut app, &mut fetch, commands);
        // Looking away from its own fetch stops it.
        if app.logs.fetched.is_none() {
            fetch = None;
        }
        if app.should_quit {
            break;
        }
    }
    Ok(())
}
