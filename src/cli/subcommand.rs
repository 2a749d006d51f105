//! The subcommands and their flags.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, clap::Subcommand)]
pub enum Subcommand {
    /// Start the simulated cloud in the foreground (GKE API and one Kubernetes API per cluster).
    #[command(
        after_help = "Examples:\n  gantry sim --state-dir /tmp/sim --cluster ml-gke-cluster\n  KUBECONFIG=/tmp/sim/kubeconfig kubectl get nodes\n  gantry sim --state-dir /tmp/sim --time-scale 0.01 --fault watch-drop=5 --fault http-429=10"
    )]
    #[cfg(feature = "sim")]
    Sim(SimArgs),
    /// Create the training cluster (or adopt the one that is there).
    #[command(
        after_help = "Examples:\n  gantry up --wait\n  gantry up --project my-proj --location us-central1-a"
    )]
    Up(UpArgs),
    /// Follow the cluster and the newest attempt without a terminal: save every pod's log (as
    /// the TUI does) and print one line per change, until SIGTERM or Ctrl-C.
    #[command(
        after_help = "Examples:\n  gantry watch\n  gantry watch --json | jq -c 'select(.severity != \"info\")'\n  gantry --sim --time-scale 0.01 watch\n  systemd-run --user gantry watch"
    )]
    Watch(WatchArgs),
    /// Serve the TUI over SSH to teammates: every key in the authorized keys watches, read-only;
    /// keys in the operators file may change things. No cloud credentials needed on their side.
    #[command(
        after_help = "Examples:\n  gantry serve\n  cat teammate.pub >> ~/.config/gantry/authorized_keys\n  ssh -t -p 2222 localhost\n  gantry --sim --time-scale 0.01 serve --ssh-listen 0.0.0.0:2222 --operators ~/.config/gantry/operators"
    )]
    Serve(ServeArgs),
    /// Show the cluster and the training Job.
    #[command(
        after_help = "Examples:\n  gantry status\n  gantry status --json | jq .cluster.status"
    )]
    Status(StatusArgs),
    /// Show what `gantry up` would change: the cluster and each node pool against the config,
    /// field by field, how each change can be made, and the cost per hour before and after.
    #[command(
        after_help = "Examples:\n  gantry plan\n  gantry plan --json | jq '.changes[] | {field, how}'\n  gantry plan --exit-code   (0: nothing to do, 3: changes, 1: error, 2: bad input)"
    )]
    Plan(PlanArgs),
    /// Delete the training cluster.
    #[command(after_help = "Examples:\n  gantry down\n  gantry down --yes")]
    Down(YesArgs),
    /// Launch the training Job.
    #[command(
        after_help = "Examples:\n  gantry launch\n  gantry launch --image gcr.io/p/train:v2 --env EPOCHS=10\n  gantry launch --parallelism 4 --completions 4 --indexed\n  gantry launch --code . -- python3 train.py --lr 3e-4   (this directory's files on python:3.12-slim: no image to build)"
    )]
    Launch(LaunchCommand),
    /// Start a new attempt of the training Job, optionally with overrides.
    #[command(
        after_help = "Examples:\n  gantry retry\n  gantry retry --env BATCH_SIZE=16 --memory 8Gi"
    )]
    Retry(RetryArgs),
    /// Print the logs of every pod of the current attempt, prefixed with the pod.
    #[command(
        after_help = "Examples:\n  gantry logs\n  gantry logs --follow\n  gantry logs --pod ml-training-job-x7k2p --previous"
    )]
    Logs(LogsArgs),
    /// Print the training metrics read out of saved logs, with no cluster needed: those of the
    /// newest attempt with saved logs (or --attempt N), or of the given files.
    #[command(
        after_help = "Examples:\n  gantry metrics\n  gantry metrics --attempt 1 --csv > attempt-1.csv\n  gantry metrics --json train.log | jq '.sources[0].metrics.loss[-1]'"
    )]
    Metrics(MetricsArgs),
    /// Write the code an attempt ran into a directory (new or empty), byte for byte, as its
    /// ConfigMap holds it.
    #[command(
        after_help = "Examples:\n  gantry code ml-training-job-2 /tmp/what-ran\n  gantry code ml-training-job ./attempt-1 && diff -r ./attempt-1 ."
    )]
    Code(CodeArgs),
    /// Delete the training Job (every attempt), or one attempt.
    #[command(
        after_help = "Examples:\n  gantry delete job\n  gantry delete attempt ml-training-job-2 --yes"
    )]
    Delete(DeleteArgs),
    /// Check the `[[notify]]` targets: send each one a test message now, or show what waits for
    /// each and how its last delivery went.
    #[command(
        after_help = "Examples:\n  gantry notify test      (exit 1 when a target did not take it)\n  gantry notify status"
    )]
    Notify(NotifyArgs),
    /// Gantry itself in the cluster: a Deployment of one running the engine (recovery, guards,
    /// notifications, the SSH view) for the training Job, with every laptop closed.
    #[command(
        after_help = "Examples:\n  gantry watcher install --watcher-image us-docker.pkg.dev/p/tools/gantry:0.4.0 --wait\n  gantry watcher status --json | jq .unavailable\n  gantry watcher ssh\n  gantry watcher uninstall --yes"
    )]
    Watcher(WatcherArgs),
    /// Print the effective configuration as TOML.
    Config,
    /// Print shell completions.
    #[command(
        after_help = "Examples:\n  gantry completions bash > ~/.local/share/bash-completion/completions/gantry"
    )]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

