//! How a test drives the TUI: one viewer over a model fed the reports the engine's workers would
//! send, and the keys a test presses, as crossterm delivers them.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use gantry::app::App;
use gantry::engine::told::Telling;
use gantry::engine::world::FollowLogs;
use gantry::engine::{Command, Report, World};
use gantry::k8s::logs::TailEvent;

use super::now;

/// One viewer (`app`) of a model the test feeds with the events workers would send. Reads as the
/// viewer it wraps (`Deref`); `on_event`, `on_key` and `update` pass the model along.
pub struct Tui {
    pub model: World,
    /// What the engine told, as its owner would keep it.
    pub told: Telling,
    pub app: App,
}

impl std::ops::Deref for Tui {
    type Target = App;
    fn deref(&self) -> &App {
        &self.app
    }
}

impl std::ops::DerefMut for Tui {
    fn deref_mut(&mut self) -> &mut App {
        &mut self.app
    }
}

impl Tui {
    /// What a worker reports: folded into the model, then taken in by the viewer. Returns the
    /// log follow the engine would start (a new newest attempt).
    pub fn on_event(&mut self, event: Report) -> Vec<FollowLogs> {
        let applied = self.model.apply(event);
        let job = self.app.config.job.name.clone();
        for notice in applied.told {
            let message =
                gantry::engine::policies::news::message_for(&notice, &self.model, &job, now());
            self.told.record(notice, message);
        }
        if applied.changed {
            self.app.on_model(&self.model, &self.told);
        }
        applied.follow.into_iter().collect()
    }

    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Command> {
        self.app.on_key(key, &self.model)
    }

    pub fn update(&mut self, action: gantry::keys::Action) -> Vec<Command> {
        self.app.update(action, &self.model)
    }

    /// Lines of the viewer's own fetch.
    pub fn on_fetched(&mut self, generation: u64, event: TailEvent) {
        self.app.on_fetched(generation, event)
    }

    /// Texts of the lines the viewer shows, oldest first.
    pub fn shown_texts(&self) -> Vec<String> {
        let shown = self.app.logs.shown(&self.model);
        (0..shown.store.lines.len())
            .filter(|&i| shown.matches(i))
            .filter_map(|i| shown.store.lines.get(i).map(|l| l.text.to_string()))
            .collect()
    }

    /// Lines held below the bottom of the view (0 when following the newest).
    pub fn scrolled(&self) -> usize {
        self.app.logs.shown(&self.model).below()
    }

    /// The text of the line at the bottom of the view.
    pub fn bottom_text(&self) -> Option<String> {
        let shown = self.app.logs.shown(&self.model);
        shown
            .bottom
            .and_then(|b| shown.store.lines.get(b))
            .map(|l| l.text.to_string())
    }

    pub fn draw(&self, frame: &mut ratatui::Frame) {
        gantry::ui::draw(
            frame,
            &self.model,
            &self.app,
            &gantry::ui::theme::Theme::plain(),
            now(),
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Keys

pub fn key(c: char) -> KeyEvent {
    let modifiers = if c.is_ascii_uppercase() {
        KeyModifiers::SHIFT
    } else {
        KeyModifiers::NONE
    };
    KeyEvent::new(KeyCode::Char(c), modifiers)
}

pub fn code(code: KeyCode) -> KeyEvent {
    let modifiers = if code == KeyCode::BackTab {
        KeyModifiers::SHIFT
    } else {
        KeyModifiers::NONE
    };
    KeyEvent::new(code, modifiers)
}

pub fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// Presses each character in turn; returns every command asked for.
pub fn type_text(app: &mut Tui, text: &str) -> Vec<Command> {
    text.chars().flat_map(|c| app.on_key(key(c))).collect()
}
