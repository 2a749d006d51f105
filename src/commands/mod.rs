//! One file per subcommand; each returns the process's exit code
//! (0 done, 1 the cloud said no or the work failed, 2 bad input; `plan --exit-code`: 3 changes).

mod alongside;
pub mod code;
mod connect;
pub mod delete;
pub mod down;
pub mod launch;
pub mod logs;
pub mod metrics;
pub mod notify;
pub mod plan;
pub mod retry;
pub mod serve;
pub mod show_config;
#[cfg(feature = "sim")]
pub mod sim;
pub mod status;
pub mod stop_signals;
pub mod up;
mod up_apply;
mod up_progress;
mod up_watcher;
pub mod watch;
pub mod watcher;
mod watcher_ssh;

use color_eyre::eyre::Result;

use crate::cli::{Cli, Subcommand};
use crate::config::ConfigError;
use crate::settings::Settings;

/// The one dispatcher: the TUI when no subcommand is given, else the subcommand. The settings
/// are resolved once (flags over the config file) for everything but `sim` and `completions`,
/// which read no config; a command that would change the cloud meets the command line's one
/// read-only gate before it connects to anything, and its changes are audited.
pub async fn run(cli: Cli) -> Result<i32> {
    let settings = Settings::resolve(cli.asked());
    let Some(command) = cli.command else {
        return match settings {
            Ok(settings) => on_heap(|| crate::tui::run(settings)).await,
            Err(e) => Ok(config_error(&e)),
        };
    };
    if cli.sim && !runs_on_sim(&command) {
        crate::errln!(
            "gantry: --sim runs the TUI on a simulated cloud of its own; for `gantry {}`, run `gantry sim --state-dir DIR` in another terminal, then pass --gke-endpoint URL --access-token-file DIR/token --project demo-project --location us-central1-a (or KUBECONFIG=DIR/kubeconfig with --context)",
            command.name()
        );
        return Ok(2);
    }
    let change = command.audit_kind().zip(command.mutation());
    let settled = Settled {
        settings,
        mutation: command.mutation(),
    };
    let code = match command {
        #[cfg(feature = "sim")]
        Subcommand::Sim(args) => {
            crate::logging::to_stderr();
            let options = crate::cli::sim_options(
                &args,
                cli.time_scale,
                &cli.faults,
                cli.replay_dir.as_deref(),
                &cli.run_images,
                cli.run_code,
            );
            return on_heap(|| sim::run(&args, options)).await;
        }
        Subcommand::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut command, "gantry", &mut std::io::stdout());
            return Ok(0);
        }
        Subcommand::Watch(args) => settled.run(async |s| watch::run(args, s).await).await,
        Subcommand::Serve(args) => settled.run(async |s| serve::run(args, s).await).await,
        Subcommand::Up(args) => settled.run(async |s| up::run(args, &s).await).await,
        Subcommand::Status(args) => settled.run(async |s| status::run(args, &s).await).await,
        Subcommand::Plan(args) => settled.run(async |s| plan::run(args, &s).await).await,
        Subcommand::Down(args) => settled.run(async |s| down::run(args, &s).await).await,
        Subcommand::Launch(args) => settled.run(async |s| launch::run(args, &s).await).await,
        Subcommand::Retry(args) => settled.run(async |s| retry::run(args, &s).await).await,
        Subcommand::Logs(args) => settled.run(async |s| logs::run(args, &s).await).await,
        Subcommand::Metrics(args) => settled.run(async |s| metrics::run(args, &s)).await,
        Subcommand::Code(args) => settled.run(async |s| code::run(args, &s).await).await,
        Subcommand::Delete(args) => settled.run(async |s| delete::run(args, &s).await).await,
        Subcommand::Notify(args) => settled.run(async |s| notify::run(args, &s).await).await,
        Subcommand::Watcher(args) => settled.run(async |s| watcher::run(args, &s).await).await,
        Subcommand::Config => settled.run(async |s| show_config::run(&s)).await,
    };
    // The command line's changes go in the same audit file as the engine's, with the local user.
    let code = match code {
        Ok(code) => code,
        // Never ran (a bad config, or refused by read-only): nothing to audit.
        Err(code) => return Ok(code),
    };
    if let Some((kind, what)) = change {
        let audit = crate::paths::state_dir()
            .map(|d| crate::engine::audit::Audit::to_file(d.join(crate::paths::AUDIT_FILE)))
            .unwrap_or_default();
        let result = match code {
            0 => "done".to_string(),
            n => format!("exit {n}"),
        };
        audit.record_change(&crate::engine::Principal::local(), kind, what, &result);
    }
    Ok(code)
}

/// The settings a one-shot command runs with, once they are known to be good and to allow it.
struct Settled {
    settings: Result<Settings, ConfigError>,
    /// What the command would change, if anything.
    mutation: Option<&'static str>,
}

impl Settled {
    /// Runs `command` with the settings; a bad config or a change under read-only is said, and
    /// the command never runs (`Err` with its exit code).
    async fn run(self, command: impl AsyncFnOnce(Settings) -> i32) -> Result<i32, i32> {
        let settings = match self.settings {
            Ok(s) => s,
            Err(e) => {
                return Err(config_error(&e));
            }
        };
        if let Some(what) = self.mutation
            && settings.read_only()
        {
            crate::errln!(
                "gantry: --read-only: refusing to {what}; run without --read-only (and without the config's read-only = true) to change anything"
            );
            return Err(2);
        }
        Ok(on_heap(move || command(settings)).await)
    }
}

/// A command's future, made on the heap in a frame of its own. An `async fn`'s future is as
/// large as its largest state (tens of KB for the TUI, `serve` or `up`: the GKE client's
/// `Cluster` alone is several), and it is made on the stack before it is moved anywhere. Made
/// in `run`, every command's state would be in `run`'s future and its frame, under every frame
/// the command ever has; the stack's pages stay resident once touched (the idle TUI's stack
/// was 560 KB).
#[inline(never)]
fn on_heap<F: Future>(make: impl FnOnce() -> F) -> std::pin::Pin<Box<F>> {
    Box::pin(make())
}

fn config_error(e: &ConfigError) -> i32 {
    crate::errln!("gantry: {e}");
    2
}

/// Whether `command` can run beside `--sim`: those that need a cloud of their own cannot.
fn runs_on_sim(command: &Subcommand) -> bool {
    match command {
        #[cfg(feature = "sim")]
        Subcommand::Sim(_) => true,
        Subcommand::Completions { .. }
        | Subcommand::Config
        | Subcommand::Watch(_)
        | Subcommand::Serve(_)
        | Subcommand::Metrics(_)
        | Subcommand::Notify(_)
        | Subcommand::Plan(_) => true,
        Subcommand::Up(_)
        | Subcommand::Status(_)
        | Subcommand::Down(_)
        | Subcommand::Launch(_)
        | Subcommand::Retry(_)
        | Subcommand::Logs(_)
        | Subcommand::Code(_)
        | Subcommand::Watcher(_)
        | Subcommand::Delete(_) => false,
    }
}
