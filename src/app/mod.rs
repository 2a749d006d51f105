//! The application state and its one update function. Keys become actions through the keymap;
//! actions and worker events change state and may ask for commands; drawing reads the state.

pub mod cluster;
pub mod command;
pub mod confirm;
pub mod event;
pub mod jobs;
mod log_lines;
pub mod logs;
pub mod trouble;
mod update;

use crossterm::event::KeyEvent;

pub use command::Command;
pub use event::{Event, TargetInfo};

use crate::config::Config;
use crate::keys::Keymap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Jobs,
    Pods,
    Logs,
    Events,
}

impl Focus {
    const ORDER: [Focus; 4] = [Focus::Jobs, Focus::Pods, Focus::Logs, Focus::Events];

    fn step(self, delta: isize) -> Focus {
        let at = Self::ORDER.iter().position(|f| *f == self).unwrap_or(0) as isize;
        Self::ORDER[(at + delta).rem_euclid(Self::ORDER.len() as isize) as usize]
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    Help,
    Confirm(confirm::Confirm),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warning,
    Error,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub level: Level,
    pub text: String,
}

/// Everything the screen shows; owned by the UI task alone.
#[derive(Debug)]
pub struct App {
    pub config: Config,
    pub keymap: Keymap,
    pub read_only: bool,
    pub focus: Focus,
    pub overlay: Option<Overlay>,
    pub cluster: cluster::ClusterModel,
    pub jobs: jobs::JobsModel,
    pub logs: logs::LogView,
    pub notice: Option<Notice>,
    /// Transient troubles (a watch reconnecting, a retried request), each cleared when its
    /// source is fine again.
    pub troubles: trouble::Troubles,
    pub connected: bool,
    pub should_quit: bool,
    /// Something changed since the last frame.
    pub dirty: bool,
    /// Rows the logs pane showed last frame (for page up/down).
    pub log_rows: usize,
    /// The newest attempt seen: a new one (after launch or retry) is followed automatically.
    newest_seen: Option<String>,
}

impl App {
    pub fn new(config: Config, keymap: Keymap, read_only: bool) -> Self {
        Self {
            config,
            keymap,
            read_only,
            focus: Focus::Pods,
            overlay: None,
            cluster: Default::default(),
            jobs: Default::default(),
            logs: Default::default(),
            notice: None,
            troubles: Default::default(),
            connected: false,
            should_quit: false,
            dirty: true,
            log_rows: 10,
            newest_seen: None,
        }
    }

    /// The newest trouble, as the status line shows it.
    pub fn trouble(&self) -> Option<&str> {
        self.troubles.newest()
    }

    pub fn notify(&mut self, level: Level, text: impl Into<String>) {
        self.notice = Some(Notice {
            level,
            text: text.into(),
        });
        self.dirty = true;
    }

    /// A key press: typed into an open dialog or search, else looked up in the keymap.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Command> {
        self.dirty = true;
        if let Some(Overlay::Confirm(dialog)) = &mut self.overlay {
            return match dialog.key(key.code) {
                confirm::Outcome::Open => Vec::new(),
                confirm::Outcome::Cancelled => {
                    self.overlay = None;
                    self.notify(Level::Info, "cancelled");
                    Vec::new()
                }
                confirm::Outcome::Confirmed(command) => {
                    self.overlay = None;
                    self.request(command)
                }
            };
        }
        if self.logs.typing.is_some() {
            self.type_search(key);
            return Vec::new();
        }
        match self.keymap.action_for(&key) {
            Some(action) => self.update(action),
            None => Vec::new(),
        }
    }

    fn type_search(&mut self, key: KeyEvent) {
        use crossterm::event::KeyCode;
        let Some(typed) = self.logs.typing.as_mut() else {
            return;
        };
        match key.code {
            KeyCode::Esc => self.logs.typing = None,
            KeyCode::Enter => {
                let query = std::mem::take(typed);
                self.logs.typing = None;
                self.logs.search = (!query.is_empty()).then_some(query.clone());
                if !query.is_empty() && !self.logs.jump_to_match(false) {
                    self.notify(Level::Info, format!("no line contains \"{query}\""));
                }
            }
            KeyCode::Backspace => {
                typed.pop();
            }
            KeyCode::Char(c) if typed.chars().count() < 200 => typed.push(c),
            _ => {}
        }
    }

    /// The one gate every command passes: in read-only mode nothing that changes the cloud goes
    /// out, whichever key or dialog asked for it.
    pub fn request(&mut self, command: Command) -> Vec<Command> {
        if self.read_only && command.mutates() {
            self.notify(
                Level::Warning,
                format!("read-only: refused to {}", command.describe()),
            );
            return Vec::new();
        }
        if command == Command::DeleteCluster {
            // Its log streams stop with it (the worker cancels the tail): so do their troubles.
            self.troubles.clear_logs();
        }
        vec![command]
    }

    /// Whether the screen changes with time alone (elapsed counters): the loop redraws each second.
    pub fn ticking(&self) -> bool {
        self.cluster.ticking()
    }
}
