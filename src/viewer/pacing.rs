//! How often frames that only new log lines caused may be drawn. A key is answered at once
//! whatever this says; a trickle of lines is shown at once too (the last frame is long past);
//! under a flood the screen follows at this rate, the newest line on it within one interval.
//! Over SSH every byte crosses a link someone pays for in latency: fewer frames there.

use std::time::Duration;

use crate::config::{MAX_FPS_HIGHEST, MAX_FPS_LOWEST};

/// At most this many frames a second from log lines alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pacing {
    pub max_fps: u32,
}

impl Pacing {
    /// The settings' rate (`--max-fps`, else the config's), else the default for where the
    /// screen is (`default_max_fps`).
    pub fn resolve(settled: Option<u32>, over_ssh: bool) -> Pacing {
        Pacing {
            max_fps: settled.unwrap_or_else(|| default_max_fps(over_ssh)),
        }
    }

    pub fn interval(self) -> Duration {
        Duration::from_millis(1000 / u64::from(self.max_fps.clamp(MAX_FPS_LOWEST, MAX_FPS_HIGHEST)))
    }

    /// When the next frame may be drawn: at once for a key's answer (`urgent`), else one
    /// interval after the last.
    pub fn next_frame(
        self,
        last_frame: tokio::time::Instant,
        urgent: bool,
    ) -> tokio::time::Instant {
        if urgent {
            last_frame
        } else {
            last_frame + self.interval()
        }
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

    #[test]
    fn the_settings_rate_beats_the_default_for_the_screen() {
        assert_eq!(Pacing::resolve(Some(20), true).max_fps, 20);
        assert_eq!(Pacing::resolve(None, true).max_fps, 4);
        assert_eq!(Pacing::resolve(None, false).max_fps, 10);
    }

    #[test]
    fn the_interval_follows_the_rate_and_stays_sane() {
        assert_eq!(Pacing { max_fps: 4 }.interval(), Duration::from_millis(250));
        assert_eq!(
            Pacing { max_fps: 10 }.interval(),
            Duration::from_millis(100)
        );
        assert_eq!(Pacing { max_fps: 0 }.interval(), Duration::from_secs(1));
    }
}
