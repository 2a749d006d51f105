//! Gantry: lift a training container onto GKE and watch it from a terminal.

pub mod cli;
pub mod commands;
pub mod config;
pub mod logging;
pub mod sim;
pub mod tui;
