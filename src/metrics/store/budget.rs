//! Bringing the store back within its budget, giving up the least needed first: the series of
//! pods off screen, attempts older than the last two, buckets of every series, pods off screen
//! altogether, every attempt but the newest, and at the very last everything (the saved logs
//! have it all).

use super::{Store, Track};
use crate::metrics::series::MIN_BUCKETS;

impl Store {
    /// Brings the store back within its budget, giving up the least needed first.
    pub(super) fn enforce(&mut self) {
        let within = |s: &Self| s.recount() <= s.budget;
        let steps: [fn(&mut Self) -> bool; 5] = [
            Self::let_go_oldest_off_screen,
            Self::drop_old_attempts,
            Self::fewer_buckets,
            Self::drop_off_screen,
            Self::keep_newest_only,
        ];
        for step in steps {
            while !within(self) {
                if !step(self) {
                    break;
                }
            }
        }
        if !within(self) {
            self.attempts.clear();
        }
        self.bytes = self.recount();
    }

    /// Lets go of the series of pods off screen, in the oldest attempt that has some.
    fn let_go_oldest_off_screen(&mut self) -> bool {
        let Some(a) = self.attempts.values_mut().find(|a| !a.off_screen_let_go) else {
            return false;
        };
        a.let_go_off_screen();
        true
    }

    fn drop_old_attempts(&mut self) -> bool {
        self.attempts.len() > 2 && self.attempts.pop_first().is_some()
    }

    fn fewer_buckets(&mut self) -> bool {
        if self.buckets <= MIN_BUCKETS {
            return false;
        }
        self.buckets = (self.buckets / 2).max(MIN_BUCKETS);
        for a in self.attempts.values_mut() {
            a.bands.iter_mut().for_each(|b| b.shrink_to(self.buckets));
            for track in a
                .pods
                .values_mut()
                .flat_map(|p| p.tracks.iter_mut().flatten())
            {
                if let Track::Full(s) = track {
                    s.shrink_to(self.buckets);
                }
            }
        }
        true
    }

    /// Forgets the pods off screen altogether, in the oldest attempt that still has some.
    fn drop_off_screen(&mut self) -> bool {
        let Some(a) = self.attempts.values_mut().find(|a| !a.off_screen_dropped) else {
            return false;
        };
        a.off_screen_dropped = true;
        let on_screen = &a.on_screen;
        a.pods.retain(|name, _| on_screen.contains(name.as_str()));
        true
    }

    fn keep_newest_only(&mut self) -> bool {
        self.attempts.len() > 1 && self.attempts.pop_first().is_some()
    }
}
