//! The aggregate of one metric across the ranks of an attempt: per x, the lowest, the mean and
//! the highest value the ranks reported. Ranks report the same step at different moments, so
//! the latest steps wait in a small window until every rank has reported them (or the window
//! is full), and then go into three bounded [`Series`], in x order.

use std::collections::VecDeque;
use std::mem::size_of;

use super::series::Series;

/// Steps waiting for their last ranks; older ones are let go with the ranks they have.
pub const WINDOW: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Acc {
    x: f64,
    min: f64,
    max: f64,
    sum: f64,
    finite: u32,
    seen: u32,
}

/// A band across ranks: lower, mean and upper series.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    lower: Series,
    mean: Series,
    upper: Series,
    /// Steps waiting, in x order. New steps come at or near the back, so it is searched
    /// from there.
    pending: VecDeque<Acc>,
}

/// One step of the band.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BandPoint {
    pub x: f64,
    pub min: f64,
    pub mean: f64,
    pub max: f64,
}

impl Band {
    pub fn new(buckets: usize) -> Self {
        Self {
            lower: Series::new(buckets),
            mean: Series::new(buckets),
            upper: Series::new(buckets),
            pending: VecDeque::new(),
        }
    }

    /// One rank's value at `x`, of `ranks` ranks that report each step.
    pub fn push(&mut self, x: f64, y: f64, ranks: usize) {
        if !x.is_finite() {
            return;
        }
        let finite = y.is_finite();
        let key = order_key(x);
        // Most values are for the newest step; the others are found by halving.
        let found = match self.pending.back() {
            Some(last) if order_key(last.x) == key => Ok(self.pending.len() - 1),
            Some(last) if order_key(last.x) < key => Err(self.pending.len()),
            None => Err(0),
            Some(_) => self.pending.binary_search_by(|a| order_key(a.x).cmp(&key)),
        };
        let index = match found {
            Ok(i) => i,
            Err(i) => {
                self.pending.insert(
                    i,
                    Acc {
                        x,
                        min: f64::INFINITY,
                        max: f64::NEG_INFINITY,
                        sum: 0.0,
                        finite: 0,
                        seen: 0,
                    },
                );
                i
            }
        };
        let acc = &mut self.pending[index];
        acc.seen += 1;
        if finite {
            acc.min = acc.min.min(y);
            acc.max = acc.max.max(y);
            acc.sum += y;
            acc.finite += 1;
        }
        let ranks = u32::try_from(ranks.max(1)).unwrap_or(u32::MAX);
        while let Some(first) = self.pending.front() {
            let full = self.pending.len() > WINDOW;
            if first.seen < ranks && !full {
                break;
            }
            if let Some(acc) = self.pending.pop_front() {
                self.settle(acc);
            }
        }
    }

    /// Lets every waiting step go into the series (the stream has ended).
    pub fn flush(&mut self) {
        while let Some(acc) = self.pending.pop_front() {
            self.settle(acc);
        }
    }

    fn settle(&mut self, acc: Acc) {
        if let Some(p) = point(&acc) {
            self.lower.push(p.x, p.min);
            self.mean.push(p.x, p.mean);
            self.upper.push(p.x, p.max);
        }
    }

    pub fn lower(&self) -> &Series {
        &self.lower
    }

    pub fn mean(&self) -> &Series {
        &self.mean
    }

    pub fn upper(&self) -> &Series {
        &self.upper
    }

    /// The steps still waiting for ranks, in x order, as they stand.
    pub fn pending(&self) -> impl Iterator<Item = BandPoint> + '_ {
        self.pending.iter().filter_map(point)
    }

    pub fn bytes(&self) -> usize {
        let pending = self.pending.capacity() * size_of::<Acc>();
        size_of::<Self>() - 3 * size_of::<Series>()
            + self.lower.bytes()
            + self.mean.bytes()
            + self.upper.bytes()
            + pending
    }

    pub fn shrink_to(&mut self, buckets: usize) {
        for s in [&mut self.lower, &mut self.mean, &mut self.upper] {
            s.shrink_to(buckets);
        }
    }

    pub fn limit(&self) -> usize {
        self.lower.limit()
    }
}

fn point(acc: &Acc) -> Option<BandPoint> {
    (acc.finite > 0).then(|| BandPoint {
        x: acc.x,
        min: acc.min,
        mean: acc.sum / f64::from(acc.finite),
        max: acc.max,
    })
}

/// An integer ordered as the finite floats are (`-0.0` as `0.0`).
fn order_key(x: f64) -> i64 {
    let bits = (x + 0.0).to_bits() as i64;
    bits ^ (((bits >> 63) as u64) >> 1) as i64
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_step_settles_when_every_rank_has_reported_it() {
        let mut band = Band::new(16);
        band.push(1.0, 3.0, 3);
        band.push(1.0, 1.0, 3);
        assert_eq!(band.mean().summary().count, 0);
        assert_eq!(
            band.pending().collect::<Vec<_>>(),
            [BandPoint {
                x: 1.0,
                min: 1.0,
                mean: 2.0,
                max: 3.0
            }]
        );
        band.push(1.0, f64::NAN, 3);
        assert_eq!(band.pending().count(), 0);
        assert_eq!(band.lower().summary().latest.unwrap().y, 1.0);
        assert_eq!(band.mean().summary().latest.unwrap().y, 2.0);
        assert_eq!(band.upper().summary().latest.unwrap().y, 3.0);
    }

    #[test]
    fn steps_settle_in_x_order_even_when_ranks_lag() {
        let mut band = Band::new(16);
        band.push(2.0, 5.0, 2);
        band.push(1.0, 4.0, 2);
        band.push(2.0, 7.0, 2);
        // Step 2 is complete but waits for step 1, which is not.
        assert_eq!(band.mean().summary().count, 0);
        band.push(1.0, 6.0, 2);
        let xs: Vec<_> = band.mean().points().map(|p| (p.x, p.y)).collect();
        assert_eq!(xs, [(1.0, 5.0), (2.0, 6.0)]);
    }

    #[test]
    fn the_window_lets_old_steps_go_with_the_ranks_they_have() {
        let mut band = Band::new(16);
        for step in 0..=WINDOW {
            band.push(step as f64, 1.0, 8);
        }
        assert_eq!(band.pending().count(), WINDOW);
        assert_eq!(band.mean().summary().latest.unwrap().x, 0.0);
        band.flush();
        assert_eq!(band.pending().count(), 0);
        assert_eq!(band.mean().summary().count, WINDOW as u64 + 1);
    }

    #[test]
    fn the_order_key_orders_as_the_numbers_do() {
        let xs = [-1e9, -2.5, -0.0, 0.0, 1e-300, 3.0, 1e12];
        for w in xs.windows(2) {
            assert!(order_key(w[0]) <= order_key(w[1]), "{w:?}");
        }
        assert_eq!(order_key(-0.0), order_key(0.0));
    }
}
