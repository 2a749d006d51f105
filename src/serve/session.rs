//! One SSH client's TUI: its own App (its own selection, scroll, search and confirmations) over
//! the engine's one model, drawn at the client's size through its own frame queue, its keys
//! parsed from the bytes it sends. The same `viewer::run` as the local terminal, behind a gate
//! that names the client's key, so the same one gate decides what it may change.
//!
//! A session that panics ends alone: the panic is caught here, logged with the key's
//! fingerprint, the client gets its terminal back (alternate screen left, scroll region and
//! cursor restored) and exit status 1; the server and every other viewer carry on.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use futures::{FutureExt, Stream};
use ratatui::layout::Rect;
use russh::keys::PublicKey;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::input::{ESC_WAIT, Keys};
use super::key_files::{Standing, fingerprint};
use super::size::{Size, too_large};
use super::{Shared, ViewerSlot};
use crate::app::App;
use crate::engine::{Gate, Principal};
use crate::ui::theme::Theme;
use crate::viewer::output::{self, FrameWriter};
use crate::viewer::{self, Delivery, Input, Screen, Viewer};

/// What a session starts with.
pub struct Start {
    pub key: PublicKey,
    pub principal: Principal,
    pub standing: Standing,
    /// The client's screen size, newest only.
    pub size: watch::Receiver<Size>,
    pub no_color: bool,
    pub term: String,
    pub stop: CancellationToken,
    pub slot: ViewerSlot,
}

/// Runs the TUI for one client until it quits, leaves, its key is taken out, or the server
/// stops; its exit status (1 after a panic). Ends with the alternate screen left and the cursor
/// shown again, delivered before the channel closes.
pub async fn run(
    shared: Arc<Shared>,
    start: Start,
    channel: impl tokio::io::AsyncWrite + Send + Unpin + 'static,
    from_client: mpsc::Receiver<Vec<u8>>,
) -> u32 {
    let delivery = Delivery::default();
    let (mut writer, stats, task) = output::start(channel, delivery.clone());
    let size = *start.size.borrow();
    let area = Rect::new(0, 0, size.cols, size.rows);
    // The client's terminal is set up here: there is no tty on this side to ask.
    let _ = crossterm::execute!(
        writer,
        crossterm::terminal::EnterAlternateScreen,
        crossterm::cursor::Hide
    );
    let Ok(mut screen) = Screen::new(writer, area) else {
        return 1;
    };
    let read_only = shared.read_only || start.standing == Standing::Viewer;
    let gate = Gate::new(start.principal.clone(), read_only);
    let mut app = App::with_gate(shared.config.clone(), shared.keymap.clone(), gate);
    if let Some(told) = too_large(&size) {
        app.notify(crate::vocabulary::Severity::Warning, told);
    }
    let theme = if start.no_color || start.term == "dumb" {
        Theme::plain()
    } else {
        Theme::colored()
    };
    let viewer = Viewer {
        engine: shared.engine.clone(),
        theme,
        pacing: shared.pacing,
        stop: start.stop.clone(),
        delivery,
    };
    let ended_why = Arc::new(std::sync::OnceLock::new());
    let input = input(
        shared.clone(),
        ended_why.clone(),
        &start,
        from_client,
        start.size.clone(),
    );
    let print = fingerprint(&start.key);
    let ran = std::panic::AssertUnwindSafe(viewer::run(&mut screen, app, viewer, input, area))
        .catch_unwind()
        .await;
    let status = match ran {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            tracing::info!(who = %start.principal, key = %print, error = %e, "viewer ended");
            0
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            tracing::error!(who = %start.principal, key = %print, "a session panicked and ended alone: {what}");
            // What the terminal shows is not known: the last frame may be half written.
            screen.redraw_whole();
            1
        }
    };
    // The scroll region whole, the style plain, the cursor shown; then the client's own screen.
    screen.writer_mut().closing();
    let _ = screen.finish();
    let writer: &mut FrameWriter = screen.writer_mut();
    let _ = crossterm::queue!(writer, crossterm::terminal::LeaveAlternateScreen);
    let last_words = match (status, ended_why.get()) {
        (0, None) => None,
        (0, Some(why)) => Some(*why),
        _ => Some("this session failed and ended; the server carries on (reconnect to watch)"),
    };
    if let Some(words) = last_words {
        let _ = std::io::Write::write_all(writer, format!("gantry serve: {words}\r\n").as_bytes());
    }
    writer.finish().await;
    drop(screen);
    let _ = task.await;
    tracing::info!(
        who = %start.principal,
        key = %print,
        frames = stats.frames_sent.load(Ordering::Relaxed),
        skipped = stats.frames_skipped.load(Ordering::Relaxed),
        bytes = stats.bytes_sent.load(Ordering::Relaxed),
        max_queued_bytes = stats.max_queued_bytes.load(Ordering::Relaxed),
        "viewer left"
    );
    drop(start.slot);
    status
}

