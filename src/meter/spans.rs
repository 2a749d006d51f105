//! The arithmetic of the meter: each node's price per hour over the part of its life that falls
//! between two instants, GKE's fee over the part of that time the cluster existed, and whether
//! some of that time went unwatched. Pure: instants are parameters.

use jiff::Timestamp;

/// An unwatched gap shorter than this is taken as watched: timestamps are to the second, clocks
/// drift a little, and no node registers, runs and is removed again in so short a time.
pub const GAP_TOLERATED_SECONDS: i64 = 30;

/// A node's price per hour.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PerHour {
    Known(f64),
    /// Part of it (its machine and GPUs, without its boot disk): a figure with it is partial.
    AtLeast(f64),
    /// The price snapshot lacks it: a figure with it is unknown.
    Unknown,
}

/// One node's life: from its creation until it was seen deleted (`None`: alive).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeSpan {
    pub name: String,
    pub per_hour: PerHour,
    pub from: Timestamp,
    pub to: Option<Timestamp>,
}

/// A stretch of time someone watched the nodes (`to: None`: still watching).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stretch {
    pub from: Timestamp,
    pub to: Option<Timestamp>,
}

/// What some time cost: US dollars (`None`: a price is unknown), and whether that is only a
/// lower bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure {
    pub usd: Option<f64>,
    pub partial: bool,
}

impl Figure {
    /// Nothing, known exactly.
    pub const NOTHING: Figure = Figure {
        usd: Some(0.0),
        partial: false,
    };

    /// Both together: unknown if either is, partial if either is.
    pub fn plus(self, other: Figure) -> Figure {
        Figure {
            usd: self.usd.zip(other.usd).map(|(a, b)| a + b),
            partial: self.partial || other.partial,
        }
    }
}

/// The cluster as far as its cost goes.
#[derive(Debug, Clone, Copy)]
pub struct Meter<'a> {
    pub spans: &'a [NodeSpan],
    /// GKE's management fee per hour, for every hour the cluster exists.
    pub fee_per_hour: f64,
    /// When the cluster was created: no fee before (`None`: not known, the fee counts from the
    /// start of any interval asked about).
    pub cluster_created: Option<Timestamp>,
    /// When the nodes were watched.
    pub watched: &'a [Stretch],
}

impl Meter<'_> {
    /// What the cluster cost from `from` to `to` (nothing when `to` is not later).
    pub fn between(&self, from: Timestamp, to: Timestamp) -> Figure {
        if to <= from {
            return Figure::NOTHING;
        }
        let existed = self.cluster_created.map_or(from, |c| c.max(from));
        let mut figure = Figure {
            usd: Some(self.fee_per_hour * hours(existed, to)),
            partial: longest_gap_ms(self.watched, existed, to) > GAP_TOLERATED_SECONDS * 1000,
        };
        for span in self.spans {
            let lived = hours(span.from.max(from), span.to.map_or(to, |t| t.min(to)));
            if lived <= 0.0 {
                continue;
            }
            let (price, partial) = match span.per_hour {
                PerHour::Known(p) => (Some(p), false),
                PerHour::AtLeast(p) => (Some(p), true),
                PerHour::Unknown => (None, false),
            };
            figure = figure.plus(Figure {
                usd: price.map(|p| p * lived),
                partial,
            });
        }
        figure
    }
}

/// Hours from `from` to `to`; 0 when `to` is not later.
pub fn hours(from: Timestamp, to: Timestamp) -> f64 {
    (to.as_millisecond() - from.as_millisecond()).max(0) as f64 / 3_600_000.0
}

/// The longest stretch of `[from, to)` that no watched stretch covers, in milliseconds.
fn longest_gap_ms(watched: &[Stretch], from: Timestamp, to: Timestamp) -> i64 {
    let mut stretches: Vec<&Stretch> = watched.iter().collect();
    stretches.sort_by_key(|s| s.from);
    let mut covered_to = from;
    let mut longest = 0;
    for s in stretches {
        if s.from >= to {
            break;
        }
        if s.from > covered_to {
            longest = longest.max(ms(covered_to, s.from));
        }
        let end = s.to.unwrap_or(to);
        covered_to = covered_to.max(end);
        if covered_to >= to {
            return longest;
        }
    }
    longest.max(ms(covered_to, to))
}

fn ms(from: Timestamp, to: Timestamp) -> i64 {
    (to.as_millisecond() - from.as_millisecond()).max(0)
}
