//! The real binary in a terminal: tmux at 80×24, keys in, screen out (`capture-pane`), against
//! the simulator it embeds (`--sim --time-scale 0.01`), in a HOME of its own.

use std::process::Command;
use std::time::{Duration, Instant};

/// Only a guard against a hung binary: screens are waited for by content, never by time.
const HANG_GUARD: Duration = crate::WAIT_BOUND;

pub struct Tmux {
    session: String,
    _home: tempfile::TempDir,
}

/// Whether tmux can be used: when it is missing, a test skips (saying so), unless
/// `GANTRY_REQUIRE_TMUX=1` makes that a failure (as CI does).
pub fn available() -> bool {
    if Command::new("tmux").arg("-V").output().is_ok() {
        return true;
    }
    assert!(
        std::env::var("GANTRY_REQUIRE_TMUX").as_deref() != Ok("1"),
        "GANTRY_REQUIRE_TMUX=1 but tmux is not installed"
    );
    eprintln!("skipping: tmux is not installed (set GANTRY_REQUIRE_TMUX=1 to make this a failure)");
    false
}

/// Waits until `screen()` shows every one of `wanted`, looking again every 50 ms (a screen has
/// no event to wait for); only a hang guard limits it. Returns the screen.
pub fn wait_for_screen(mut screen: impl FnMut() -> String, wanted: &[&str]) -> String {
    let start = Instant::now();
    loop {
        let now = screen();
        if wanted.iter().all(|w| now.contains(w)) {
            return now;
        }
        assert!(
            start.elapsed() < HANG_GUARD,
            "the screen never showed {wanted:?}:\n{now}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

impl Tmux {
    /// `gantry --sim --time-scale 0.01 --config <config> ARGS` in an 80×24 pane.
    pub fn start(name: &str, args: &str, config: &str) -> Option<Tmux> {
        Self::start_with(name, &format!("--sim --time-scale 0.01 {args}"), config, "")
    }

    /// `gantry --config <config> ARGS` with `env` (`K=V …`) added, in an 80×24 pane.
    pub fn start_with(name: &str, args: &str, config: &str, env: &str) -> Option<Tmux> {
        if !available() {
            return None;
        }
        let home = tempfile::tempdir().unwrap();
        let config_path = home.path().join("config.toml");
        std::fs::write(&config_path, config).unwrap();
        let bin = crate::gantry_bin();
        let state = home.path().join("state");
        let command = format!(
            "env HOME={home} XDG_STATE_HOME={state} TERM=xterm-256color {env} {bin} --config {config} {args}",
            home = home.path().display(),
            state = state.display(),
            bin = bin.display(),
            config = config_path.display(),
        );
        Some(Self::spawn(name, &command, (80, 24), home))
    }

    /// Any shell command in a pane of `size` (columns, rows); `GANTRY-EXIT=<status>` follows
    /// when it ends. For the clients of `gantry serve` (`ssh -tt …`).
    pub fn run(name: &str, command: &str, size: (u16, u16)) -> Option<Tmux> {
        if !available() {
            return None;
        }
        Some(Self::spawn(
            name,
            command,
            size,
            tempfile::tempdir().unwrap(),
        ))
    }

    fn spawn(name: &str, command: &str, size: (u16, u16), home: tempfile::TempDir) -> Tmux {
        let session = format!("gantry-e2e-{name}-{}", std::process::id());
        let command = format!("{command}; echo GANTRY-EXIT=$?; sleep 600");
        let ok = Command::new("tmux")
            .args([
                "-L",
                &session,
                "new-session",
                "-d",
                "-s",
                &session,
                "-x",
                &size.0.to_string(),
                "-y",
                &size.1.to_string(),
                &command,
            ])
            .status()
            .unwrap()
            .success();
        assert!(ok, "tmux starts");
        Tmux {
            session,
            _home: home,
        }
    }

    /// The process tmux runs in the pane (for SIGSTOP and SIGCONT in drills).
    pub fn pane_pid(&self) -> u32 {
        self.format("#{pane_pid}").parse().unwrap()
    }

    /// The tmux server's process: stopping it stops the reader of the pane's terminal, as a
    /// stalled link or a frozen multiplexer does.
    pub fn server_pid(&self) -> u32 {
        self.format("#{pid}").parse().unwrap()
    }

    /// A tmux format of the pane (`#{alternate_on}`, `#{cursor_flag}`…).
    pub fn format(&self, format: &str) -> String {
        let out = Command::new("tmux")
            .args([
                "-L",
                &self.session,
                "display-message",
                "-p",
                "-t",
                &self.session,
                format,
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Gantry's state directory in this session (`$XDG_STATE_HOME/gantry`): gantry.log, logs.
    pub fn state_dir(&self) -> std::path::PathBuf {
        self._home.path().join("state/gantry")
    }

    pub fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args([
                "-L",
                &self.session,
                "capture-pane",
                "-p",
                "-t",
                &self.session,
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    pub fn keys(&self, keys: &[&str]) {
        for k in keys {
            Command::new("tmux")
                .args(["-L", &self.session, "send-keys", "-t", &self.session, k])
                .status()
                .unwrap();
        }
    }

    pub fn literal(&self, text: &str) {
        Command::new("tmux")
            .args([
                "-L",
                &self.session,
                "send-keys",
                "-l",
                "-t",
                &self.session,
                text,
            ])
            .status()
            .unwrap();
    }

    /// Waits for the binary to exit (the shell then prints `GANTRY-EXIT=<status>`); its status,
    /// and the screen.
    pub fn wait_for_exit(&self) -> (i32, String) {
        let screen = self.wait_for(&["GANTRY-EXIT="]);
        let status = screen
            .split("GANTRY-EXIT=")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("no exit status on the screen:\n{screen}"));
        (status, screen)
    }

    /// Waits until the screen shows all of `wanted`, returning it.
    pub fn wait_for(&self, wanted: &[&str]) -> String {
        wait_for_screen(|| self.screen(), wanted)
    }

    /// From the first screen (`NOT CREATED`): `c`, `y` to the question, and waits until the
    /// cluster runs with no attempt yet.
    pub fn create_cluster(&self) {
        self.wait_for(&["NOT CREATED"]);
        self.keys(&["c"]);
        self.wait_for(&["Create this GKE cluster?"]);
        self.keys(&["y"]);
        self.wait_for(&["RUNNING", "No attempt yet"]);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.session, "kill-server"])
            .status();
    }
}