impl Subcommand {
    /// The subcommand's name, as typed.
    pub fn name(&self) -> &'static str {
        match self {
            #[cfg(feature = "sim")]
            Subcommand::Sim(_) => "sim",
            Subcommand::Up(_) => "up",
            Subcommand::Status(_) => "status",
            Subcommand::Plan(_) => "plan",
            Subcommand::Watch(_) => "watch",
            Subcommand::Serve(_) => "serve",
            Subcommand::Down(_) => "down",
            Subcommand::Launch(_) => "launch",
            Subcommand::Retry(_) => "retry",
            Subcommand::Logs(_) => "logs",
            Subcommand::Metrics(_) => "metrics",
            Subcommand::Code(_) => "code",
            Subcommand::Delete(_) => "delete",
            Subcommand::Notify(_) => "notify",
            Subcommand::Watcher(_) => "watcher",
            Subcommand::Config => "config",
            Subcommand::Completions { .. } => "completions",
        }
    }

    /// What the command would change in the cloud, for the read-only refusal; None when it
    /// only reads.
    /// Its name in the audit file, for the commands that change the cloud.
    pub fn audit_kind(&self) -> Option<&'static str> {
        self.mutation()?;
        Some(match self {
            Subcommand::Up(_) => "up",
            Subcommand::Down(_) => "delete-cluster",
            Subcommand::Launch(_) => "launch",
            Subcommand::Retry(_) => "retry",
            Subcommand::Delete(DeleteArgs {
                what: DeleteWhat::Job { .. },
            }) => "delete-job",
            Subcommand::Watcher(WatcherArgs {
                what: WatcherWhat::Install(_),
            }) => "watcher-install",
            Subcommand::Watcher(_) => "watcher-uninstall",
            _ => "delete-attempt",
        })
    }

    pub fn mutation(&self) -> Option<&'static str> {
        match self {
            Subcommand::Up(_) => Some("create or change the cluster (`gantry up`)"),
            Subcommand::Down(_) => Some("delete the cluster (`gantry down`)"),
            Subcommand::Launch(_) => Some("launch the training Job (`gantry launch`)"),
            Subcommand::Retry(_) => Some("start a new attempt (`gantry retry`)"),
            Subcommand::Delete(DeleteArgs {
                what: DeleteWhat::Job { .. },
            }) => Some("delete the training Job (`gantry delete job`)"),
            Subcommand::Delete(DeleteArgs {
                what: DeleteWhat::Attempt { .. },
            }) => Some("delete an attempt (`gantry delete attempt`)"),
            Subcommand::Watcher(WatcherArgs {
                what: WatcherWhat::Install(_),
            }) => Some("install Gantry's watcher in the cluster (`gantry watcher install`)"),
            Subcommand::Watcher(WatcherArgs {
                what: WatcherWhat::Uninstall(_),
            }) => Some("remove Gantry's watcher from the cluster (`gantry watcher uninstall`)"),
            Subcommand::Watcher(_) => None,
            #[cfg(feature = "sim")]
            Subcommand::Sim(_) => None,
            Subcommand::Status(_)
            | Subcommand::Plan(_)
            | Subcommand::Watch(_)
            | Subcommand::Serve(_)
            | Subcommand::Logs(_)
            | Subcommand::Metrics(_)
            | Subcommand::Code(_)
            | Subcommand::Notify(_)
            | Subcommand::Config
            | Subcommand::Completions { .. } => None,
        }
    }
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// One JSON object per line (`at`, `kind`, `severity`, `subject`, `text`, and `event` with
    /// its `detail` for what notifications send) instead of text
    #[arg(long)]
    pub json: bool,
    /// Serve `GET /healthz` (200 while the engine answers) and `/readyz` (200 while connected
    /// to the cluster) on this address, for Kubernetes' probes or a supervisor
    #[arg(long, value_name = "ADDR")]
    pub health: Option<std::net::SocketAddr>,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Where to listen (another address than this machine's loopback only when asked)
    #[arg(long, value_name = "ADDR", default_value = crate::serve::DEFAULT_LISTEN)]
    pub ssh_listen: std::net::SocketAddr,
    /// Public keys that may watch, in authorized_keys format; read again when it changes
    /// [default: $XDG_CONFIG_HOME/gantry/authorized_keys]
    #[arg(long, value_name = "FILE")]
    pub authorized_keys: Option<PathBuf>,
    /// Public keys that may also change things (create, launch, retry, delete), each through
    /// the same read-only gate and confirmations as the local TUI
    /// [default: $XDG_CONFIG_HOME/gantry/operators]
    #[arg(long, value_name = "FILE")]
    pub operators: Option<PathBuf>,
    /// The server's own key, made once and kept 0600
    /// [default: the state directory's ssh_host_ed25519_key]
    #[arg(long, value_name = "FILE")]
    pub host_key: Option<PathBuf>,
    /// Viewers at once; the next one is refused with a message
    #[arg(long, value_name = "N", default_value_t = crate::serve::DEFAULT_MAX_VIEWERS)]
    pub max_viewers: usize,
    /// Seconds a connection may take to log in before it is closed (as sshd's LoginGraceTime)
    #[arg(long, value_name = "SECS", default_value_t = crate::serve::DEFAULT_LOGIN_GRACE.as_secs(), value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub login_grace: u64,
    /// Connections still logging in at once; at the cap the oldest of them is closed to make
    /// room (an idle flood delays a teammate by moments, never keeps them out)
    #[arg(long, value_name = "N", default_value_t = crate::serve::DEFAULT_MAX_STARTUPS as u32, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub max_startups: u32,
    /// Serve `GET /healthz` (200 while the engine answers) and `/readyz` (200 while connected
    /// to the cluster) on this address, for Kubernetes' probes or a supervisor
    #[arg(long, value_name = "ADDR")]
    pub health: Option<std::net::SocketAddr>,
}

