//! How often frames that only new log lines caused may be drawn. A key is answered at once
//! whatever this says; a trickle of lines is shown at once too (the last frame is long past);
//! under a flood the screen follows at this rate, the newest line on it within one interval.
//! Over SSH every byte crosses a link someone pays for in latency: fewer frames there.
//!
//! The pace adapts to the flow where nobody chose a rate: once several frames in a row each
//! found lines already waiting for their turn (lines come faster than frames), the screen
//! follows at `FLOOD_FPS` — each frame then carries more lines for about the bytes and the work
//! of one, and the newest line is still on screen within `1 / FLOOD_FPS`, under the 250 ms a
//! peer ticks at. The first frame that had to wait for a line ends the flood.

use std::time::Duration;

use crate::config::{MAX_FPS_HIGHEST, MAX_FPS_LOWEST};

/// Frames a second while lines flood in, where no rate was chosen.
pub const FLOOD_FPS: u32 = 5;
/// Frames in a row that found lines waiting before the flood's pace is taken.
const FLOOD_AFTER: u32 = 5;

/// At most this many frames a second from log lines alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pacing {
    pub max_fps: u32,
    /// The rate a flood is followed at (`None`: `max_fps` whatever the flow, as when the rate
    /// was chosen, or is already as low).
    pub flood_fps: Option<u32>,
}

impl Pacing {
    /// The settings' rate (`--max-fps`, else the config's), kept whatever the flow; else the
    /// default for where the screen is (`default_max_fps`), easing to `FLOOD_FPS` in a flood.
    pub fn resolve(settled: Option<u32>, over_ssh: bool) -> Pacing {
        match settled {
            Some(max_fps) => Pacing {
                max_fps,
                flood_fps: None,
            },
            None => {
                let max_fps = default_max_fps(over_ssh);
                Pacing {
                    max_fps,
                    flood_fps: (max_fps > FLOOD_FPS).then_some(FLOOD_FPS),
                }
            }
        }
    }

    pub fn interval(self) -> Duration {
        every(self.max_fps)
    }

    /// When the next frame may be drawn: at once for a key's answer (`urgent`), else one
    /// interval after the last — the flood's while `flow` says lines come faster than frames.
    pub fn next_frame(
        self,
        last_frame: tokio::time::Instant,
        urgent: bool,
        flow: &Flow,
    ) -> tokio::time::Instant {
        if urgent {
            return last_frame;
        }
        match self.flood_fps {
            Some(fps) if flow.flooding() => last_frame + every(fps).max(self.interval()),
            _ => last_frame + self.interval(),
        }
    }
}

fn every(fps: u32) -> Duration {
    Duration::from_millis(1000 / u64::from(fps.clamp(MAX_FPS_LOWEST, MAX_FPS_HIGHEST)))
}

/// Whether lines come faster than frames: how many frames in a row found lines waiting.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Flow {
    waited_in_a_row: u32,
}

impl Flow {
    /// After a frame: whether lines (the world's news) had been waiting for its turn, rather
    /// than the frame drawn as they came. A key's frame says nothing of the flow.
    pub fn after_frame(&mut self, lines_waited: bool) {
        self.waited_in_a_row = if lines_waited {
            self.waited_in_a_row.saturating_add(1)
        } else {
            0
        };
    }

    pub fn flooding(&self) -> bool {
        self.waited_in_a_row >= FLOOD_AFTER
    }
}

/// 10 frames a second on a local terminal, 4 under SSH (`SSH_CONNECTION`, `SSH_TTY`) and for
/// every viewer of `gantry serve`.
pub fn default_max_fps(over_ssh: bool) -> u32 {
    if over_ssh { 4 } else { 10 }
}

/// Whether this process's terminal is an SSH client's.
pub fn local_terminal_is_remote() -> bool {
    std::env::var_os("SSH_CONNECTION").is_some() || std::env::var_os("SSH_TTY").is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(max_fps: u32) -> Pacing {
        Pacing {
            max_fps,
            flood_fps: None,
        }
    }

    #[test]
    fn the_settings_rate_beats_the_default_for_the_screen() {
        assert_eq!(Pacing::resolve(Some(20), true).max_fps, 20);
        assert_eq!(Pacing::resolve(None, true).max_fps, 4);
        assert_eq!(Pacing::resolve(None, false).max_fps, 10);
    }

    #[test]
    fn the_interval_follows_the_rate_and_stays_sane() {
        assert_eq!(at(4).interval(), Duration::from_millis(250));
        assert_eq!(at(10).interval(), Duration::from_millis(100));
        assert_eq!(at(0).interval(), Duration::from_secs(1));
    }

    fn flooded() -> Flow {
        let mut flow = Flow::default();
        for _ in 0..FLOOD_AFTER {
            flow.after_frame(true);
        }
        flow
    }

    #[test]
    fn a_flood_of_lines_eases_the_default_local_pace_and_the_first_wait_ends_it() {
        let pacing = Pacing::resolve(None, false);
        let last = tokio::time::Instant::now();
        let mut flow = Flow::default();
        for _ in 1..FLOOD_AFTER {
            flow.after_frame(true);
            assert_eq!(
                pacing.next_frame(last, false, &flow),
                last + Duration::from_millis(100),
                "a few frames behind is not yet a flood"
            );
        }
        flow.after_frame(true);
        assert!(flow.flooding());
        assert_eq!(
            pacing.next_frame(last, false, &flow),
            last + Duration::from_millis(200)
        );
        assert_eq!(pacing.next_frame(last, true, &flow), last, "a key at once");
        flow.after_frame(false);
        assert_eq!(
            pacing.next_frame(last, false, &flow),
            last + Duration::from_millis(100)
        );
    }

    #[test]
    fn a_chosen_rate_and_the_ssh_pace_are_kept_in_a_flood() {
        let last = tokio::time::Instant::now();
        let chosen = Pacing::resolve(Some(30), false);
        assert_eq!(
            chosen.next_frame(last, false, &flooded()),
            last + Duration::from_millis(33)
        );
        let over_ssh = Pacing::resolve(None, true);
        assert_eq!(
            over_ssh.next_frame(last, false, &flooded()),
            last + Duration::from_millis(250)
        );
    }
}
