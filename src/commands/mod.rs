//! One file per subcommand; each returns the process's exit code
//! (0 done, 1 the cloud said no or the work failed, 2 bad input).

pub mod delete;
pub mod down;
pub mod launch;
pub mod logs;
pub mod retry;
pub mod show_config;
pub mod sim;
pub mod status;
pub mod up;

use color_eyre::eyre::Result;

use crate::cli::{Command, TargetArgs};

pub async fn run(command: Command, target: &TargetArgs, read_only: bool) -> Result<i32> {
    match command {
        Command::Sim(_) | Command::Completions { .. } => Ok(0),
        Command::Up(args) => Ok(up::run(args, target, read_only).await),
        Command::Status(args) => Ok(status::run(args, target).await),
        Command::Down(args) => Ok(down::run(args, target, read_only).await),
        Command::Launch(args) => Ok(launch::run(args, target, read_only).await),
        Command::Retry(args) => Ok(retry::run(args, target, read_only).await),
        Command::Logs(args) => Ok(logs::run(args, target).await),
        Command::Delete(args) => Ok(delete::run(args, target, read_only).await),
        Command::Config => Ok(show_config::run(target)),
    }
}
