//! The terminal: set up and restored (on quit, error, panic, SIGTERM and SIGHUP), and the loop
//! that feeds keys and worker events to `App` and draws only when something changed, at most
//! about 30 frames a second.

mod memory;
mod session;
mod workers;

use std::time::Duration;

use color_eyre::eyre::{Result, eyre};
use crossterm::event::{Event as TermEvent, EventStream, KeyEventKind};
use futures::StreamExt;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::app::{App, Event};
use crate::keys::Keymap;
use crate::ui;
use crate::ui::theme::Theme;

/// The shortest time between two frames (~30 per second).
const FRAME: Duration = Duration::from_millis(33);
/// Worker events folded in before a frame is considered, so a flood of log lines is one frame.
const EVENTS_PER_TURN: usize = 4096;

pub use session::SessionOptions;

/// What the TUI is started with.
#[derive(Debug, Clone, Default)]
pub struct TuiOptions {
    pub session: SessionOptions,
    /// Refuse every change to the cloud (the config file can ask for it too).
    pub read_only: bool,
    /// Gantry's own log (default: the state directory's `gantry.log`).
    pub log_file: Option<std::path::PathBuf>,
    /// `--image`, `--env`… for the Job the launch key starts.
    pub launch: crate::k8s::manifest::LaunchFlags,
}

pub async fn run(options: TuiOptions) -> Result<i32> {
    let config = match crate::connect::load_config(&options.session.target) {
        Ok(mut c) => {
            options.launch.apply(&mut c.job);
            c
        }
        Err(e) => {
            crate::errln!("gantry: {e}");
            return Ok(2);
        }
    };
    let keymap = match Keymap::with_overrides(&config.keys) {
        Ok(k) => k,
        Err(e) => {
            crate::errln!("gantry: key bindings: {e}");
            return Ok(2);
        }
    };
    crate::logging::to_file(options.log_file.as_deref());
    let session = match session::open(&options.session, config.clone()).await {
        Ok(s) => s,
        Err(e) => {
            crate::errln!("gantry: {e}");
            return Ok(2);
        }
    };
    let (tx, rx) = mpsc::unbounded_channel();
    let workers = workers::Workers::start(session, tx);
    let read_only = options.read_only || config.read_only;
    let app = App::new(config, keymap, read_only);
    let mut terminal = ratatui::try_init().map_err(|e| eyre!("cannot use this terminal: {e}"))?;
    let result = event_loop(&mut terminal, app, workers, rx).await;
    ratatui::restore();
    result.map(|()| 0)
}

/// Applies one event from the workers.
fn take(app: &mut App, workers: &workers::Workers, event: Event) -> Vec<crate::app::Command> {
    if matches!(event, Event::Tail { .. } | Event::Job(_)) {
        workers.flow_event_taken();
    }
    app.on_event(event)
}

async fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    mut app: App,
    mut workers: workers::Workers,
    mut rx: mpsc::UnboundedReceiver<Event>,
) -> Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    let mut keys = EventStream::new();
    let theme = Theme::from_env();
    let mut last_frame = Instant::now() - FRAME;
    let mut last_tick = Instant::now();
    let mut trimmer = memory::Trimmer::new();
    loop {
        if app.dirty && last_frame.elapsed() >= FRAME {
            let size = terminal.size()?;
            app.log_rows = ui::log_rows(size.width, size.height);
            let now = jiff::Timestamp::now();
            terminal.draw(|frame| ui::draw(frame, &app, &theme, now))?;
            app.dirty = false;
            last_frame = Instant::now();
            trimmer.after_frame();
            last_tick = last_frame;
        }
        // Ages and elapsed counters move by themselves: redraw each second while an operation
        // runs, else twice a minute; nothing else redraws an idle screen.
        let tick = if app.ticking() {
            Duration::from_secs(1)
        } else {
            Duration::from_secs(30)
        };
        let next_frame = last_frame + FRAME;
        let mut commands = Vec::new();
        tokio::select! {
            _ = term.recv() => break,
            _ = hup.recv() => break,
            key = keys.next() => match key {
                Some(Ok(TermEvent::Key(k))) if k.kind != KeyEventKind::Release => commands.extend(app.on_key(k)),
                Some(Ok(TermEvent::Resize(..))) => app.dirty = true,
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(eyre!("reading the terminal: {e}")),
                None => break,
            },
            event = rx.recv() => {
                let Some(event) = event else { break };
                commands.extend(take(&mut app, &workers, event));
                for _ in 0..EVENTS_PER_TURN {
                    match rx.try_recv() {
                        Ok(e) => commands.extend(take(&mut app, &workers, e)),
                        Err(_) => break,
                    }
                }
            }
            _ = tokio::time::sleep_until(next_frame), if app.dirty => {}
            _ = tokio::time::sleep_until(last_tick + tick) => {
                app.dirty = true;
                last_tick = Instant::now();
            }
        }
        for command in commands {
            workers.run(command);
        }
        if app.should_quit {
            break;
        }
    }
    workers.stop();
    Ok(())
}
