//! The command line: global flags here, subcommands and their flags in `subcommand`. Only
//! this module and `commands` know clap: lower layers take plain structs, converted here.

mod subcommand;

pub use subcommand::*;

use std::path::PathBuf;

use clap::{Args, Parser};

use crate::simulated::{Fault, RunImage};

#[derive(Debug, Parser)]
#[command(
    name = "gantry",
    version,
    about = "Run ML training on GKE from a terminal: provision the cluster, launch the Job, follow every pod's logs"
)]
#[cfg_attr(
    feature = "sim",
    command(
        after_help = "Examples:\n  gantry --sim                      the whole product on the embedded simulated cloud\n  gantry sim --state-dir /tmp/sim --cluster ml-gke-cluster\n                                    a simulated cloud in the foreground, for kubectl and scripts"
    )
)]
#[cfg_attr(
    not(feature = "sim"),
    command(
        after_help = "Examples:\n  gantry --project my-proj --location us-central1-a\n  gantry --context my-cluster      any cluster of your kubeconfig"
    )
)]
pub struct Cli {
    /// Run on the embedded simulated cloud instead of Google Cloud.
    #[arg(long, global = true)]
    pub sim: bool,

    /// With --sim: multiply every simulated delay (0.01 makes a run take seconds).
    #[arg(long, global = true, value_name = "F", default_value_t = 1.0, value_parser = parse_time_scale)]
    pub time_scale: f64,

    /// With --sim or `gantry sim`: a fault the simulated cloud injects (the list is the
    /// simulator's own, `FAULT_NAMES`).
    #[arg(
        long = "fault",
        global = true,
        value_name = "NAME[=ARG]",
        help = format!(
            "With --sim or `gantry sim`: a fault the simulated cloud injects: {}",
            crate::simulated::FAULT_NAMES
        )
    )]
    pub faults: Vec<Fault>,

    /// With --sim or `gantry sim`: the directory whose files containers replay as their log
    /// (SIM_REPLAY=NAME writes the file NAME, byte for byte); no other file can be read.
    #[arg(long, global = true, value_name = "DIR", value_parser = parse_replay_dir)]
    pub replay_dir: Option<PathBuf>,

    /// Run as Gantry's watcher in a pod of the cluster (`gantry watcher install` makes it so):
    /// Kubernetes through the pod's ServiceAccount, Google through the metadata server, the
    /// settings from the file GANTRY_WATCHER_CONFIG names.
    #[arg(long, global = true)]
    pub in_cluster: bool,

    /// With --sim or `gantry sim`: containers whose image matches PATTERN (`*` is any
    /// characters) run as local processes of EXECUTABLE, which stands for the image's
    /// entrypoint (a program on PATH, or a path). Repeatable; the first match wins.
    #[arg(long = "run-image", global = true, value_name = "PATTERN=EXECUTABLE")]
    pub run_images: Vec<RunImage>,

    /// With --sim or `gantry sim`: attempts that run code (`launch --code`) run for real, as
    /// local processes of this machine's python3 (not their image) in a directory holding the
    /// code, with the pod's environment; their output is the pod's log.
    #[arg(long, global = true)]
    pub run_code: bool,

    /// Refuse every action that would change anything in the cloud.
    #[arg(long, global = true)]
    pub read_only: bool,

    /// Colour in command output: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto")]
    pub color: ColorChoice,

    /// Write what the cluster sent exactly, even to a terminal (its escape sequences then act
    /// on it). Without it, output on a terminal shows control characters inert (`^[`).
    #[arg(long, global = true)]
    pub raw: bool,

    /// Frames a second from new log lines alone (1–60; keys are answered at once) [default: 10,
    /// 4 under SSH and in `serve`]
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u32).range(i64::from(crate::config::MAX_FPS_LOWEST)..=i64::from(crate::config::MAX_FPS_HIGHEST)))]
    pub max_fps: Option<u32>,

    #[command(flatten)]
    pub target: TargetArgs,

    /// The Job flags of `launch`, for the TUI's launches (without a subcommand).
    #[command(
        flatten,
        next_help_heading = "Job (the TUI's launches, as `gantry launch`)"
    )]
    pub launch: LaunchArgs,

    #[command(subcommand)]
    pub command: Option<Subcommand>,
}

