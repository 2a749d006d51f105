//! The one key table: it dispatches keys, and the help overlay and status-bar hints are made
//! from it. The config file's `[keys]` section can rebind any action.

use std::collections::BTreeMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::action::Action;

/// A key as written in the config file and shown in help: `q`, `X`, `ctrl-c`, `tab`, `pgup`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
}

impl Key {
    pub fn parse(s: &str) -> Result<Key, String> {
        let lower = s.to_ascii_lowercase();
        let (ctrl, rest) = match lower
            .strip_prefix("ctrl-")
            .or_else(|| lower.strip_prefix("c-"))
        {
            Some(r) => (true, &s[s.len() - r.len()..]),
            None => (false, s),
        };
        let code = match rest.to_ascii_lowercase().as_str() {
            "tab" => KeyCode::Tab,
            "shift-tab" | "backtab" => KeyCode::BackTab,
            "enter" | "return" => KeyCode::Enter,
            "esc" | "escape" => KeyCode::Esc,
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "pgup" | "pageup" => KeyCode::PageUp,
            "pgdn" | "pagedown" => KeyCode::PageDown,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "space" => KeyCode::Char(' '),
            f if f.len() >= 2
                && f.starts_with('f')
                && f[1..].parse::<u8>().is_ok_and(|n| (1..=12).contains(&n)) =>
            {
                KeyCode::F(f[1..].parse().unwrap_or(1))
            }
            _ => {
                let mut chars = rest.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) if !c.is_control() => KeyCode::Char(c),
                    _ => {
                        return Err(format!(
                            "'{s}' is not a key: use one character (q, X, /), ctrl-<char>, tab, shift-tab, enter, esc, up, down, left, right, pgup, pgdn, home, end, space or f1..f12"
                        ));
                    }
                }
            }
        };
        Ok(Key { code, ctrl })
    }

    pub fn from_event(e: &KeyEvent) -> Key {
        let ctrl = e.modifiers.contains(KeyModifiers::CONTROL);
        let code = match e.code {
            KeyCode::Char(c) if ctrl => KeyCode::Char(c.to_ascii_lowercase()),
            other => other,
        };
        Key { code, ctrl }
    }

    pub fn label(&self) -> String {
        let base = match self.code {
            KeyCode::Char(' ') => "space".to_string(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::BackTab => "S-Tab".into(),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::Left => "←".into(),
            KeyCode::Right => "→".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            KeyCode::F(n) => format!("F{n}"),
            _ => "?".into(),
        };
        if self.ctrl { format!("^{base}") } else { base }
    }
}

fn default_bindings() -> Vec<(Action, &'static [&'static str])> {
    vec![
        (Action::CreateCluster, &["c"]),
        (Action::Launch, &["l"]),
        (Action::Retry, &["r"]),
        (Action::Delete, &["d"]),
        (Action::DeleteCluster, &["X"]),
        (Action::Plan, &["P"]),
        (Action::FocusNext, &["tab"]),
        (Action::FocusPrev, &["shift-tab"]),
        (Action::Up, &["k", "up"]),
        (Action::Down, &["j", "down"]),
        (Action::PageUp, &["pgup", "ctrl-b"]),
        (Action::PageDown, &["pgdn", "ctrl-f"]),
        (Action::Top, &["g", "home"]),
        (Action::Bottom, &["G", "end"]),
        (Action::FollowSelected, &["enter"]),
        (Action::AllPods, &["a"]),
        (Action::ToggleFollow, &["f"]),
        (Action::ToggleWrap, &["w"]),
        (Action::ToggleTimestamps, &["t"]),
        (Action::Previous, &["p"]),
        (Action::Search, &["/"]),
        (Action::NextMatch, &["n"]),
        (Action::PrevMatch, &["N"]),
        (Action::ToggleMetrics, &["m"]),
        (Action::NextMetric, &["]"]),
        (Action::PrevMetric, &["["]),
        (Action::ToggleSmoothing, &["s"]),
        (Action::Help, &["?"]),
        (Action::Close, &["esc"]),
        (Action::Quit, &["q", "ctrl-c"]),
    ]
}

