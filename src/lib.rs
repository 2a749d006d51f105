//! Gantry: lift a training container onto GKE and watch it from a terminal.

pub mod app;
pub mod backoff;
pub mod cli;
pub mod code;
pub mod commands;
pub mod config;
pub mod connect;
pub mod ends;
pub mod engine;
pub mod gke;
pub mod k8s;
pub mod keys;
pub mod kubeconfig;
pub mod logging;
pub mod meter;
pub mod metrics;
pub mod names;
pub mod notify;
pub mod output;
pub mod paths;
pub mod pricing;
pub mod private_file;
pub mod sanitize;
pub mod secret_url;
pub mod serve;
pub mod settings;
#[cfg(feature = "sim")]
pub use gantry_sim as sim;
pub mod health;
pub mod simulated;
pub mod tui;
pub mod ui;
pub mod viewer;
pub mod vocabulary;
pub mod waiting;
pub mod watcher;