#[derive(Debug, Args)]
pub struct UpArgs {
    /// Print progress and exit when the cluster is RUNNING.
    #[arg(long)]
    pub wait: bool,
    /// Apply the plan to a cluster that differs from the config without asking (for scripts).
    #[arg(long)]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// One JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// One JSON object on stdout: action, changes, costPerHour.
    #[arg(long)]
    pub json: bool,
    /// Exit 3 when there is anything to do, 0 when nothing (1 and 2 stay errors).
    #[arg(long)]
    pub exit_code: bool,
}

#[derive(Debug, Args)]
pub struct YesArgs {
    /// Do not ask.
    #[arg(long, short = 'y')]
    pub yes: bool,
}

#[derive(Debug, Clone, Default, Args)]
pub struct JobOverrides {
    /// Container image.
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// An environment variable for the container (repeatable).
    #[arg(long = "env", value_name = "K=V", value_parser = parse_env)]
    pub env: Vec<(String, String)>,
    /// Memory request and limit, e.g. 8Gi.
    #[arg(long, value_name = "QUANTITY")]
    pub memory: Option<String>,
    /// CPU request, e.g. 500m or 2.
    #[arg(long, value_name = "QUANTITY")]
    pub cpu: Option<String>,
}

impl From<&JobOverrides> for crate::k8s::manifest::Overrides {
    fn from(o: &JobOverrides) -> Self {
        Self {
            image: o.image.clone(),
            env: o.env.clone(),
            memory: o.memory.clone(),
            cpu: o.cpu.clone(),
        }
    }
}