pub use crate::output::ColorChoice;

/// Where Gantry works and with what credentials. Accepted before or after a subcommand.
#[derive(Debug, Clone, Default, Args)]
pub struct TargetArgs {
    /// Google Cloud project (else the config file, GOOGLE_CLOUD_PROJECT, CLOUDSDK_CORE_PROJECT,
    /// then gcloud's core/project).
    #[arg(long, global = true, value_name = "PROJECT")]
    pub project: Option<String>,

    /// Zone or region of the cluster (else the config file, then gcloud's compute/zone).
    #[arg(long, global = true, value_name = "LOCATION")]
    pub location: Option<String>,

    /// Configuration file (default: $XDG_CONFIG_HOME/gantry/config.toml).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// A file holding an OAuth access token, re-read when it changes or is refused (as gcloud's
    /// flag); instead of Application Default Credentials.
    #[arg(long, global = true, value_name = "FILE")]
    pub access_token_file: Option<PathBuf>,

    /// The GKE Container API endpoint (a simulator's, or a private endpoint).
    #[arg(long, global = true, value_name = "URL")]
    pub gke_endpoint: Option<String>,

    /// Work on an existing cluster through this kubeconfig context instead of GKE.
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,

    /// A Job manifest (YAML) to use instead of the config file's [job] section.
    #[arg(long, global = true, value_name = "FILE")]
    pub job_manifest: Option<PathBuf>,

    /// Do not write a kubeconfig context for the cluster.
    #[arg(long, global = true)]
    pub no_kubeconfig: bool,

    /// Where Gantry's own log goes (default: the state directory's gantry.log).
    #[arg(long, global = true, value_name = "FILE")]
    pub log_file: Option<PathBuf>,
}

impl Cli {
    /// Whether one thread runs it all: the TUI on a cluster elsewhere, whose tasks (watches, log
    /// streams, the engine, the screen) mostly wait on the network. On two worker threads every
    /// chunk of a fast log was handed from thread to thread (a futex wake-up each), and waking
    /// threads took about a third of the CPU the TUI spent following 1,000 lines a second.
    /// `serve` (many viewers drawing), the simulator (`sim`, `--sim`) and the other commands keep
    /// a thread a core.
    pub fn one_thread(&self) -> bool {
        self.command.is_none() && !self.sim
    }

    /// Flags that cannot go together, and why (None: the command line is fine).
    pub fn misplaced_flags(&self) -> Option<String> {
        #[cfg(feature = "sim")]
        let simulated = self.sim || matches!(self.command, Some(Subcommand::Sim(_)));
        #[cfg(not(feature = "sim"))]
        let simulated = self.sim;
        if !self.faults.is_empty() && !simulated {
            return Some(
                "--fault works on the simulated cloud: add --sim, or run `gantry sim --fault …`"
                    .into(),
            );
        }
        if self.replay_dir.is_some() && !simulated {
            return Some(
                "--replay-dir works on the simulated cloud: add --sim, or run `gantry sim --replay-dir DIR`"
                    .into(),
            );
        }
        if self.run_code && !simulated {
            return Some(
                "--run-code works on the simulated cloud: add --sim, or run `gantry sim --run-code`"
                    .into(),
            );
        }
        if !self.run_images.is_empty() && !simulated {
            return Some(
                "--run-image works on the simulated cloud: add --sim, or run `gantry sim --run-image PATTERN=EXECUTABLE`"
                    .into(),
            );
        }
        self.misplaced_in_cluster()
            .or_else(|| self.misplaced_job_flags())
    }

    /// `--in-cluster` runs the watcher's engine in its pod, with the pod's settings and
    /// credentials: nothing else, and no local settings beside it.
    fn misplaced_in_cluster(&self) -> Option<String> {
        if !self.in_cluster {
            return None;
        }
        if !matches!(
            self.command,
            Some(Subcommand::Watch(_) | Subcommand::Serve(_))
        ) {
            return Some(
                "--in-cluster runs `gantry watch` or `gantry serve` in the watcher's pod (`gantry watcher install` makes it)"
                    .into(),
            );
        }
        let t = &self.target;
        (self.sim || t.context.is_some() || t.config.is_some() || t.job_manifest.is_some() || t.access_token_file.is_some()).then(|| {
            "--in-cluster takes its settings from GANTRY_WATCHER_CONFIG and its credentials from the pod: drop --sim, --context, --config, --job-manifest and --access-token-file".into()
        })
    }

