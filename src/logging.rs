//! Gantry's own diagnostics via tracing, filtered by GANTRY_LOG (or RUST_LOG).

use tracing_subscriber::EnvFilter;

fn filter() -> EnvFilter {
    std::env::var("GANTRY_LOG")
        .ok()
        .and_then(|v| EnvFilter::try_new(v).ok())
        .or_else(|| EnvFilter::try_from_default_env().ok())
        .unwrap_or_else(|| EnvFilter::new("warn"))
}

/// For commands without a screen of their own.
pub fn to_stderr() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(std::io::stderr)
        .try_init();
}