#[derive(Debug, Args)]
pub struct LaunchArgs {
    #[command(flatten)]
    pub overrides: JobOverrides,
    /// Pods running at once.
    #[arg(long, value_name = "N")]
    pub parallelism: Option<u32>,
    /// Successful pods needed.
    #[arg(long, value_name = "N")]
    pub completions: Option<u32>,
    /// One pod per completion index (distributed training: WORLD_SIZE, RANK, MASTER_ADDR).
    #[arg(long)]
    pub indexed: bool,
    /// A directory whose files go with the attempt (as git sees them: .gitignore and
    /// .gantryignore leave files out), unpacked into the container's working directory; with no
    /// --image or job.image, on a public Python image.
    #[arg(long, value_name = "DIR")]
    pub code: Option<PathBuf>,
}

/// `gantry launch`: the Job flags and, after `--`, the container's command.
#[derive(Debug, Args)]
pub struct LaunchCommand {
    #[command(flatten)]
    pub args: LaunchArgs,
    /// The container's command, in place of the configured command and args (`-- python3
    /// train.py --lr 3e-4`).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct RetryArgs {
    #[command(flatten)]
    pub overrides: JobOverrides,
}

#[derive(Debug, Args)]
pub struct LogsArgs {
    /// Keep following; exit 0 when the attempt succeeds, 1 when it fails.
    #[arg(long, short = 'f')]
    pub follow: bool,
    /// Only this pod.
    #[arg(long, value_name = "POD")]
    pub pod: Option<String>,
    /// The previous container's logs.
    #[arg(long, short = 'p')]
    pub previous: bool,
    /// Lines without the `[pod] ` prefix: with --pod and --raw or a pipe, the pod's log byte for
    /// byte.
    #[arg(long, requires = "pod")]
    pub no_prefix: bool,
    /// Log streams open at once. With more pods than this, pods take turns (a stream gives its
    /// place up after 10 s while others wait, and resumes later where it was): every pod's
    /// every line still comes, later.
    #[arg(long, value_name = "N", default_value_t = default_max_log_requests(), value_parser = clap::value_parser!(u16).range(1..))]
    pub max_log_requests: u16,
}

