//! Models the engine's tests start from: the pieces several of them need, made one way.

use super::Model;
use crate::engine::Report;
use crate::k8s::lease::Holder;
use crate::k8s::status::AttemptSummary;
use crate::k8s::watch::{Change, JobWatchEvent};

/// A model that has seen `attempt`, and knows whether this engine holds the recoverer's Lease.
pub fn model_with(attempt: AttemptSummary, mine: bool) -> Model {
    let mut model = Model::default();
    model.apply(Report::Job(JobWatchEvent::Job(Change::Applied(attempt))));
    model.apply(Report::Recoverer(Some(Holder {
        identity: "someone@here pid 1".into(),
        mine,
    })));
    model
}
