//! One run of a process container: the program started in a process group of its own with
//! exactly the environment it is given, its stdout and stderr cut into the container's log as
//! the runtime cuts them, signals sent as a container runtime sends them (SIGTERM to the
//! program, as to a container's PID 1; SIGKILL to all it started, as when a container's
//! namespace goes), and nothing of it left behind: the group is killed when the run ends or is
//! dropped, and on Linux the program dies with the thread that started it, so a simulator that
//! is killed outright takes its pods with it.

use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::task::JoinHandle;

use crate::kube::logbook::LogStream;
use crate::kube::training_log::sink::LineSink;

/// What to run: the program, its arguments, its whole environment and where.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
}

/// How long the log is read after the program exits, for output still in the pipes; a
/// process that left the group and holds them open cannot keep the container from ending.
const DRAIN: Duration = Duration::from_secs(2);

#[derive(Debug)]
pub struct Running {
    child: tokio::process::Child,
    /// The program's pid, which is also its process group's id.
    pid: Option<u32>,
    pumps: Vec<JoinHandle<()>>,
}

impl Running {
    /// Starts the program; its output goes to `log` from the first byte.
    pub fn spawn(launch: &Launch, log: Arc<LogStream>) -> std::io::Result<Self> {
        let mut command = tokio::process::Command::new(&launch.program);
        command
            .args(&launch.args)
            .env_clear()
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&launch.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        #[cfg(target_os = "linux")]
        // SAFETY: prctl(2) is async-signal-safe and touches no memory of the parent's.
        unsafe {
            command.pre_exec(|| {
                nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
                    .map_err(std::io::Error::from)
            });
        }
        let mut child = command.spawn()?;
        let mut pumps = Vec::new();
        if let Some(out) = child.stdout.take() {
            pumps.push(tokio::spawn(pump(out, log.clone())));
        }
        if let Some(err) = child.stderr.take() {
            pumps.push(tokio::spawn(pump(err, log)));
        }
        Ok(Self {
            pid: child.id(),
            child,
            pumps,
        })
    }

    /// SIGTERM to the program, as the runtime stops a container.
    pub fn terminate(&self) {
        #[cfg(unix)]
        if let Some(pid) = self.pid.and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
    }

    /// SIGKILL to the program and every process it started that stayed in its group.
    pub fn kill(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self.pid.and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let _ = self.child.start_kill();
    }

    /// Waits for the program to exit, then ends what it left running and reads the rest of its
    /// output; its exit code as the runtime reports it (128 + the signal that killed it).
    pub async fn wait(&mut self) -> i32 {
        let status = self.child.wait().await;
        // The container's PID 1 is gone: so is everything else in it. Then its pid is
        // forgotten: once its group is empty the number may be another process's.
        self.kill();
        self.pid = None;
        let pumps = std::mem::take(&mut self.pumps);
        let drained = futures::future::join_all(pumps);
        if tokio::time::timeout(DRAIN, drained).await.is_err() {
            tracing::debug!("a process pod's output pipes stayed open after it exited");
        }
        match status {
            Ok(status) => exit_code(status),
            Err(_) => 128 + 9,
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.kill();
        for pump in &self.pumps {
            pump.abort();
        }
    }
}

fn exit_code(status: ExitStatus) -> i32 {
    if let Some(code) = status.code() {
        return code;
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return 128 + signal;
        }
    }
    128 + 9
}

/// Copies one output pipe into the log, cut into lines as containerd cuts them.
async fn pump(mut from: impl AsyncRead + Unpin, log: Arc<LogStream>) {
    let mut sink = LineSink::default();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                sink.write(&buf[..n]);
                let pieces = sink.take();
                if !pieces.is_empty() {
                    log.push_pieces(pieces);
                }
            }
        }
    }
    sink.finish();
    log.push_pieces(sink.take());
}
