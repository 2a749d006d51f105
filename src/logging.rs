//! Gantry's own diagnostics via tracing, filtered by GANTRY_LOG (or RUST_LOG).

use std::path::Path;

use tracing_subscriber::EnvFilter;

fn filter() -> EnvFilter {
    filter_or("warn")
}

fn filter_or(default: &str) -> EnvFilter {
    std::env::var("GANTRY_LOG")
        .ok()
        .and_then(|v| EnvFilter::try_new(v).ok())
        .or_else(|| EnvFilter::try_from_default_env().ok())
        .unwrap_or_else(|| EnvFilter::new(default))
}

/// The log file, appended to: `path`, else the state directory's `gantry.log`. None when there
/// is no such place or it cannot be opened (Gantry then logs nowhere rather than fail).
fn open_log(path: Option<&Path>) -> Option<std::fs::File> {
    let path = path
        .map(Path::to_path_buf)
        .or_else(|| crate::paths::state_dir().map(|d| d.join("gantry.log")))?;
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .ok()
}

/// For `gantry serve`: who connected, with which key, and every change an operator asked for,
/// on stderr (the journal under systemd, the pane under tmux) and in the log file alike.
pub fn to_stderr_and_file(path: Option<&Path>) {
    use tracing_subscriber::fmt::writer::MakeWriterExt;
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(filter_or("warn,gantry::serve=info,gantry::audit=info"))
        .with_ansi(false);
    let _ = match open_log(path) {
        Some(file) => subscriber
            .with_writer(std::io::stderr.and(std::sync::Mutex::new(file)))
            .try_init(),
        None => subscriber.with_writer(std::io::stderr).try_init(),
    };
}

/// For commands without a screen of their own.
pub fn to_stderr() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(std::io::stderr)
        .try_init();
}

/// For the TUI: never the screen. The default file is the state directory's `gantry.log`.
pub fn to_file(path: Option<&Path>) {
    let Some(file) = open_log(path) else { return };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .try_init();
}
