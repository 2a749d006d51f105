//! What Gantry's read model is said in, below everything that reads or writes the cluster: how
//! much a notice matters and what it is about ([`Severity`], [`Kind`]), how a pod ended
//! ([`ends`]), why Gantry ended an attempt and what replaced it ([`attempt`]), what it asked of its node ([`Requests`]), and what a run's cost record on its Job
//! says ([`cost`]). `k8s` reads the cluster into these words and writes them back; everything
//! above it (the ends' assembly, the ledgers, the engine, the screens, the notifications) speaks
//! them. Nothing here imports anything of Gantry's but its leaves.

pub mod attempt;
pub mod cost;
pub mod ends;
mod kind;
mod requests;
mod severity;

pub use kind::{Kind, sent_names};
pub use requests::Requests;
pub use severity::Severity;
