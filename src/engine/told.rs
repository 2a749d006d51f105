//! What the viewers were told, numbered: the newest few notices, each with the message it is
//! to those not looking (a viewer rings its own terminal with it, whoever sends it over HTTP).
//! The owner keeps it beside the world — it is what the engine said, not what the cluster is —
//! and a viewer reads what came after the last number it saw.

use std::collections::VecDeque;

use super::notice::Notice;
use crate::notify::Message;

/// Notices kept for viewers that have not drawn since they came.
const KEPT: usize = 32;

/// One notice as it was told.
#[derive(Debug, Clone, PartialEq)]
pub struct Told {
    pub number: u64,
    pub notice: Notice,
    /// What it is as a message, when its kind is sent.
    pub message: Option<Message>,
}

#[derive(Debug, Default)]
pub struct Telling {
    kept: VecDeque<Told>,
    next: u64,
}

impl Telling {
    /// Keeps a notice for the viewers.
    pub fn record(&mut self, notice: Notice, message: Option<Message>) {
        self.next += 1;
        self.kept.push_back(Told {
            number: self.next,
            notice,
            message,
        });
        while self.kept.len() > KEPT {
            self.kept.pop_front();
        }
    }

    /// Notices numbered after `seen`, oldest first.
    pub fn after(&self, seen: u64) -> impl Iterator<Item = &Told> {
        self.kept.iter().filter(move |t| t.number > seen)
    }

    /// The number of the newest notice (0: none yet).
    pub fn last(&self) -> u64 {
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocabulary::{Kind, Severity};

    #[test]
    fn the_newest_few_are_kept_numbered_and_read_after_a_number() {
        let mut telling = Telling::default();
        for i in 0..40 {
            telling.record(
                Notice::new(Kind::Log, Severity::Info, "p", format!("n{i}")),
                None,
            );
        }
        assert_eq!(telling.last(), 40);
        assert_eq!(telling.after(0).count(), KEPT);
        let newest: Vec<u64> = telling.after(38).map(|t| t.number).collect();
        assert_eq!(newest, [39, 40]);
    }
}
