//! Gantry: run ML training on GKE from a terminal.

use clap::Parser;
use color_eyre::eyre::Result;

use gantry::cli::{Cli, Subcommand};

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
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let tui_options = cli.tui_options();
    runtime.block_on(async move {
        match cli.command {
            #[cfg(feature = "sim")]
            Some(Subcommand::Sim(args)) => {
                gantry::logging::to_stderr();
                let options = gantry::cli::sim_options(
                    &args,
                    cli.time_scale,
                    &cli.faults,
                    cli.replay_dir.as_deref(),
                );
                gantry::commands::sim::run(&args, options).await
            }
            Some(Subcommand::Watch) => Ok(gantry::commands::watch::run(
                cli.session_options(),
                cli.target.log_file.as_deref(),
            )
            .await),
            Some(Subcommand::Serve(args)) => {
                Ok(gantry::commands::serve::run(args, tui_options).await)
            }
            Some(Subcommand::Completions { shell }) => {
                let mut command = <Cli as clap::CommandFactory>::command();
                clap_complete::generate(shell, &mut command, "gantry", &mut std::io::stdout());
                Ok(0)
            }
            Some(other) => {
                gantry::commands::run(other, &(&cli.target).into(), cli.read_only, cli.sim).await
            }
            None => gantry::tui::run(tui_options).await,
        }
    })
}
