//! One file per subcommand; each returns the process's exit code
//! (0 done, 1 the cloud said no or the work failed, 2 bad input).

pub mod sim;

use color_eyre::eyre::Result;

use crate::cli::{Command, TargetArgs};

pub async fn run(command: Command, target: &TargetArgs, read_only: bool) -> Result<i32> {
    let _ = (target, read_only);
    match command {
        Command::Sim(_) | Command::Completions { .. } => Ok(0),
        other => {
            eprintln!("gantry: {other:?} is not available yet");
            Ok(2)
        }
    }
}
