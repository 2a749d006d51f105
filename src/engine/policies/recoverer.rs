//! Who recovers: the engine that holds the recoverer's Lease. An engine that may act takes it
//! when there is none or it names nobody, and takes it over when its holder has been silent —
//! its record unchanged by this engine's own clock — for the Lease's duration. Never by the
//! times the record claims: a record that says it was renewed in 2099 is taken over 15 s after
//! it was first seen unchanged, and an engine whose wall clock is wrong neither takes a healthy
//! holder's Lease nor loses its own. The take goes through the gate (audited as the
//! recoverer's); the world tells how it went.
//!
//! The cluster's watcher comes first: a local engine that holds the Lease while the watcher's
//! pod is ready lets it go (through the gate), and takes an unheld Lease only once it has been
//! unheld for the Lease's duration — the watcher takes it long before that. A dead watcher's
//! Lease goes silent and is taken over like any other: better a laptop recovers than nobody.

use std::time::Duration;

use super::{Decisions, Doing, Settings};
use crate::engine::Command;
use crate::engine::clock::Now;
use crate::engine::world::World;
use crate::k8s::lease::LEASE_SECONDS;

/// How long a holder may be silent before it is taken over.
pub const SILENCE: Duration = Duration::from_secs(LEASE_SECONDS as u64);

#[derive(Debug, Default)]
pub struct Recoverer;

impl super::Policy for Recoverer {
    fn principal(&self) -> &'static str {
        "recoverer"
    }

    fn decide(&mut self, world: &World, doing: &Doing, settings: &Settings, now: Now) -> Decisions {
        let lease = &world.lease;
        if !settings.may_act || !world.connected || !lease.read() {
            return Decisions::default();
        }
        if doing.taking_lease {
            return Decisions::default();
        }
        let watcher_ready = !settings.in_cluster && lease.watcher.as_ref().is_some_and(|w| w.ready);
        if lease.mine() {
            return if watcher_ready {
                Decisions::run(Command::GiveWayLease)
            } else {
                Decisions::default()
            };
        }
        let judged = lease.record().cloned().map(Box::new);
        let command = match lease.holder() {
            None => {
                let unheld = lease.silent_for(now.mono).unwrap_or_default();
                if watcher_ready && unheld < SILENCE {
                    return Decisions::default();
                }
                Command::TakeLease {
                    from: None,
                    silent: None,
                    judged,
                }
            }
            Some(holder) => {
                let silent = lease.silent_for(now.mono).unwrap_or_default();
                if silent < SILENCE {
                    return Decisions::default();
                }
                Command::TakeLease {
                    from: Some(holder.identity),
                    silent: Some(silent),
                    judged,
                }
            }
        };
        Decisions::run(command)
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::engine::policies::Policy;
    use crate::engine::policies::fixtures;
    use crate::engine::world::lease::Reading;
    use crate::k8s::lease::Record;

    fn stranger() -> Record {
        Record {
            holder: Some("stranger".into()),
            renew_time: "2099-01-01T00:00:00Z".parse().ok(),
            transitions: 0,
            version: Some("9".into()),
            stamp: Default::default(),
        }
    }

    fn world_seeing(record: Option<Record>, at: Instant) -> World {
        let mut world = fixtures::connected();
        world.lease.saw(
            Reading {
                record,
                mine: false,
            },
            at,
        );
        world
    }

    fn decide(world: &World, settings: &Settings, mono: Instant) -> Decisions {
        let now = Now {
            wall: fixtures::at(0),
            mono,
        };
        Recoverer.decide(world, &Doing::default(), settings, now)
    }

    #[test]
    fn a_record_claiming_renewal_in_2099_is_taken_over_after_15_s_unchanged() {
        let t0 = Instant::now();
        let world = world_seeing(Some(stranger()), t0);
        let settings = Settings::default();
        assert_eq!(
            decide(&world, &settings, t0 + Duration::from_secs(14)),
            Decisions::default()
        );
        let taken = decide(&world, &settings, t0 + Duration::from_secs(15));
        assert_eq!(
            taken.commands,
            vec![Command::TakeLease {
                from: Some("stranger".into()),
                silent: Some(Duration::from_secs(15)),
                judged: Some(Box::new(stranger())),
            }]
        );
    }

    #[test]
    fn a_lease_nobody_holds_is_taken_at_once_and_a_read_only_engine_takes_nothing() {
        let t0 = Instant::now();
        let world = world_seeing(None, t0);
        let taken = decide(&world, &Settings::default(), t0);
        assert!(matches!(
            taken.commands.as_slice(),
            [Command::TakeLease { from: None, .. }]
        ));
        let read_only = Settings {
            may_act: false,
            ..Settings::default()
        };
        let later = t0 + Duration::from_secs(60);
        assert_eq!(decide(&world, &read_only, later), Decisions::default());
        let silent_stranger = world_seeing(Some(stranger()), t0);
        assert_eq!(
            decide(&silent_stranger, &read_only, later),
            Decisions::default()
        );
    }

    #[test]
    fn a_holder_that_renews_is_never_taken_over() {
        let t0 = Instant::now();
        let mut world = world_seeing(Some(stranger()), t0);
        for s in (5..=60).step_by(5) {
            let mut renewed = stranger();
            renewed.renew_time = jiff::Timestamp::from_second(s).ok();
            world.lease.saw(
                Reading {
                    record: Some(renewed),
                    mine: false,
                },
                t0 + Duration::from_secs(s as u64),
            );
            let at = t0 + Duration::from_secs(s as u64 + 4);
            assert_eq!(
                decide(&world, &Settings::default(), at),
                Decisions::default()
            );
        }
    }

    fn watcher_ready() -> Option<crate::engine::world::lease::WatcherSeen> {
        Some(crate::engine::world::lease::WatcherSeen {
            ready: true,
            version: Some("0.4.0".into()),
            there: Default::default(),
        })
    }

    #[test]
    fn a_local_holder_gives_way_to_a_ready_watcher_and_the_watcher_never_does() {
        let t0 = Instant::now();
        let mut world = fixtures::connected();
        let mine = Record {
            holder: Some("alice@laptop pid 7".into()),
            ..stranger()
        };
        world.lease.saw(
            Reading {
                record: Some(mine),
                mine: true,
            },
            t0,
        );
        assert_eq!(
            decide(&world, &Settings::default(), t0),
            Decisions::default()
        );
        world.lease.watcher = watcher_ready();
        assert_eq!(
            decide(&world, &Settings::default(), t0).commands,
            vec![Command::GiveWayLease]
        );
        let watcher = Settings {
            in_cluster: true,
            ..Settings::default()
        };
        assert_eq!(decide(&world, &watcher, t0), Decisions::default());
    }

    #[test]
    fn while_the_watcher_is_ready_an_unheld_lease_is_left_to_it_for_15_s_then_taken() {
        let t0 = Instant::now();
        let mut world = world_seeing(
            Some(Record {
                holder: None,
                ..stranger()
            }),
            t0,
        );
        world.lease.watcher = watcher_ready();
        let settings = Settings::default();
        assert_eq!(
            decide(&world, &settings, t0 + Duration::from_secs(14)),
            Decisions::default()
        );
        assert!(matches!(
            decide(&world, &settings, t0 + Duration::from_secs(15))
                .commands
                .as_slice(),
            [Command::TakeLease { from: None, .. }]
        ));
        let watcher = Settings {
            in_cluster: true,
            ..Settings::default()
        };
        assert!(matches!(
            decide(&world, &watcher, t0).commands.as_slice(),
            [Command::TakeLease { from: None, .. }]
        ));
    }
}
