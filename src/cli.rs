//! The command line: global flags and subcommands.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::sim::faults::Fault;

#[derive(Debug, Parser)]
#[command(
    name = "gantry",
    version,
    about = "Run ML training on GKE from a terminal: provision the cluster, launch the Job, follow every pod's logs",
    after_help = "Examples:\n  gantry --sim                      the whole product on the embedded simulated cloud\n  gantry sim --state-dir /tmp/sim --cluster ml-gke-cluster\n                                    a simulated cloud in the foreground, for kubectl and scripts"
)]
pub struct Cli {
    /// Run on the embedded simulated cloud instead of Google Cloud.
    #[arg(long, global = true)]
    pub sim: bool,

    /// With --sim: multiply every simulated delay (0.01 makes a run take seconds).
    #[arg(long, global = true, value_name = "F", default_value_t = 1.0, value_parser = parse_time_scale)]
    pub time_scale: f64,

    /// Refuse every action that would change anything in the cloud.
    #[arg(long, global = true)]
    pub read_only: bool,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start the simulated cloud in the foreground (GKE API and one Kubernetes API per cluster).
    #[command(
        after_help = "Examples:\n  gantry sim --state-dir /tmp/sim --cluster ml-gke-cluster\n  KUBECONFIG=/tmp/sim/kubeconfig kubectl get nodes\n  gantry sim --state-dir /tmp/sim --time-scale 0.01 --fault watch-drop=5 --fault http-429=10"
    )]
    Sim(SimArgs),
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

    /// A fault to inject: watch-drop=SECS, log-cut=SECS, watch-gone, http-429=PERCENT,
    /// http-503=PERCENT, restart=SECS, token-expiry=SECS, slow=MS, gke-quota,
    /// gke-create-error=MESSAGE, gke-permission-denied.
    #[arg(long = "fault", value_name = "NAME[=ARG]")]
    pub faults: Vec<Fault>,
}

fn parse_time_scale(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!(
            "'{s}' is not a time scale: give a number of 0 or more, such as 1 or 0.01"
        )),
    }
}
