//! One file per subcommand; each returns the process's exit code.

pub mod sim;
