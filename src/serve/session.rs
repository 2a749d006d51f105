//! One SSH client's TUI: its own App (its own selection, scroll, search and confirmations) over
//! the engine's one model, drawn at the client's size through its own frame queue, its keys
//! parsed from the bytes it sends. The same `viewer::run` as the local terminal, so the same one
//! read-only gate decides what it may change.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use futures::Stream;
use ratatui::layout::Rect;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::input::{ESC_WAIT, Keys};
use super::keys::Standing;
use super::output::{self, FrameWriter};
use super::{Shared, ViewerSlot};
use crate::app::App;
use crate::ui::theme::Theme;
use crate::viewer::{self, Delivery, Input, Screen, Viewer};

/// What the connection hands a session's task: the client's bytes, and its new sizes.
#[derive(Debug)]
pub enum FromClient {
    Bytes(Vec<u8>),
    Resize(u16, u16),
}

/// What a session starts with.
pub struct Start {
    pub who: String,
    pub standing: Standing,
    pub size: (u16, u16),
    pub no_color: bool,
    pub term: String,
    pub stop: CancellationToken,
    pub slot: ViewerSlot,
}

/// Runs the TUI for one client until it quits, leaves or the server stops. Ends with the
/// alternate screen left and the cursor shown again, delivered before the channel closes.
pub async fn run(
    shared: Arc<Shared>,
    start: Start,
    channel: impl tokio::io::AsyncWrite + Send + Unpin + 'static,
    from_client: mpsc::Receiver<FromClient>,
) {
    let delivery = Delivery::default();
    let (mut writer, stats, task) = output::start(channel, delivery.clone());
    let (cols, rows) = start.size;
    let area = Rect::new(0, 0, cols, rows);
    // The client's terminal is set up here: there is no tty on this side to ask.
    let _ = crossterm::execute!(
        writer,
        crossterm::terminal::EnterAlternateScreen,
        crossterm::cursor::Hide
    );
    let Ok(mut screen) = Screen::new(writer, area) else {
        return;
    };
    let read_only = shared.read_only || start.standing == Standing::Viewer;
    let app = App::new(shared.config.clone(), shared.keymap.clone(), read_only);
    let theme = if start.no_color || start.term == "dumb" {
        Theme::plain()
    } else {
        Theme::colored()
    };
    let viewer = Viewer {
        engine: shared.engine.clone(),
        theme,
        pacing: shared.pacing,
        who: (start.standing == Standing::Operator).then(|| start.who.clone()),
        stop: start.stop.clone(),
        delivery,
    };
    let ended = viewer::run(&mut screen, app, viewer, input(from_client), area).await;
    if let Err(e) = ended {
        tracing::info!(who = %start.who, error = %e, "viewer ended");
    }
    // The scroll region whole, the style plain, the cursor shown; then the client's own screen.
    let _ = screen.finish();
    let writer: &mut FrameWriter = screen.writer_mut();
    let _ = crossterm::queue!(writer, crossterm::terminal::LeaveAlternateScreen);
    writer.finish().await;
    drop(screen);
    let _ = task.await;
    tracing::info!(
        who = %start.who,
        frames = stats.frames_sent.load(Ordering::Relaxed),
        skipped = stats.frames_skipped.load(Ordering::Relaxed),
        bytes = stats.bytes_sent.load(Ordering::Relaxed),
        max_queued_bytes = stats.max_queued_bytes.load(Ordering::Relaxed),
        "viewer left"
    );
    drop(start.slot);
}

/// The client's bytes as key events, with its resizes; an unfinished escape sequence is taken
/// as it stands once `ESC_WAIT` passes with nothing more (a lone Esc).
fn input(from_client: mpsc::Receiver<FromClient>) -> impl Stream<Item = Input> + Unpin {
    struct State {
        rx: mpsc::Receiver<FromClient>,
        keys: Keys,
        ready: std::collections::VecDeque<Input>,
        waiting: bool,
    }
    let state = State {
        rx: from_client,
        keys: Keys::default(),
        ready: Default::default(),
        waiting: false,
    };
    Box::pin(futures::stream::unfold(state, |mut s| async move {
        loop {
            if let Some(next) = s.ready.pop_front() {
                return Some((next, s));
            }
            let received = if s.waiting {
                match tokio::time::timeout(ESC_WAIT, s.rx.recv()).await {
                    Ok(r) => r,
                    Err(_) => {
                        s.waiting = false;
                        s.ready.extend(s.keys.flush().into_iter().map(Input::Key));
                        continue;
                    }
                }
            } else {
                s.rx.recv().await
            };
            match received? {
                FromClient::Bytes(bytes) => {
                    let keys = s.keys.feed(&bytes);
                    // Bytes that made no key yet are the start of a sequence (or a lone Esc).
                    s.waiting = keys.is_empty() || bytes.last() == Some(&0x1b);
                    s.ready.extend(keys.into_iter().map(Input::Key));
                }
                FromClient::Resize(cols, rows) => s.ready.push_back(Input::Resize(cols, rows)),
            }
        }
    }))
}
