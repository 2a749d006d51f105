//! Terminal UI (in progress).

use color_eyre::eyre::{Result, eyre};

pub async fn run(_cli: &crate::cli::Cli) -> Result<i32> {
    Err(eyre!("the terminal UI is not built yet"))
}
