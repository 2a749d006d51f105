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

use crate::cli::Subcommand;
use crate::connect::Target;

/// The one read-only gate of the command line: every command that would change the cloud is
/// refused here, before it connects to anything.
pub async fn run(command: Subcommand, target: &Target, read_only: bool, sim: bool) -> Result<i32> {
    if sim
        && !matches!(
            command,
            Subcommand::Config
                | Subcommand::Watch
                | Subcommand::Serve(_)
                | Subcommand::Metrics(_)
                | Subcommand::Plan(_)
        )
    {
        crate::errln!(
            "gantry: --sim runs the TUI on a simulated cloud of its own; for `gantry {}`, run `gantry sim --state-dir DIR` in another terminal, then pass --gke-endpoint URL --access-token-file DIR/token --project demo-project --location us-central1-a (or KUBECONFIG=DIR/kubeconfig with --context)",
            command.name()
        );
        return Ok(2);
    }
    // The config file can ask for read-only too; a file that cannot be read is the command's
    // own error to report.
    let read_only = read_only || crate::connect::load_config(target).is_ok_and(|c| c.read_only);
    if read_only && let Some(what) = command.mutation() {
        crate::errln!(
            "gantry: --read-only: refusing to {what}; run without --read-only to change anything"
        );
        return Ok(2);
    }
    let change = command.audit_kind().zip(command.mutation());
    let code = dispatch(command, target, sim).await;
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

async fn dispatch(command: Subcommand, target: &Target, sim: bool) -> Result<i32> {
    match command {
        #[cfg(feature = "sim")]
        Subcommand::Sim(_) => Ok(0),
        Subcommand::Completions { .. } | Subcommand::Watch | Subcommand::Serve(_) => Ok(0),
        Subcommand::Up(args) => Ok(up::run(args, target).await),
        Subcommand::Status(args) => Ok(status::run(args, target).await),
        Subcommand::Plan(args) => Ok(plan::run(args, target, sim).await),
        Subcommand::Down(args) => Ok(down::run(args, target).await),
        Subcommand::Launch(args) => Ok(launch::run(args, target).await),
        Subcommand::Retry(args) => Ok(retry::run(args, target).await),
        Subcommand::Logs(args) => Ok(logs::run(args, target).await),
        Subcommand::Metrics(args) => Ok(metrics::run(args, target)),
        Subcommand::Delete(args) => Ok(delete::run(args, target).await),
        Subcommand::Config => Ok(show_config::run(target)),
    }
}
