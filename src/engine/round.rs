//! One round of the owner's work on a batch of reports, apart from the gate and the workers: the
//! reports folded into the world in order, the active attempt's headway marked, then every
//! policy's decisions in their one order (`policies`). The owner runs it under the world's one
//! write lock; a test runs it on a recorded sequence of reports, with no engine and no tokio.

use super::clock::Now;
use super::notice::Notice;
use super::policies::{Doing, Policies, Round, Settings};
use super::report::Report;
use super::world::{FollowLogs, World};

/// What a batch changed and called for.
#[derive(Debug, Default)]
pub struct Folded {
    /// Anything viewers show changed.
    pub changed: bool,
    /// The logs of a new newest attempt, to follow.
    pub follows: Vec<FollowLogs>,
    /// What the world told as the reports were folded, before what the policies told.
    pub told: Vec<Notice>,
    pub round: Round,
    /// An earlier attempt whose saved metrics a viewer wants.
    pub wanted: Option<u32>,
}

/// Folds `batch` into `world` and lets the policies decide. `note` sees each report first (what
/// it says of what the engine is doing: a command's end, a Lease read after a take).
#[allow(clippy::too_many_arguments)]
pub fn fold_and_decide(
    world: &mut World,
    policies: &mut Policies,
    doing: &mut Doing,
    settings: &Settings,
    batch: Vec<Report>,
    now: Now,
    mut note: impl FnMut(&Report, &mut Doing),
) -> Folded {
    // Log lines alone change nothing the policies judge but what is news (an alert): a batch
    // of them is not judged again.
    let judge = batch.iter().any(|e| !matches!(e, Report::Tail { .. }));
    let mut folded = Folded::default();
    for report in batch {
        note(&report, doing);
        let applied = world.apply(report);
        folded.changed |= applied.changed;
        folded.follows.extend(applied.follow);
        folded.told.extend(applied.told);
    }
    world.mark_headway(now.wall);
    folded.wanted = world.training.take_wanted();
    folded.round = policies.decide(world, doing, settings, &folded.told, judge, now);
    folded.changed |= !folded.told.is_empty() || !folded.round.notices.is_empty();
    folded
}

#[cfg(test)]
#[path = "round_tests.rs"]
mod tests;
