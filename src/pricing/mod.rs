//! What a GKE cluster costs, from a price snapshot compiled into the binary
//! (`assets/pricing/gke.json`, reduced by `scripts/refresh-prices` from published price lists
//! built from Google's Cloud Billing Catalog: one for machine types and disks, another for GPUs
//! attached to N1 machines). Nothing here reads a file, the clock or the network: prices are as
//! old as the snapshot ([`About::date`]; [`About::gpu_date`] for attached GPUs), and a cluster is
//! described by its caller as plain data ([`ClusterShape`]), so the config and the cloud stay out
//! of this module.
//!
//! A price the snapshot lacks is [`Estimate::Unknown`], naming what is missing; never 0.
//!
//! One file per job:
//! - [`catalogue`]: the snapshot and its lookups (machine type, GPU, disk; a zone's region).
//! - [`cluster`]: the hourly cost of a cluster: the GKE fee and each node pool.
//! - [`format`]: "≈ $0.28/h, $207/month", amounts and "price unknown (…)".
//! - [`node_size`]: what a node of a machine type offers pods, before it exists.

pub mod catalogue;
pub mod cluster;
pub mod format;
#[cfg(test)]
mod gpu_tests;
pub mod node_size;
#[cfg(test)]
mod tests;

use std::fmt;

pub use catalogue::{About, Catalogue};
pub use cluster::{Accelerator, ClusterCost, ClusterShape, PoolCost, PoolShape};
pub use node_size::{Allocatable, MachineSize};

/// How the nodes are bought: spot VMs cost less and can be taken back at any time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provisioning {
    OnDemand,
    Spot,
}

impl Provisioning {
    pub fn from_spot(spot: bool) -> Self {
        if spot { Self::Spot } else { Self::OnDemand }
    }
}

/// What kind of thing has no price.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Item {
    /// A location the snapshot has no prices for (or that is neither a region nor a zone).
    Location,
    MachineType,
    Gpu,
    Disk,
}

/// Something the snapshot has no price for, in the region where it was asked.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unpriced {
    pub item: Item,
    /// The machine type, accelerator type, disk type or location as it was asked for.
    pub name: String,
    /// The region the location resolved to (the location itself when it did not resolve).
    pub region: String,
}

impl fmt::Display for Unpriced {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.item {
            Item::Location => return write!(f, "location {}", self.name),
            Item::MachineType => "machine type",
            Item::Gpu => "GPU",
            Item::Disk => "disk type",
        };
        write!(f, "{kind} {} in {}", self.name, self.region)
    }
}

/// US dollars per hour, or what kept it from being known.
#[derive(Debug, Clone, PartialEq)]
pub enum Estimate {
    Known(f64),
    /// Each thing without a price, sorted, each once.
    Unknown(Vec<Unpriced>),
}

impl Estimate {
    pub const ZERO: Estimate = Estimate::Known(0.0);

    pub fn usd(&self) -> Option<f64> {
        match self {
            Estimate::Known(usd) => Some(*usd),
            Estimate::Unknown(_) => None,
        }
    }

    /// The sum; unknown when either side is, listing everything missing from both.
    pub fn plus(self, other: Estimate) -> Estimate {
        match (self, other) {
            (Estimate::Known(a), Estimate::Known(b)) => Estimate::Known(a + b),
            (Estimate::Unknown(mut a), Estimate::Unknown(b)) => {
                a.extend(b);
                a.sort();
                a.dedup();
                Estimate::Unknown(a)
            }
            (unknown @ Estimate::Unknown(_), Estimate::Known(_))
            | (Estimate::Known(_), unknown @ Estimate::Unknown(_)) => unknown,
        }
    }

    /// This many of it (hours, nodes).
    pub fn times(self, factor: f64) -> Estimate {
        match self {
            Estimate::Known(usd) => Estimate::Known(usd * factor),
            unknown => unknown,
        }
    }
}

impl From<Result<f64, Unpriced>> for Estimate {
    fn from(price: Result<f64, Unpriced>) -> Self {
        match price {
            Ok(usd) => Estimate::Known(usd),
            Err(missing) => Estimate::Unknown(vec![missing]),
        }
    }
}

impl std::iter::Sum for Estimate {
    fn sum<I: Iterator<Item = Estimate>>(iter: I) -> Self {
        iter.fold(Estimate::ZERO, Estimate::plus)
    }
}
