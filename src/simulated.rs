//! The simulated cloud, when this binary has it: the one place Gantry names the simulator's
//! crate (`gantry-sim`, linked by the default `sim` feature). A binary built without it talks to
//! Google Cloud and kubeconfig clusters only, and `--sim`, `--fault` and `--replay-dir` say how
//! to get it; so does `--run-image`.

#[cfg(feature = "sim")]
pub use gantry_sim::cloud::{DEMO_LOCATION, DEMO_PROJECT};
#[cfg(feature = "sim")]
pub use gantry_sim::faults::FAULT_NAMES;
#[cfg(feature = "sim")]
pub use gantry_sim::faults::Fault;
#[cfg(feature = "sim")]
pub use gantry_sim::kube::process::RunImage;
#[cfg(feature = "sim")]
pub use gantry_sim::{SimCloud, SimOptions};

/// The `--run-image` rules, then Gantry's own: an image whose repository ends in `/gantry`
/// (the watcher's, whatever its registry and tag) runs as this very executable, so the
/// watcher's pod on the simulated cluster is this build as a real process.
#[cfg(feature = "sim")]
pub fn with_own_image(mut images: Vec<RunImage>) -> Vec<RunImage> {
    let Ok(executable) = std::env::current_exe() else {
        return images;
    };
    for pattern in ["*/gantry", "*/gantry:*", "*/gantry@*"] {
        images.push(RunImage {
            pattern: pattern.to_string(),
            executable: executable.clone(),
        });
    }
    images
}

/// The faults `--fault` takes: none in a binary without the simulated cloud.
#[cfg(not(feature = "sim"))]
pub const FAULT_NAMES: &str = "none (built without the simulated cloud)";

/// What a binary without the simulated cloud says when asked for it.
pub const MISSING: &str = "this gantry was built without the simulated cloud (`--no-default-features`): build it with the default `sim` feature (`cargo build`, or `cargo install` without --no-default-features)";

/// A fault of the simulated cloud: none in a binary without it.
#[cfg(not(feature = "sim"))]
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {}

#[cfg(not(feature = "sim"))]
impl std::str::FromStr for Fault {
    type Err = &'static str;

    fn from_str(_: &str) -> Result<Self, Self::Err> {
        Err(MISSING)
    }
}

/// An image the simulated cloud runs as a local process: none in a binary without it.
#[cfg(not(feature = "sim"))]
#[derive(Debug, Clone, PartialEq)]
pub enum RunImage {}

#[cfg(not(feature = "sim"))]
impl std::str::FromStr for RunImage {
    type Err = &'static str;

    fn from_str(_: &str) -> Result<Self, Self::Err> {
        Err(MISSING)
    }
}
