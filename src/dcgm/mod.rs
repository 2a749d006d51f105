//! What NVIDIA's DCGM exporter says of each GPU, read out of its `/metrics` text: utilisation,
//! framebuffer, power, temperature, model, and the pod it is allocated to. The exporter runs on
//! every GPU node (GKE's managed one, NVIDIA's Helm chart, the GPU Operator's); how it is found
//! and read through the API server is `k8s::gpus`'s. Nothing here does I/O.
//!
//! What the exporter prints varies more than its documentation says (the recorded outputs in
//! `tests/dcgm_samples/`, each naming its source, are what this is held to):
//! - the series of one family carry different label sets: a GPU with a pod has
//!   `pod`/`namespace`/`container` (or the legacy `pod_name`/`pod_namespace`/`container_name`),
//!   one without has none, or has them empty (exporters up to 3.4.0); MIG instances add
//!   `GPU_I_PROFILE`/`GPU_I_ID`;
//! - `Hostname` became `hostname` (exporter 4.8.3), and is not always the node: the node is the
//!   exporter pod's own `spec.nodeName`, never read from here;
//! - a field the GPU cannot give is left out, not printed as 0; DCGM's blank sentinels and
//!   non-finite values are "no data";
//! - a GPU shared by several pods (time-slicing) repeats its series once per pod, and since
//!   4.5.3 keeps a device-level series beside them: the device's is taken, else the highest,
//!   never a sum;
//! - floats may be `%f` (six decimals) or Go's shortest form, labels in any order.
//!
//! One file per job: [`exposition`] (the text format, through `prom_text_format_parser`),
//! [`fields`] (the metric and label names, old and new), [`gpus`] (each GPU assembled).

pub mod exposition;
pub mod fields;
pub mod gpus;
#[cfg(test)]
mod tests;

pub use gpus::{Activity, Gpu, Mig, PodRef, Signal, read};

/// Why an exporter's text could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DcgmError {
    #[error("not the Prometheus text format: {0}")]
    Exposition(String),
}