#[derive(Debug, Args)]
pub struct MetricsArgs {
    /// The attempt, numbered as the TUI shows it (`#2` is `<job>-2`) [default: the newest with
    /// saved logs]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), conflicts_with = "files")]
    pub attempt: Option<u32>,
    /// One JSON document: every parsed point of every metric, per pod or file.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// CSV with a header: `source,metric,x,value`, one row per parsed point.
    #[arg(long)]
    pub csv: bool,
    /// Log files to read instead of the saved logs, each one a source named by its path.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

const fn default_max_log_requests() -> u16 {
    crate::k8s::logs::tail::DEFAULT_MAX_STREAMS as u16
}

#[derive(Debug, Args)]
pub struct CodeArgs {
    /// The attempt, as `gantry status` lists it (`<job>` or `<job>-N`).
    pub attempt: String,
    /// Where to write it: a new directory, or an empty one.
    pub dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct NotifyArgs {
    #[command(subcommand)]
    pub what: NotifyWhat,
}

#[derive(Debug, clap::Subcommand)]
pub enum NotifyWhat {
    /// Send each target a test message now (past its events, severity and rate limit) and
    /// print how each took it and how long it took.
    Test,
    /// List the targets (URLs by their host), the messages waiting for each, and each one's
    /// last delivery.
    Status,
}

#[derive(Debug, Args)]
pub struct WatcherArgs {
    #[command(subcommand)]
    pub what: WatcherWhat,
}

#[derive(Debug, clap::Subcommand)]
pub enum WatcherWhat {
    /// Make (or bring up to date) the watcher: its account and least RBAC, its settings and
    /// secrets, its Deployment; print the gcloud commands its GKE acts need.
    Install(WatcherInstallArgs),
    /// Whether it is there and ready, what it runs, whether it holds the recoverer's Lease, and
    /// what it cannot do from inside, and why.
    Status(StatusArgs),
    /// Remove exactly the watcher's objects (the training Job's stay); its outbox only once
    /// empty, unless --force.
    Uninstall(WatcherUninstallArgs),
    /// Watch the in-cluster Gantry over SSH through a port-forward of the Kubernetes API, its
    /// host key pinned; arguments after `--` go to ssh.
    Ssh(WatcherSshArgs),
}

#[derive(Debug, Args)]
pub struct WatcherInstallArgs {
    /// The image that runs it (else the config's `[watcher] image`; README "Gantry in the
    /// cluster" says how to build one).
    #[arg(long, value_name = "IMAGE")]
    pub watcher_image: Option<String>,
    /// Wait until its pod is ready (at most 5 minutes).
    #[arg(long)]
    pub wait: bool,
    /// One JSON object on stdout: objects, hostKeyFingerprint, iamCommands.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct WatcherUninstallArgs {
    /// Remove its outbox even with messages still waiting in it.
    #[arg(long)]
    pub force: bool,
    /// Do not ask.
    #[arg(long, short = 'y')]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct WatcherSshArgs {
    /// The local port to forward from (default: one the OS picks).
    #[arg(long, value_name = "PORT", default_value_t = 0)]
    pub local_port: u16,
    /// Arguments for ssh (after `--`), such as `-i ~/.ssh/team`.
    #[arg(last = true, value_name = "SSH-ARGS")]
    pub ssh_args: Vec<String>,
}

#[derive(Debug, Args)]
pub struct DeleteArgs {
    #[command(subcommand)]
    pub what: DeleteWhat,
}

#[derive(Debug, clap::Subcommand)]
pub enum DeleteWhat {
    /// Delete the training Job: every attempt Gantry made, with their pods and the workers'
    /// Service. Only objects Gantry manages.
    Job {
        /// Refused with a pointer to `delete attempt` (one attempt is not the Job).
        #[arg(hide = true)]
        name: Option<String>,
        /// Do not ask.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Delete one attempt (its Job, as `gantry status` lists it: `<job>` or `<job>-N`) and its
    /// pods; the other attempts stay.
    Attempt {
        /// The attempt's Job name.
        name: String,
        /// Do not ask.
        #[arg(long, short = 'y')]
        yes: bool,
    },
}

fn parse_env(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() && !k.contains(char::is_whitespace) => {
            match crate::names::reserved_env(k, "--env") {
                Some(refused) => Err(refused),
                None => Ok((k.to_string(), v.to_string())),
            }
        }
        _ => Err(format!("'{s}' is not K=V: write --env NAME=value")),
    }
}

#[derive(Debug, Args)]
pub struct SimArgs {
    /// Where to keep endpoints.json, token, ca.pem and kubeconfig current.
    #[arg(long, value_name = "DIR")]
    pub state_dir: PathBuf,

    /// Port of the GKE Container API (default: one the OS picks).
    #[arg(long, value_name = "P", default_value_t = 0)]
    pub gke_port: u16,

    /// A cluster that is RUNNING from the start (project demo-project, location us-central1-a).
    #[arg(long = "cluster", value_name = "NAME")]
    pub clusters: Vec<String>,
}
