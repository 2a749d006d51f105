//! Worlds the engine's tests start from: the pieces several of them need, made one way.

use std::time::Instant;

use super::World;
use super::lease::Reading;
use crate::engine::Report;
use crate::k8s::lease::Record;
use crate::k8s::status::AttemptSummary;
use crate::k8s::watch::{Change, JobWatchEvent};

/// A world that has seen `attempt`, and knows whether this engine holds the recoverer's Lease.
pub fn model_with(attempt: AttemptSummary, mine: bool) -> World {
    let mut world = World::default();
    world.apply(Report::Connected);
    world.apply(Report::Job(JobWatchEvent::Job(Change::Applied(attempt))));
    hold_lease(&mut world, mine);
    world
}

/// The Lease read: held by this engine, or by someone else.
pub fn hold_lease(world: &mut World, mine: bool) {
    let holder = if mine {
        "me@here pid 1"
    } else {
        "someone@there pid 2"
    };
    world.lease.saw(
        Reading {
            record: Some(Record {
                holder: Some(holder.into()),
                renew_time: None,
                transitions: 0,
                version: Some("1".into()),
                stamp: Default::default(),
            }),
            mine,
        },
        Instant::now(),
    );
}
