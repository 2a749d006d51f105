//! Gantry: run ML training on GKE from a terminal.

use clap::Parser;
use color_eyre::eyre::Result;

use gantry::cli::Cli;

fn main() {
    let code = match run() {
        Ok(code) => code,
        Err(e) => {
            gantry::errln!("gantry: {e:#}");
            1
        }
    };
    std::process::exit(code);
}

fn run() -> Result<i32> {
    color_eyre::install()?;
    // One TLS provider for the whole process: kube, rustls and Google's clients all use it.
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let cli = Cli::parse();
    if let Some(message) = cli.misplaced_flags() {
        eprintln!("gantry: {message}");
        return Ok(2);
    }
    let output = gantry::output::Output::detect(cli.color, cli.raw);
    gantry::output::init(output);
    let runtime = if cli.one_thread() {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?
    };
    // On the heap, and small: each command's own future is boxed where it is made
    // (`commands::on_heap`).
    runtime.block_on(Box::pin(gantry::commands::run(cli)))
}
