//! Gantry's own diagnostics via tracing, filtered by GANTRY_LOG (or RUST_LOG).

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

/// For `gantry serve`: who connected, with which key, and every change an operator asked for,
/// on stderr (the journal under systemd, the pane under tmux) and in the log file alike.
pub fn to_stderr_and_file(path: Option<&std::path::Path>) {
    use tracing_subscriber::fmt::writer::MakeWriterExt;
    let filter = || filter_or("warn,gantry::serve=info");
    let file = path
        .map(std::path::Path::to_path_buf)
        .or_else(|| crate::paths::state_dir().map(|d| d.join("gantry.log")))
        .and_then(|path| {
            if let Some(dir) = path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .ok()
        });
    let _ = match file {
        Some(file) => tracing_subscriber::fmt()
            .with_env_filter(filter())
            .with_ansi(false)
            .with_writer(std::io::stderr.and(std::sync::Mutex::new(file)))
            .try_init(),
        None => tracing_subscriber::fmt()
            .with_env_filter(filter())
            .with_ansi(false)
            .with_writer(std::io::stderr)
            .try_init(),
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
pub fn to_file(path: Option<&std::path::Path>) {
    let path = path
        .map(std::path::Path::to_path_buf)
        .or_else(|| crate::paths::state_dir().map(|d| d.join("gantry.log")));
    let Some(path) = path else { return };
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let Ok(file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    else {
        return;
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .try_init();
}
