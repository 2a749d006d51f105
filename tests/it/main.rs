//! Gantry's integration tests, in one binary (one link instead of one per file, and the long
//! drills of one module overlap the others' instead of waiting in line): each module is what
//! was a file of its own, against the simulated cloud, the real binary, tmux, kubectl and ssh.
//! The screen snapshot tests (insta) keep binaries of their own, beside this directory. Tests
//! run in the order of their names, two at a time: the long drills are named `drill_…` so
//! that they start early and their waiting overlaps the short tests, instead of ending the run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod sim_gke_support;

mod cli_any_cluster;
mod cli_apply;
mod cli_flow;
mod cli_gke;
mod cli_gpu_example;
mod cli_job;
mod cli_plan;
mod code;
mod config_files;
mod cost_e2e;
mod drill_serve_stopped_client;
mod drill_stalled_terminal;
mod drill_watcher;
mod drills;
mod engine;
mod engine_plan;
mod gke_provision;
mod gpu_e2e;
mod gpu_reading;
mod hostile_drill;
mod hostile_input;
mod job_manifest;
mod k8s_annotate;
mod k8s_job;
mod k8s_lines;
mod k8s_log_pace;
mod k8s_logs;
mod k8s_manifest;
mod k8s_sink;
mod kubectl;
mod kubectl_top;
mod layers;
mod lease;
mod metrics_cli;
mod metrics_frameworks;
mod notify;
mod notify_cli;
mod notify_e2e;
mod notify_receiver;
mod notify_secrets;
mod preemption_e2e;
mod readme_screenshot;
mod recovery_e2e;
mod security;
mod security_read_only;
mod serve;
mod sim_faults;
mod sim_gke;
mod sim_gke_faults;
mod sim_gke_pools;
mod sim_gke_reconcile;
mod sim_gke_updates;
mod sim_job_controller;
mod sim_kube;
mod sim_training_logs;
mod spot_fallback_e2e;
mod tui_context;
mod tui_e2e;
mod tui_events;
mod tui_idle_e2e;
mod tui_keys;
mod tui_log_colours;
mod tui_metrics_e2e;
mod tui_reconcile;
mod tui_refusals;
mod up_watcher;
mod viewer_screen;
mod viewers;
mod waiting_e2e;
mod watch;
