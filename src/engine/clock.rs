//! The time the engine reads: the machine's wall clock, or one set apart from it. An engine
//! never trusts another's clock (a Lease's silence is judged by this engine's monotonic clock
//! alone); what a wall clock set apart changes is what this engine writes (a Lease's renewal,
//! a record's time), which is how engines whose clocks disagree are tested.

use std::time::Instant;

use jiff::{SignedDuration, Timestamp};

/// The time a decision is made at: the wall clock (what is shown and recorded) and the
/// engine's monotonic clock (what a Lease's silence is judged by).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Now {
    pub wall: Timestamp,
    pub mono: Instant,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Clock {
    /// How far this engine's wall clock is from the machine's.
    pub skew: SignedDuration,
}

impl Clock {
    /// A clock `skew` apart from the machine's.
    pub fn skewed(skew: SignedDuration) -> Clock {
        Clock { skew }
    }

    /// The wall time now.
    pub fn wall(&self) -> Timestamp {
        Timestamp::now()
            .checked_add(self.skew)
            .unwrap_or_else(|_| Timestamp::now())
    }

    /// Now, on both clocks.
    pub fn now(&self) -> Now {
        Now {
            wall: self.wall(),
            mono: Instant::now(),
        }
    }
}