#[derive(Debug, Clone)]
pub struct Keymap {
    bindings: Vec<(Key, Action)>,
}

impl Default for Keymap {
    fn default() -> Self {
        let mut bindings = Vec::new();
        for (action, keys) in default_bindings() {
            for k in keys {
                if let Ok(key) = Key::parse(k) {
                    bindings.push((key, action));
                }
            }
        }
        Self { bindings }
    }
}

impl Keymap {
    /// The defaults with the config file's rebindings (`action = "key"` or a list of keys).
    pub fn with_overrides(overrides: &BTreeMap<String, String>) -> Result<Keymap, String> {
        let mut map = Keymap::default();
        for (name, keys) in overrides {
            let action = Action::from_name(name).ok_or_else(|| {
                let names: Vec<&str> = Action::ALL.iter().map(|a| a.name()).collect();
                format!(
                    "keys.{name}: no such action; actions are: {}",
                    names.join(", ")
                )
            })?;
            let parsed: Vec<Key> = keys
                .split(',')
                .map(str::trim)
                .filter(|k| !k.is_empty())
                .map(|k| Key::parse(k).map_err(|e| format!("keys.{name}: {e}")))
                .collect::<Result<_, _>>()?;
            if parsed.is_empty() {
                return Err(format!("keys.{name}: give at least one key"));
            }
            map.bindings
                .retain(|(k, a)| *a != action && !parsed.contains(k));
            map.bindings.extend(parsed.into_iter().map(|k| (k, action)));
        }
        Ok(map)
    }

    pub fn action_for(&self, key: &KeyEvent) -> Option<Action> {
        let key = Key::from_event(key);
        self.bindings
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, a)| *a)
    }

    /// The keys bound to an action, as labels (`q/^c`).
    pub fn keys_for(&self, action: Action) -> String {
        let labels: Vec<String> = self
            .bindings
            .iter()
            .filter(|(_, a)| *a == action)
            .map(|(k, _)| k.label())
            .collect();
        labels.join("/")
    }

    /// Rows of the help overlay: keys, description.
    pub fn help_rows(&self) -> Vec<(String, &'static str)> {
        Action::ALL
            .iter()
            .map(|a| (self.keys_for(*a), a.description()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(c: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(c, m)
    }

    #[test]
    fn defaults_dispatch() {
        let map = Keymap::default();
        assert_eq!(
            map.action_for(&key(KeyCode::Char('q'), KeyModifiers::NONE)),
            Some(Action::Quit)
        );
        assert_eq!(
            map.action_for(&key(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Some(Action::Quit)
        );
        assert_eq!(
            map.action_for(&key(KeyCode::Char('X'), KeyModifiers::SHIFT)),
            Some(Action::DeleteCluster)
        );
        assert_eq!(
            map.action_for(&key(KeyCode::BackTab, KeyModifiers::SHIFT)),
            Some(Action::FocusPrev)
        );
        assert_eq!(map.keys_for(Action::Quit), "q/^c");
    }

    #[test]
    fn overrides_rebind_and_bad_ones_explain() {
        let map =
            Keymap::with_overrides(&BTreeMap::from([("launch".to_string(), "L".to_string())]))
                .unwrap();
        assert_eq!(
            map.action_for(&key(KeyCode::Char('L'), KeyModifiers::SHIFT)),
            Some(Action::Launch)
        );
        assert_eq!(
            map.action_for(&key(KeyCode::Char('l'), KeyModifiers::NONE)),
            None
        );
        let e = Keymap::with_overrides(&BTreeMap::from([("lunch".to_string(), "L".to_string())]))
            .unwrap_err();
        assert!(e.contains("no such action") && e.contains("launch"), "{e}");
        let e = Keymap::with_overrides(&BTreeMap::from([(
            "launch".to_string(),
            "ctrl-alt-x".to_string(),
        )]))
        .unwrap_err();
        assert!(e.contains("is not a key"), "{e}");
    }
}
