//! What the operator can ask for ([`Action`]) and the one key table that maps keys to it
//! ([`Keymap`]): dispatch, the help overlay and the status-bar hints all come from the table,
//! and the config file's `[keys]` section rebinds it. A leaf: the config checks its `[keys]`
//! here, and the TUI dispatches here, without either importing the other.

mod action;
mod keymap;

pub use action::Action;
pub use keymap::{Key, Keymap};
