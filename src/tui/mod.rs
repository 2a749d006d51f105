//! The local terminal: one viewer of an engine in the same process. Set up and restored (on
//! quit, error, panic, SIGTERM and SIGHUP); `viewer::run` does the rest, as for an SSH client.

use color_eyre::eyre::{Result, eyre};
use crossterm::event::{Event as TermEvent, EventStream, KeyEventKind};
use futures::StreamExt;
use ratatui::layout::Rect;
use tokio_util::sync::CancellationToken;

use crate::app::App;
use crate::engine::{Engine, open_session};
use crate::keys::Keymap;
use crate::ui::theme::Theme;
use crate::viewer::{self, Input, Pacing, Viewer, local_terminal_is_remote};

use crate::settings::Settings;

/// How long the last frame and the restored screen may wait for a terminal that is not reading.
const LAST_WORDS: std::time::Duration = std::time::Duration::from_secs(2);

pub async fn run(settings: Settings) -> Result<i32> {
    let Settings {
        session: options,
        config,
        max_fps,
        log_file,
        ..
    } = settings;
    let keymap = match Keymap::with_overrides(&config.keys) {
        Ok(k) => k,
        Err(e) => {
            crate::errln!("gantry: key bindings: {e}");
            return Ok(2);
        }
    };
    crate::logging::to_file(log_file.as_deref());
    let session = match open_session(&options, config.clone()).await {
        Ok(s) => s,
        Err(e) => {
            crate::errln!("gantry: {e}");
            return Ok(2);
        }
    };
    let engine = Engine::start(session);
    let app = App::new(config, keymap, options.read_only);
    let stop = stop_on_signals()?;
    // ratatui sets the terminal up (raw mode, the alternate screen, a panic hook that restores
    // it); the frames are written by the viewer's own screen.
    let terminal = ratatui::try_init().map_err(|e| eyre!("cannot use this terminal: {e}"))?;
    whole_scroll_region_on_panic();
    let size = terminal.size();
    drop(terminal);
    let size = match size {
        Ok(size) => Rect::new(0, 0, size.width, size.height),
        Err(e) => {
            ratatui::restore();
            return Err(eyre!("cannot use this terminal: {e}"));
        }
    };
    // Frames go out through a bounded queue, as to an SSH client: a terminal that stops reading
    // (a stalled link, a frozen multiplexer) loses frames, never the engine's time.
    let delivery = viewer::Delivery::default();
    let (writer, _stats, delivering) = viewer::output::start(tokio::io::stdout(), delivery.clone());
    let mut screen = viewer::Screen::new(writer, size)?;
    let viewer = Viewer {
        engine: engine.handle(),
        theme: Theme::from_env(),
        pacing: Pacing::resolve(max_fps, local_terminal_is_remote()),
        stop: stop.clone(),
        delivery,
    };
    let result = viewer::run(&mut screen, app, viewer, terminal_input(), size)
        .await
        .map_err(|e| eyre!("writing to the terminal: {e}"));
    screen.writer_mut().closing();
    let _ = screen.finish();
    // A terminal that still does not read is left after a moment: the engine has to stop.
    let _ = tokio::time::timeout(LAST_WORDS, async {
        screen.writer_mut().finish().await;
        drop(screen);
        let _ = delivering.await;
    })
    .await;
    ratatui::restore();
    stop.cancel();
    engine.stop().await;
    result.map(|()| 0)
}

/// The screen leaves a scroll region set between frames; a panic must not leave the shell
/// scrolling only part of the terminal. Runs before ratatui's own hook, which restores the rest.
fn whole_scroll_region_on_panic() {
    let restore = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        use std::io::Write;
        let mut out = std::io::stdout();
        let _ = out.write_all(viewer::WHOLE_REGION);
        let _ = out.flush();
        restore(info);
    }));
}

/// Inputs read ahead of the viewer; a key beyond them waits in the terminal.
const INPUT_QUEUE: usize = 64;

/// The local terminal's keys and sizes, as a viewer's input. crossterm's `EventStream` is read in
/// a task of its own: its reading thread holds a lock while it waits on the terminal, and each
/// poll of the stream tries that lock, spinning and yielding the CPU before it gives up. Polled
/// from the viewer's loop, that was on every wake-up (each chunk of a log, each timer): some 660
/// `sched_yield` calls a second following 1,000 lines a second. In its own task it is polled when
/// its thread says the terminal has something.
fn terminal_input() -> impl futures::Stream<Item = Input> + Unpin {
    let (tx, rx) = tokio::sync::mpsc::channel(INPUT_QUEUE);
    tokio::spawn(async move {
        let mut events = EventStream::new();
        while let Some(event) = events.next().await {
            let input = match event {
                Ok(TermEvent::Key(k)) if k.kind != KeyEventKind::Release => Input::Key(k),
                Ok(TermEvent::Resize(width, height)) => Input::Resize(width, height),
                Ok(_) => continue,
                Err(e) => {
                    tracing::warn!(error = %e, "reading the terminal");
                    continue;
                }
            };
            // The viewer is gone: so is the need for its keys.
            if tx.send(input).await.is_err() {
                break;
            }
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(rx)
}

/// SIGTERM and SIGHUP end the local viewer (the terminal is restored on the way out).
fn stop_on_signals() -> Result<CancellationToken> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    let stop = CancellationToken::new();
    let cancel = stop.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = hup.recv() => {}
        }
        cancel.cancel();
    });
    Ok(stop)
}
