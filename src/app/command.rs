//! Side effects `App::update` asks for. Workers carry them out and answer with events.

/// What to start. Mutating commands pass one gate in `App::update` (read-only mode).
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    CreateCluster,
    DeleteCluster,
    LaunchJob,
    RetryJob,
    /// Delete one attempt (a Job Gantry made), with its pods.
    DeleteAttempt(String),
    DeletePod(String),
    /// Follow the logs of one attempt: every pod, or only the one named; `previous` reads the
    /// previous container's logs instead.
    FollowLogs {
        attempt: String,
        pod: Option<String>,
        previous: bool,
        /// The logs pane's generation: events of an older follow are dropped.
        generation: u64,
    },
}

impl Command {
    /// Whether the command changes anything in the cloud (refused under `--read-only`).
    pub fn mutates(&self) -> bool {
        !matches!(self, Command::FollowLogs { .. })
    }

    pub fn describe(&self) -> String {
        match self {
            Command::CreateCluster => "create the cluster".into(),
            Command::DeleteCluster => "delete the cluster".into(),
            Command::LaunchJob => "launch the Job".into(),
            Command::RetryJob => "retry the Job".into(),
            Command::DeleteAttempt(n) => format!("delete attempt {n}"),
            Command::DeletePod(n) => format!("delete pod {n}"),
            Command::FollowLogs { attempt, .. } => format!("follow the logs of {attempt}"),
        }
    }
}
