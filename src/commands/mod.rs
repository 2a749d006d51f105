//! One file per subcommand; each returns the process's exit code
//! (0 done, 1 the cloud said no or the work failed, 2 bad input; `plan --exit-code`: 3 changes).

mod connect;
pub mod delete;
pub mod down;
pub mod launch;
pub mod logs;
pub mod metrics;
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
pub mod watch;

use color_eyre::eyre::Result;

use crate::cli::{Cli, Subcommand};
use crate::connect::Target;

/// The one dispatcher: the TUI when no subcommand is given, else the subcommand, after the
/// command line's one read-only gate (every command that would change the cloud is refused
/// before it connects to anything) and with its changes audited.
pub async fn run(cli: Cli) -> Result<i32> {
    let session = cli.session_options();
    let tui_options = cli.tui_options();
    let target: Target = (&cli.target).into();
    let log_file = cli.target.log_file.clone();
    let (read_only, sim) = (cli.read_only, cli.sim);
    #[cfg(feature = "sim")]
    let simulated = (cli.time_scale, cli.faults.clone(), cli.replay_dir.clone());
    let Some(command) = cli.command else {
        return crate::tui::run(tui_options).await;
    };
    if let Some(code) = refused(&command, &target, read_only, sim) {
        return Ok(code);
    }
    let change = command.audit_kind().zip(command.mutation());
    let code: Result<i32> = match command {
        #[cfg(feature = "sim")]
        Subcommand::Sim(args) => {
            crate::logging::to_stderr();
            let (time_scale, faults, replay_dir) = simulated;
            let options =
                crate::cli::sim_options(&args, time_scale, &faults, replay_dir.as_deref());
            sim::run(&args, options).await
        }
        Subcommand::Watch => Ok(watch::run(session, log_file.as_deref()).await),
        Subcommand::Serve(args) => Ok(serve::run(args, tui_options).await),
        Subcommand::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut command, "gantry", &mut std::io::stdout());
            Ok(0)
        }
        Subcommand::Up(args) => Ok(up::run(args, &target).await),
        Subcommand::Status(args) => Ok(status::run(args, &target).await),
        Subcommand::Plan(args) => Ok(plan::run(args, &target, sim).await),
        Subcommand::Down(args) => Ok(down::run(args, &target).await),
        Subcommand::Launch(args) => Ok(launch::run(args, &target).await),
        Subcommand::Retry(args) => Ok(retry::run(args, &target).await),
        Subcommand::Logs(args) => Ok(logs::run(args, &target).await),
        Subcommand::Metrics(args) => Ok(metrics::run(args, &target)),
        Subcommand::Delete(args) => Ok(delete::run(args, &target).await),
        Subcommand::Config => Ok(show_config::run(&target)),
    };
    // The command line's changes go in the same audit file as the engine's, with the local user.
    if let Some((kind, what)) = change {
        let audit = crate::paths::state_dir()
            .map(|d| crate::engine::audit::Audit::to_file(d.join(crate::paths::AUDIT_FILE)))
            .unwrap_or_default();
        let result = match &code {
            Ok(0) => "done".to_string(),
            Ok(n) => format!("exit {n}"),
            Err(e) => format!("failed: {}", crate::sanitize::one_line(&e.to_string())),
        };
        audit.record_change(&crate::engine::Principal::local(), kind, what, &result);
    }
    code
}

/// Why the command line refuses `command` before it runs, said, as its exit code: `--sim`
/// with a command that needs a cloud of its own, or a change under `--read-only` (or the
/// config's `read-only`).
fn refused(command: &Subcommand, target: &Target, read_only: bool, sim: bool) -> Option<i32> {
    let runs_on_sim = match command {
        #[cfg(feature = "sim")]
        Subcommand::Sim(_) => true,
        Subcommand::Completions { .. }
        | Subcommand::Config
        | Subcommand::Watch
        | Subcommand::Serve(_)
        | Subcommand::Metrics(_)
        | Subcommand::Plan(_) => true,
        Subcommand::Up(_)
        | Subcommand::Status(_)
        | Subcommand::Down(_)
        | Subcommand::Launch(_)
        | Subcommand::Retry(_)
        | Subcommand::Logs(_)
        | Subcommand::Delete(_) => false,
    };
    if sim && !runs_on_sim {
        crate::errln!(
            "gantry: --sim runs the TUI on a simulated cloud of its own; for `gantry {}`, run `gantry sim --state-dir DIR` in another terminal, then pass --gke-endpoint URL --access-token-file DIR/token --project demo-project --location us-central1-a (or KUBECONFIG=DIR/kubeconfig with --context)",
            command.name()
        );
        return Some(2);
    }
    let what = command.mutation()?;
    // The config file can ask for read-only too; a file that cannot be read is the command's
    // own error to report.
    if read_only || crate::connect::load_config(target).is_ok_and(|c| c.read_only_with(read_only)) {
        crate::errln!(
            "gantry: --read-only: refusing to {what}; run without --read-only to change anything"
        );
        return Some(2);
    }
    None
}
