//! The aggregate of one metric across the ranks of an attempt: per x, the lowest, the mean and
//! the highest value the ranks reported. Ranks report the same step at different moments, so
//! the latest steps wait in a window until every rank has reported them (or the window is
//! full), and then go into three bounded [`Series`], in x order, each step once.

use std::collections::VecDeque;
use std::mem::size_of;

use super::series::Series;

/// Steps waiting for their last ranks; older ones are let go with the ranks they have. The
/// tail brings a pod's lines hundreds at a time, so one rank runs that many steps ahead of the
/// next: the window holds a few such batches (it grows only as far as it is used).
pub const WINDOW: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Acc {
    /// `x` as [`order_key`] orders it.
    key: i64,
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
    /// The order key of the last step settled: a value at or before it comes from a rank
    /// that fell more than the window behind, and is left out (its own series has it).
    settled: Option<i64>,
    /// Where the last value went: a rank reports its steps in order, so its next value is
    /// usually for the step just after.
    cursor: usize,
    /// Steps that may wait ([`WINDOW`]).
    window: usize,
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
            settled: None,
            cursor: 0,
            window: WINDOW,
        }
    }

    /// A band whose steps wait in a window of `window` steps.
    #[cfg(test)]
    fn with_window(buckets: usize, window: usize) -> Self {
        Self {
            window,
            ..Self::new(buckets)
        }
    }

    /// One rank's value at `x`, of `ranks` ranks that report each step; how many bytes the
    /// band grew by.
    pub fn push(&mut self, x: f64, y: f64, ranks: usize) -> usize {
        if !x.is_finite() {
            return 0;
        }
        let finite = y.is_finite();
        let key = order_key(x);
        if self.settled.is_some_and(|s| key <= s) {
            return 0;
        }
        let mut grown = 0;
        let index = match self.find(key) {
            Ok(i) => i,
            Err(i) => {
                let before = self.pending.capacity();
                let acc = Acc {
                    key,
                    x,
                    min: f64::INFINITY,
                    max: f64::NEG_INFINITY,
                    sum: 0.0,
                    finite: 0,
                    seen: 0,
                };
                // The first rank to report a step puts it at the back.
                if i == self.pending.len() {
                    self.pending.push_back(acc);
                } else {
                    self.pending.insert(i, acc);
                }
                grown += (self.pending.capacity() - before) * size_of::<Acc>();
                i
            }
        };
        self.cursor = index;
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
            let full = self.pending.len() > self.window;
            if first.seen < ranks && !full {
                break;
            }
            if let Some(acc) = self.pending.pop_front() {
                grown += self.settle(acc);
                self.cursor = self.cursor.saturating_sub(1);
            }
        }
        grown
    }

    /// Where the step of `key` waits, or where it would go: just after the last value's step,
    /// at it, at the back, else found by halving.
    fn find(&self, key: i64) -> Result<usize, usize> {
        let key_at = |i: usize| self.pending.get(i).map(|a| a.key);
        if key_at(self.cursor + 1) == Some(key) {
            return Ok(self.cursor + 1);
        }
        if key_at(self.cursor) == Some(key) {
            return Ok(self.cursor);
        }
        match self.pending.back() {
            Some(last) if last.key == key => Ok(self.pending.len() - 1),
            Some(last) if last.key < key => Err(self.pending.len()),
            None => Err(0),
            Some(_) => self.pending.binary_search_by_key(&key, |a| a.key),
        }
    }

    /// Lets every waiting step go into the series (the stream has ended).
    pub fn flush(&mut self) {
        while let Some(acc) = self.pending.pop_front() {
            self.settle(acc);
        }
        self.cursor = 0;
    }

    /// Puts a step into the series; how many bytes they grew by.
    fn settle(&mut self, acc: Acc) -> usize {
        self.settled = Some(acc.key);
        match point(&acc) {
            Some(p) => {
                self.lower.push(p.x, p.min)
                    + self.mean.push(p.x, p.mean)
                    + self.upper.push(p.x, p.max)
            }
            None => 0,
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
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    /// The band's rules, plainly: every step's values in a sorted map; the first step settles
    /// when every rank has reported it or too many wait; a value at or before a settled step is
    /// left out.
    #[derive(Default)]
    struct World {
        pending: BTreeMap<i64, (f64, Vec<f64>)>,
        settled_key: Option<i64>,
        settled: Vec<BandPoint>,
    }

    impl World {
        fn push(&mut self, x: f64, y: f64, ranks: usize, window: usize) {
            let key = order_key(x);
            if self.settled_key.is_some_and(|s| key <= s) {
                return;
            }
            self.pending.entry(key).or_insert((x, Vec::new())).1.push(y);
            while let Some((_, (_, ys))) = self.pending.first_key_value() {
                if ys.len() < ranks && self.pending.len() <= window {
                    break;
                }
                let (key, (x, ys)) = self.pending.pop_first().unwrap();
                self.settled_key = Some(key);
                self.settled.extend(model_point(x, &ys));
            }
        }
    }

    fn model_point(x: f64, ys: &[f64]) -> Option<BandPoint> {
        let finite: Vec<f64> = ys.iter().copied().filter(|y| y.is_finite()).collect();
        (!finite.is_empty()).then(|| BandPoint {
            x,
            min: finite.iter().copied().fold(f64::INFINITY, f64::min),
            mean: finite.iter().sum::<f64>() / finite.len() as f64,
            max: finite.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }

    proptest! {
        #[test]
        fn a_band_settles_its_steps_as_a_plain_model_of_its_rules_does(
            pushes in prop::collection::vec((0u8..48, -4i8..4, 0u8..8), 0..300),
            ranks in 1usize..5,
            window in 1usize..12,
        ) {
            let mut band = Band::with_window(4096, window);
            let mut model = World::default();
            for (step, y, kind) in pushes {
                let y = if kind == 0 { f64::NAN } else { f64::from(y) / 4.0 };
                band.push(f64::from(step), y, ranks);
                model.push(f64::from(step), y, ranks, window);
            }
            let waiting: Vec<BandPoint> = model
                .pending
                .values()
                .filter_map(|(x, ys)| model_point(*x, ys))
                .collect();
            prop_assert_eq!(band.pending().collect::<Vec<_>>(), waiting);
            let settled = |s: &Series| s.points().map(|p| (p.x, p.y)).collect::<Vec<_>>();
            let model_of = |f: fn(&BandPoint) -> f64| {
                model.settled.iter().map(|p| (p.x, f(p))).collect::<Vec<_>>()
            };
            prop_assert_eq!(settled(band.lower()), model_of(|p| p.min));
            prop_assert_eq!(settled(band.mean()), model_of(|p| p.mean));
            prop_assert_eq!(settled(band.upper()), model_of(|p| p.max));
        }
    }

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
    fn ranks_that_each_report_a_batch_of_steps_settle_each_step_once_with_all_of_them() {
        let mut band = Band::new(1024);
        for rank in 0..4 {
            for step in 0..300 {
                band.push(step as f64, f64::from(rank), 4);
            }
        }
        assert_eq!(band.pending().count(), 0);
        assert_eq!(band.mean().summary().count, 300);
        for (lower, upper) in band.lower().points().zip(band.upper().points()) {
            assert_eq!((lower.y, upper.y), (0.0, 3.0), "at step {}", lower.x);
        }
    }

    #[test]
    fn a_value_for_a_step_already_settled_is_left_out_of_the_band() {
        let mut band = Band::new(16);
        band.push(1.0, 1.0, 2);
        band.push(1.0, 3.0, 2);
        band.push(1.0, 100.0, 2);
        band.push(0.0, 100.0, 2);
        assert_eq!(band.pending().count(), 0);
        let summary = band.upper().summary();
        assert_eq!((summary.count, summary.max.unwrap().y), (1, 3.0));
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
