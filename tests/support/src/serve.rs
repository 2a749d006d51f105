//! `gantry --sim --time-scale 0.01 serve` as a child process on a port of its own, with keys made
//! by `ssh-keygen` for a viewer, an operator and a stranger, and the real OpenSSH client's
//! command lines to reach it. The host key is kept in the fixture's directory, so a restart
//! serves the same one.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Only a guard against a server that never starts.
const HANG_GUARD: Duration = crate::WAIT_BOUND;

pub struct Served {
    child: Child,
    pub port: u16,
    pub dir: tempfile::TempDir,
    args: Vec<String>,
    env: Vec<(String, String)>,
    lines: Arc<(Mutex<Vec<String>>, Condvar)>,
}

/// The keys of the fixture.
pub const VIEWER: &str = "viewer";
pub const OPERATOR: &str = "operator";
pub const STRANGER: &str = "stranger";

/// Makes an Ed25519 key pair `dir/NAME` and `dir/NAME.pub` with `ssh-keygen`.
pub fn keygen(dir: &Path, name: &str) {
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(dir.join(name))
        .status()
        .expect("ssh-keygen runs")
        .success();
    assert!(ok, "ssh-keygen makes a key");
}

/// Whether the OpenSSH client is here (it is on every machine CI runs on); where it is not, a
/// test skips, saying so, unless `GANTRY_REQUIRE_SSH=1` makes that a failure (as CI does).
pub fn ssh_available() -> bool {
    let present = Command::new("ssh").arg("-V").output().is_ok()
        && Command::new("ssh-keygen").arg("-?").output().is_ok();
    if !present {
        assert!(
            std::env::var("GANTRY_REQUIRE_SSH").as_deref() != Ok("1"),
            "GANTRY_REQUIRE_SSH=1 but the OpenSSH client (ssh, ssh-keygen) is not installed"
        );
        eprintln!(
            "skipping: the OpenSSH client is not installed (set GANTRY_REQUIRE_SSH=1 to make this a failure)"
        );
    }
    present
}

impl Served {
    /// Starts the server with `args` after `serve` (and global flags before it in `global`).
    pub fn start(global: &[&str], args: &[&str]) -> Served {
        Self::start_with_env(&[], global, args)
    }

    /// The same, with `env` set for the server.
    pub fn start_with_env(env: &[(&str, &str)], global: &[&str], args: &[&str]) -> Served {
        let dir = tempfile::tempdir().unwrap();
        for key in [VIEWER, OPERATOR, STRANGER] {
            keygen(dir.path(), key);
        }
        std::fs::copy(
            dir.path().join(format!("{VIEWER}.pub")),
            dir.path().join("authorized_keys"),
        )
        .unwrap();
        std::fs::copy(
            dir.path().join(format!("{OPERATOR}.pub")),
            dir.path().join("operators"),
        )
        .unwrap();
        let mut all: Vec<String> = ["--sim", "--time-scale", "0.01"]
            .iter()
            .chain(global)
            .map(|s| s.to_string())
            .collect();
        all.push("serve".into());
        all.extend(["--ssh-listen".into(), "127.0.0.1:0".into()]);
        for (flag, file) in [
            ("--authorized-keys", "authorized_keys"),
            ("--operators", "operators"),
            ("--host-key", "host_key"),
        ] {
            all.push(flag.into());
            all.push(dir.path().join(file).display().to_string());
        }
        all.extend(args.iter().map(|s| s.to_string()));
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let (child, port, lines) = spawn(dir.path(), &all, &env);
        Served {
            child,
            port,
            dir,
            args: all,
            env,
            lines,
        }
    }

    /// Stops the server (SIGTERM, as systemd does) and starts it again on the same files.
    pub fn restart(&mut self) {
        self.stop();
        let (child, port, lines) = spawn(self.dir.path(), &self.args, &self.env);
        self.child = child;
        self.port = port;
        self.lines = lines;
    }

    /// SIGTERM, and its exit status.
    pub fn stop(&mut self) -> Option<i32> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        self.child.wait().ok().and_then(|s| s.code())
    }

    /// The server's process id (for its memory and descriptors, read from /proc).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A line of `/proc/<pid>/status` in kB (`VmRSS`, `RssAnon`).
    pub fn status_kb(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{field}:")))
            .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no {field} in /proc/{}/status", self.pid()))
    }

    /// Descriptors the server holds open.
    pub fn open_descriptors(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .unwrap()
            .count()
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `ssh` with `key`, to this server, the host key checked against the fixture's
    /// known_hosts (learnt on first use, under one alias whatever the port).
    pub fn ssh(&self, key: &str, options: &str) -> String {
        format!(
            "ssh -p {port} -i {key} -o IdentitiesOnly=yes -o IdentityAgent=none -o BatchMode=yes -o HostKeyAlias=gantry-serve -o UserKnownHostsFile={known} -o StrictHostKeyChecking=accept-new {options} 127.0.0.1",
            port = self.port,
            key = self.path(key).display(),
            known = self.path("known_hosts").display(),
        )
    }

    /// Everything the server wrote to stderr so far (its connection log).
    pub fn log(&self) -> String {
        self.lines.0.lock().unwrap().join("\n")
    }

    /// Waits until the server's log has a line with every one of `wanted`.
    pub fn wait_for_log(&self, wanted: &[&str]) -> String {
        wait_for_lines(&self.lines, wanted, 1).remove(0)
    }

    /// Waits (bounded) until `count` lines of the server's log hold every string of `wanted`:
    /// the lines, in order.
    pub fn wait_for_logs(&self, wanted: &[&str], count: usize) -> Vec<String> {
        wait_for_lines(&self.lines, wanted, count)
    }
}

type Lines = Arc<(Mutex<Vec<String>>, Condvar)>;

/// Said by the reader when the server's stderr closes.
const ENDED: &str = "<gantry serve ended>";

fn wait_for_lines(lines: &Lines, wanted: &[&str], count: usize) -> Vec<String> {
    let (lines, changed) = &**lines;
    let mut lines = lines.lock().unwrap();
    loop {
        let found: Vec<String> = lines
            .iter()
            .filter(|l| wanted.iter().all(|w| l.contains(w)))
            .take(count)
            .cloned()
            .collect();
        if found.len() == count {
            return found;
        }
        assert!(
            !lines.iter().any(|l| l == ENDED),
            "gantry serve ended without saying {wanted:?} {count} times:\n{}",
            lines.join("\n")
        );
        let (next, timeout) = changed.wait_timeout(lines, HANG_GUARD).unwrap();
        assert!(
            !timeout.timed_out(),
            "the log never said {wanted:?} {count} times"
        );
        lines = next;
    }
}

fn spawn(dir: &Path, args: &[String], env: &[(String, String)]) -> (Child, u16, Lines) {
    let mut child = Command::new(crate::gantry_bin())
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("HOME", dir.join("home"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env_remove("GANTRY_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gantry serve starts");
    let lines: Lines = Arc::new((Mutex::new(Vec::new()), Condvar::new()));
    let stderr = child.stderr.take().unwrap();
    let sink = lines.clone();
    std::thread::spawn(move || {
        let (all, changed) = &*sink;
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            all.lock().unwrap().push(line);
            changed.notify_all();
        }
        all.lock().unwrap().push(ENDED.into());
        changed.notify_all();
    });
    let line = wait_for_lines(&lines, &["listening on 127.0.0.1:"], 1).remove(0);
    let port = line
        .split("listening on 127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    (child, port, lines)
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