/// Where the session's input comes from.
struct Sources {
    shared: Arc<Shared>,
    ended_why: Arc<std::sync::OnceLock<&'static str>>,
    key: PublicKey,
    standing: Standing,
    rx: mpsc::Receiver<Vec<u8>>,
    size: watch::Receiver<Size>,
    sizes_open: bool,
    keys_changed: watch::Receiver<u64>,
    keys: Keys,
    ready: std::collections::VecDeque<Input>,
    waiting: bool,
}

/// The client's bytes as key events, with its newest size, and what a change of its key's
/// standing means for it; an unfinished escape sequence is taken as it stands once `ESC_WAIT`
/// passes with nothing more (a lone Esc).
fn input(
    shared: Arc<Shared>,
    ended_why: Arc<std::sync::OnceLock<&'static str>>,
    start: &Start,
    rx: mpsc::Receiver<Vec<u8>>,
    size: watch::Receiver<Size>,
) -> impl Stream<Item = Input> + Unpin + use<> {
    let keys_changed = shared.keys_changed.subscribe();
    let state = Sources {
        shared,
        ended_why,
        key: start.key.clone(),
        standing: start.standing,
        rx,
        size,
        sizes_open: true,
        keys_changed,
        keys: Keys::default(),
        ready: Default::default(),
        waiting: false,
    };
    Box::pin(futures::stream::unfold(state, |mut s| async move {
        loop {
            if let Some(next) = s.ready.pop_front() {
                return Some((next, s));
            }
            let esc_wait = async {
                if s.waiting {
                    tokio::time::sleep(ESC_WAIT).await
                } else {
                    std::future::pending().await
                }
            };
            tokio::select! {
                bytes = s.rx.recv() => {
                    let bytes = bytes?;
                    let keys = s.keys.feed(&bytes);
                    // Bytes that made no key yet are the start of a sequence (or a lone Esc).
                    s.waiting = keys.is_empty() || bytes.last() == Some(&0x1b);
                    for key in keys {
                        panic_hook(&key);
                        s.ready.push_back(Input::Key(key));
                    }
                }
                _ = esc_wait => {
                    s.waiting = false;
                    s.ready.extend(s.keys.flush().into_iter().map(Input::Key));
                }
                changed = s.size.changed(), if s.sizes_open => {
                    if changed.is_err() {
                        s.sizes_open = false;
                        continue;
                    }
                    let size = *s.size.borrow_and_update();
                    if let Some(told) = too_large(&size) {
                        s.ready.push_back(Input::Notice(told));
                    }
                    s.ready.push_back(Input::Resize(size.cols, size.rows));
                }
                changed = s.keys_changed.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                    match s.shared.standing_of(&s.key, false) {
                        None => {
                            tracing::warn!(key = %fingerprint(&s.key), "a key taken out of the authorized keys: its session ends");
                            let _ = s.ended_why.set(
                                "your key was taken out of the authorized keys: this session has ended",
                            );
                            return None;
                        }
                        Some((Standing::Viewer, _)) if s.standing == Standing::Operator => {
                            s.standing = Standing::Viewer;
                            tracing::warn!(key = %fingerprint(&s.key), "a key taken out of the operators: its session is read-only now");
                            s.ready.push_back(Input::Restrict(
                                "your key was taken out of the operators: read-only from now on".into(),
                            ));
                        }
                        Some(_) => {}
                    }
                }
            }
        }
    }))
}

/// A debug build's hook for the tests that prove a panicking session ends alone:
/// `GANTRY_TEST_PANIC_KEY=K` panics the session whose client types K. Not in a release build.
#[cfg(debug_assertions)]
fn panic_hook(key: &crossterm::event::KeyEvent) {
    if let crossterm::event::KeyCode::Char(c) = key.code
        && std::env::var("GANTRY_TEST_PANIC_KEY").is_ok_and(|k| k.starts_with(c))
    {
        panic!("GANTRY_TEST_PANIC_KEY: the client typed {c}");
    }
}

#[cfg(not(debug_assertions))]
fn panic_hook(_key: &crossterm::event::KeyEvent) {}
