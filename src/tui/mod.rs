//! The local terminal: one viewer of an engine in the same process. Set up and restored (on
//! quit, error, panic, SIGTERM and SIGHUP); the loop feeds keys and model changes to `App` and
//! draws only when something changed, at most about 30 frames a second.

mod memory;

use std::time::Duration;

use color_eyre::eyre::{Result, eyre};
use crossterm::event::{Event as TermEvent, EventStream, KeyEventKind};
use futures::StreamExt;
use tokio::time::Instant;

use crate::app::App;
use crate::engine::{Command, Engine, EngineHandle, Fetch, session};
use crate::keys::Keymap;
use crate::ui;
use crate::ui::theme::Theme;

/// The shortest time between two frames (~30 per second).
const FRAME: Duration = Duration::from_millis(33);
/// Lines of the viewer's own fetch taken before a frame is considered.
const FETCHED_PER_TURN: usize = 4096;

pub use crate::engine::SessionOptions;

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
    let engine = Engine::start(session);
    let read_only = options.read_only || config.read_only;
    let app = App::new(config, keymap, read_only);
    let mut terminal = ratatui::try_init().map_err(|e| eyre!("cannot use this terminal: {e}"))?;
    let result = event_loop(&mut terminal, app, engine.handle()).await;
    ratatui::restore();
    engine.stop().await;
    result.map(|()| 0)
}

/// Hands the viewer's commands to the engine; a fetch of its own is kept here while it lasts.
fn send(engine: &EngineHandle, fetch: &mut Option<Fetch>, commands: Vec<Command>) {
    for command in commands {
        if matches!(command, Command::FetchLogs { .. }) {
            *fetch = Some(engine.fetch(command));
        } else {
            engine.run(command);
        }
    }
}

async fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    mut app: App,
    engine: EngineHandle,
) -> Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    let mut keys = EventStream::new();
    let mut changed = engine.changed();
    // Every layout shows usage (the cluster pane's nodes, the pods pane's columns).
    let _usage = engine.show_usage();
    let mut fetch: Option<Fetch> = None;
    let theme = Theme::from_env();
    let mut last_frame = Instant::now() - FRAME;
    let mut last_tick = Instant::now();
    let mut trimmer = memory::Trimmer::new();
    loop {
        if app.dirty && last_frame.elapsed() >= FRAME {
            let size = terminal.size()?;
            app.log_rows = ui::log_rows(size.width, size.height);
            let now = jiff::Timestamp::now();
            {
                let model = engine.model();
                terminal.draw(|frame| ui::draw(frame, &model, &app, &theme, now))?;
            }
            app.dirty = false;
            last_frame = Instant::now();
            trimmer.after_frame();
            last_tick = last_frame;
        }
        // Ages and elapsed counters move by themselves: redraw each second while an operation
        // runs, else twice a minute; nothing else redraws an idle screen.
        let tick = if engine.model().ticking() {
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
                Some(Ok(TermEvent::Key(k))) if k.kind != KeyEventKind::Release => {
                    commands.extend(app.on_key(k, &engine.model()));
                }
                Some(Ok(TermEvent::Resize(..))) => app.dirty = true,
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(eyre!("reading the terminal: {e}")),
                None => break,
            },
            news = changed.changed() => {
                if news.is_err() {
                    break;
                }
                app.on_model(&engine.model());
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
                    }
                    // The fetch is over (the pods' logs were read to their end).
                    None => fetch = None,
                }
            }
            _ = tokio::time::sleep_until(next_frame), if app.dirty => {}
            _ = tokio::time::sleep_until(last_tick + tick) => {
                app.dirty = true;
                last_tick = Instant::now();
            }
        }
        send(&engine, &mut fetch, commands);
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
