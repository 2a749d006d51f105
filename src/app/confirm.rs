//! Confirmation dialogs: destructive or costly actions ask first.

use crate::engine::Command;

#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// y confirms; anything else cancels.
    YesNo,
    /// The operator types this exact text, then Enter.
    TypeName { expected: String, typed: String },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Confirm {
    pub title: String,
    /// What will happen, shown in the dialog.
    pub lines: Vec<String>,
    pub answer: Answer,
    pub command: Command,
}

/// How a key press left the dialog.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    Open,
    Confirmed(Command),
    Cancelled,
}

impl Confirm {
    pub fn yes_no(title: impl Into<String>, lines: Vec<String>, command: Command) -> Self {
        Self {
            title: title.into(),
            lines,
            answer: Answer::YesNo,
            command,
        }
    }

    pub fn type_name(
        title: impl Into<String>,
        lines: Vec<String>,
        expected: &str,
        command: Command,
    ) -> Self {
        Self {
            title: title.into(),
            lines,
            answer: Answer::TypeName {
                expected: expected.to_string(),
                typed: String::new(),
            },
            command,
        }
    }

    pub fn key(&mut self, key: crossterm::event::KeyCode) -> Outcome {
        use crossterm::event::KeyCode;
        match (&mut self.answer, key) {
            (_, KeyCode::Esc) => Outcome::Cancelled,
            (Answer::YesNo, KeyCode::Char('y' | 'Y')) => Outcome::Confirmed(self.command.clone()),
            (Answer::YesNo, _) => Outcome::Cancelled,
            (Answer::TypeName { expected, typed }, KeyCode::Enter) => {
                if typed == expected {
                    Outcome::Confirmed(self.command.clone())
                } else {
                    Outcome::Cancelled
                }
            }
            (Answer::TypeName { typed, .. }, KeyCode::Backspace) => {
                typed.pop();
                Outcome::Open
            }
            (Answer::TypeName { typed, .. }, KeyCode::Char(c)) => {
                if typed.len() < 64 {
                    typed.push(c);
                }
                Outcome::Open
            }
            _ => Outcome::Open,
        }
    }
}
