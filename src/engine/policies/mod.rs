//! What the engine decides by itself, for the people who are not looking. Each policy is a type
//! that owns its memory and has one entry point, `decide(&mut self, &World, &Doing, &Settings,
//! Now) -> Decisions`: it reads the world (what the cluster is), what the engine itself is doing
//! (`Doing`: a retry a person asked for, what the workers are running, what this engine already
//! ended), and the resolved settings, and answers with notices to tell and commands to run. The
//! owner runs them in one order, under the one lock the batch was folded under, passes every
//! command through the gate under the policy's principal, and publishes every notice one way.
//!
//! The order, and why:
//! 1. `recoverer` — take the Lease when nobody holds it or its holder fell silent: every policy
//!    below that acts does so only on the holder's engine.
//! 2. `ends` — record the pods' ends this engine saw on their attempts.
//! 3. `recovery` — restart a gang a preemption broke, or end a run out of recoveries.
//! 4. `fallback` — move a run that spot capacity deserted to its on-demand pool.
//! 5. `guards` — a spent budget, a run too long, a stall ended as a recovery.
//! 6. `gpu_idle` — tell of a GPU a running pod leaves idle, and end its attempt when asked to
//!    (a guard: after the others, so an attempt they end is not ended twice).
//! 7. `watch` — tell of a stall, a long wait, an unreachable cluster.
//! 8. `idle` — tell of an idle cluster, and scale it to zero when asked to.
//! 9. `cost` — record the run's cost on its newest attempt.
//! 10. `news` — what of everything told (by the world and the policies above) is a message for
//!     those not looking, sent by the holder alone.
//!
//! A recovery, a fallback and a guard may each want to end the same attempt: whichever comes
//! first in the order does, and those after it see it in `Doing` (`ended`) and leave it. A batch
//! of log lines alone changes nothing but what is news (an alert): only `news` runs for it.

mod doing;
pub mod fallback;
pub mod gpu_idle;
pub mod guards;
pub mod idle;
pub mod ledgers;
pub mod news;
pub mod recoverer;
pub mod recovery;
mod settings;
pub mod watch;

pub use doing::Doing;
pub use settings::Settings;

use super::Command;
use super::clock::Now;
use super::notice::Notice;
use super::world::World;
use crate::notify::Message;

/// A policy: one entry point, and the principal its commands pass the gate as.
pub trait Policy {
    /// Who its commands are from, in the audit file (`gantry (guard)`).
    fn principal(&self) -> &'static str;

    /// What it calls for now.
    fn decide(&mut self, world: &World, doing: &Doing, settings: &Settings, now: Now) -> Decisions;
}

/// What a policy calls for.
#[derive(Debug, Default, PartialEq)]
pub struct Decisions {
    pub notices: Vec<Notice>,
    pub commands: Vec<Command>,
}

impl Decisions {
    pub fn tell(notice: Notice) -> Decisions {
        Decisions {
            notices: vec![notice],
            commands: Vec::new(),
        }
    }

    pub fn run(command: Command) -> Decisions {
        Decisions {
            notices: Vec::new(),
            commands: vec![command],
        }
    }

    fn extend(&mut self, other: Decisions) {
        self.notices.extend(other.notices);
        self.commands.extend(other.commands);
    }
}

/// A command a policy decided, with the principal it passes the gate as.
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    pub by: &'static str,
    pub command: Command,
}

/// What one round decided: the commands in order, what is told, and the messages to send.
#[derive(Debug, Default, PartialEq)]
pub struct Round {
    pub commands: Vec<Decided>,
    pub notices: Vec<Notice>,
    pub messages: Vec<Message>,
}

/// Every policy, each with its memory.
#[derive(Debug, Default)]
pub struct Policies {
    pub recoverer: recoverer::Recoverer,
    pub ends: ledgers::EndsLedger,
    pub recovery: recovery::Recovery,
    pub fallback: fallback::Fallback,
    pub guards: guards::Guards,
    pub gpu_idle: gpu_idle::GpuIdle,
    pub watch: watch::Watch,
    pub idle: idle::Idle,
    pub cost: ledgers::CostLedger,
    pub news: news::News,
}

impl Policies {
    /// The policies that decide notices and commands, in the order above (`news` comes last).
    fn in_order(&mut self) -> [&mut dyn Policy; 9] {
        [
            &mut self.recoverer,
            &mut self.ends,
            &mut self.recovery,
            &mut self.fallback,
            &mut self.guards,
            &mut self.gpu_idle,
            &mut self.watch,
            &mut self.idle,
            &mut self.cost,
        ]
    }

    /// One round, in the order above. `told` is what the world told as the batch was folded;
    /// `judge`: the batch held more than log lines. `doing` learns each command as it is
    /// decided, so a policy later in the order sees what one before it did.
    pub fn decide(
        &mut self,
        world: &World,
        doing: &mut Doing,
        settings: &Settings,
        told: &[Notice],
        judge: bool,
        now: Now,
    ) -> Round {
        let mut round = Round::default();
        if judge {
            for policy in self.in_order() {
                let decisions = policy.decide(world, doing, settings, now);
                let by = policy.principal();
                for command in &decisions.commands {
                    doing.decided(command);
                }
                round.notices.extend(decisions.notices);
                round.commands.extend(
                    decisions
                        .commands
                        .into_iter()
                        .map(|command| Decided { by, command }),
                );
            }
        }
        let all: Vec<&Notice> = told.iter().chain(round.notices.iter()).collect();
        round.messages = self.news.decide(world, &all, settings, now);
        round
    }
}

#[cfg(test)]
pub mod fixtures;