    /// The TUI's Job flags given with a subcommand (`gantry --image I launch`): they belong
    /// after it. The message says so, or None when the command line is fine.
    fn misplaced_job_flags(&self) -> Option<String> {
        // `serve`'s operators launch with the Job flags given at the top level, as the TUI does.
        let command = self
            .command
            .as_ref()
            .filter(|c| !matches!(c, Subcommand::Serve(_)))?;
        let flags = crate::k8s::manifest::LaunchFlags::from(&self.launch);
        (flags != crate::k8s::manifest::LaunchFlags::default()).then(|| {
            format!(
                "the Job flags (--image, --env, --memory, --cpu, --parallelism, --completions, --indexed, --code) go after the subcommand: gantry {} --image …",
                command.name()
            )
        })
    }

    /// What the command line asks for; `Settings::resolve` adds the config file's.
    pub fn asked(&self) -> crate::settings::Asked {
        crate::settings::Asked {
            session: crate::engine::SessionOptions {
                target: (&self.target).into(),
                sim: self.sim,
                time_scale: self.time_scale,
                faults: self.faults.clone(),
                replay_dir: self.replay_dir.clone(),
                run_images: self.run_images.clone(),
                run_code: self.run_code,
                logs_root: None,
                read_only: self.read_only,
                audit_file: crate::paths::state_dir().map(|d| d.join(crate::paths::AUDIT_FILE)),
                clock: Default::default(),
                in_cluster: self.in_cluster,
            },
            launch: (&self.launch).into(),
            max_fps: self.max_fps,
            log_file: self.target.log_file.clone(),
        }
    }
}

impl From<&LaunchArgs> for crate::k8s::manifest::LaunchFlags {
    fn from(a: &LaunchArgs) -> Self {
        Self {
            overrides: (&a.overrides).into(),
            parallelism: a.parallelism,
            completions: a.completions,
            indexed: a.indexed,
            code: a.code.clone(),
            command: Vec::new(),
        }
    }
}

impl From<&LaunchCommand> for crate::k8s::manifest::LaunchFlags {
    fn from(c: &LaunchCommand) -> Self {
        Self {
            command: c.command.clone(),
            ..(&c.args).into()
        }
    }
}

impl From<&TargetArgs> for crate::connect::Target {
    fn from(t: &TargetArgs) -> Self {
        Self {
            named: crate::gke::target::Named {
                project: t.project.clone(),
                location: t.location.clone(),
            },
            config: t.config.clone(),
            access_token_file: t.access_token_file.clone(),
            gke_endpoint: t.gke_endpoint.clone(),
            context: t.context.clone(),
            job_manifest: t.job_manifest.clone(),
            no_kubeconfig: t.no_kubeconfig,
        }
    }
}

/// The simulator's options for `gantry sim`: its own flags and the global ones.
#[cfg(feature = "sim")]
pub fn sim_options(
    args: &SimArgs,
    time_scale: f64,
    faults: &[Fault],
    replay_dir: Option<&std::path::Path>,
    run_images: &[RunImage],
    run_code: bool,
) -> crate::simulated::SimOptions {
    crate::simulated::SimOptions {
        state_dir: Some(args.state_dir.clone()),
        time_scale,
        gke_port: args.gke_port,
        clusters: args.clusters.clone(),
        faults: faults.to_vec(),
        replay_dir: replay_dir.map(std::path::Path::to_path_buf),
        run_images: crate::simulated::with_own_image(run_images.to_vec()),
        run_code,
    }
}

fn parse_replay_dir(s: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(s);
    if path.is_dir() {
        Ok(path)
    } else {
        Err(format!(
            "'{s}' is not a directory: give the directory that holds the logs to replay"
        ))
    }
}

pub(crate) fn parse_time_scale(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!(
            "'{s}' is not a time scale: give a number of 0 or more, such as 1 or 0.01"
        )),
    }
}
