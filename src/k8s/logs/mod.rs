//! Following the logs of every pod of a Job attempt (as stern does): one stream per pod, new
//! pods picked up as they start, each stream resumed after a drop without losing or repeating a
//! line, and every line appended to a file per pod under the state directory.
//!
//! ```text
//! LogTail::follow(client, target, options) ──► TailEvent::{PodStarted, Lines, Reconnecting,
//!                                                         PodEnded, SaveFailed, SavedByAnother,
//!                                                         WatchTrouble, WatchRecovered}
//!   .stop_pod(pod)  .cancel()  (dropping the LogTail cancels too)
//! ```

pub mod lines;
pub mod pod_stream;
pub mod saved;
pub mod sink;
pub mod tail;
pub mod timestamp;

use std::path::PathBuf;

use bytes::Bytes;

use crate::paths::path_component;

pub use lines::{Cursor, LineReader};
pub use tail::{LogTail, TailHandle, TailOptions, TailTarget};

/// One line of a container's log (or a fragment of a very long one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// When the container wrote it, in nanoseconds since the Unix epoch (None if the server did
    /// not say).
    pub ts: Option<i128>,
    /// The line's bytes without the newline: anything at all, escape sequences and invalid
    /// UTF-8 included; sanitise before drawing.
    pub bytes: Bytes,
    /// The line goes on in the next `LogLine` of this pod (lines over 256 KiB come in pieces).
    pub continues: bool,
}

impl LogLine {
    pub fn timestamp(&self) -> Option<jiff::Timestamp> {
        jiff::Timestamp::from_nanosecond(self.ts?).ok()
    }
}

/// Why a pod's stream ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEnd {
    /// The container terminated and every line was read.
    Completed,
    /// The pod was deleted while followed: its stopped container's log was read to the end, or
    /// the pod was already gone (its logs went with it).
    PodDeleted,
    /// `stop_pod` or `cancel` asked for it.
    Stopped,
    /// The server refused the logs for a reason a retry would not fix.
    Failed(String),
}

/// What a `LogTail` sends.
#[derive(Debug, Clone, PartialEq)]
pub enum TailEvent {
    /// A pod's container started and its stream opened for the first time.
    PodStarted { pod: String },
    /// Lines of one pod, in order.
    Lines { pod: String, lines: Vec<LogLine> },
    /// A pod's stream dropped; it resumes after a back-off from where it was.
    Reconnecting { pod: String, error: String },
    /// A pod's stream is over.
    PodEnded { pod: String, why: StreamEnd },
    /// The pod's log file could not be written; the stream goes on, unsaved.
    SaveFailed { pod: String, error: String },
    /// Another tail holds the pod's log file (another Gantry following the same Job, or
    /// `gantry logs -f` beside the TUI) and saves its lines: this one shows them, unsaved.
    SavedByAnother { pod: String },
    /// The watch of the attempt's pods failed: pods that start meanwhile are not picked up until
    /// `WatchRecovered`. The streams already open go on.
    WatchTrouble { error: String },
    /// After `WatchTrouble`: the pod watch is back and has listed the pods again (any started
    /// meanwhile are followed now).
    WatchRecovered,
}

/// Where the pods of `job` on `cluster` save their logs: `<state>/logs/<cluster>/<job>/`.
pub fn logs_dir(cluster: &str, job: &str) -> Option<PathBuf> {
    crate::paths::state_dir().map(|d| {
        d.join("logs")
            .join(path_component(cluster))
            .join(path_component(job))
    })
}
