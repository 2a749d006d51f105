//! One metric's points, bounded however long the run. Points go into buckets of equal counts
//! in arrival order, each keeping its lowest and highest point; when the buckets are all used,
//! neighbours merge in pairs and each bucket holds twice as many points from then on. Drawn as
//! each bucket's low and high in x order, a chart keeps the curve's shape, its spikes and its
//! dips at any length (what a line chart of a few hundred columns can show anyway), while the
//! latest, lowest and highest values are kept exactly beside the buckets.

use std::mem::size_of;

/// Buckets of a series unless asked otherwise: twice the points of a 256-column braille
/// chart, 10 KiB.
pub const DEFAULT_BUCKETS: usize = 256;
/// Fewest buckets a series is ever shrunk to.
pub const MIN_BUCKETS: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

/// What is kept exactly, whatever the buckets hold.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Summary {
    /// Points pushed, finite or not.
    pub count: u64,
    /// NaN or infinite points pushed: they are in `latest` and the count, not in the buckets.
    pub non_finite: u64,
    pub latest: Option<Point>,
    pub min: Option<Point>,
    pub max: Option<Point>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Bucket {
    min: Point,
    max: Point,
    count: u64,
}

impl Bucket {
    fn merge(self, other: Bucket) -> Bucket {
        Bucket {
            min: if other.min.y < self.min.y {
                other.min
            } else {
                self.min
            },
            max: if other.max.y > self.max.y {
                other.max
            } else {
                self.max
            },
            count: self.count + other.count,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    buckets: Vec<Bucket>,
    limit: usize,
    per_bucket: u64,
    first: Option<Point>,
    last_finite: Option<Point>,
    summary: Summary,
}

impl Default for Series {
    fn default() -> Self {
        Self::new(DEFAULT_BUCKETS)
    }
}

impl Series {
    /// A series of at most `buckets` buckets (rounded up to an even number, at least
    /// [`MIN_BUCKETS`]).
    pub fn new(buckets: usize) -> Self {
        Self {
            buckets: Vec::new(),
            limit: even_limit(buckets),
            per_bucket: 1,
            first: None,
            last_finite: None,
            summary: Summary::default(),
        }
    }

    /// Adds a point; how many bytes the series grew by (its buckets' allocation).
    pub fn push(&mut self, x: f64, y: f64) -> usize {
        let point = Point { x, y };
        let s = &mut self.summary;
        s.count += 1;
        s.latest = Some(point);
        if !(x.is_finite() && y.is_finite()) {
            s.non_finite += 1;
            return 0;
        }
        if s.min.is_none_or(|m| y < m.y) {
            s.min = Some(point);
        }
        if s.max.is_none_or(|m| y > m.y) {
            s.max = Some(point);
        }
        self.first.get_or_insert(point);
        self.last_finite = Some(point);
        let bucket = Bucket {
            min: point,
            max: point,
            count: 1,
        };
        match self.buckets.last_mut() {
            Some(last) if last.count < self.per_bucket => {
                *last = last.merge(bucket);
                0
            }
            _ => {
                if self.buckets.len() == self.limit {
                    self.halve();
                }
                let before = self.buckets.capacity();
                if self.buckets.len() == before {
                    let grow = before.max(MIN_BUCKETS);
                    self.buckets
                        .reserve_exact(grow.min(self.limit - self.buckets.len()));
                }
                self.buckets.push(bucket);
                (self.buckets.capacity() - before) * size_of::<Bucket>()
            }
        }
    }

    pub fn summary(&self) -> Summary {
        self.summary
    }

    /// The newest point pushed, finite or not.
    pub fn latest(&self) -> Option<Point> {
        self.summary.latest
    }

    /// The points to draw, in arrival order: the first point, each bucket's low and high in x
    /// order, the latest finite point. At most `2 × buckets + 2`.
    pub fn points(&self) -> impl Iterator<Item = Point> + '_ {
        let inner = self.buckets.iter().flat_map(|b| {
            let (a, c) = if b.min.x <= b.max.x {
                (b.min, b.max)
            } else {
                (b.max, b.min)
            };
            [Some(a), (a != c).then_some(c)]
        });
        let mut previous = None;
        self.first
            .into_iter()
            .chain(inner.flatten())
            .chain(self.last_finite)
            .filter(move |p| {
                let repeat = previous == Some(*p);
                previous = Some(*p);
                !repeat
            })
    }

    /// Bytes this series holds (its buckets' allocation and itself).
    pub fn bytes(&self) -> usize {
        size_of::<Self>() + self.buckets.capacity() * size_of::<Bucket>()
    }

    /// Buckets it may use.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Keeps at most `buckets` buckets from now on, merging what is there to fit, and gives
    /// back the memory beyond them.
    pub fn shrink_to(&mut self, buckets: usize) {
        self.limit = even_limit(buckets);
        while self.buckets.len() > self.limit {
            self.halve();
        }
        self.buckets.shrink_to(self.limit);
    }

    /// Merges neighbouring buckets in pairs: every bucket now holds twice as many points.
    fn halve(&mut self) {
        let n = self.buckets.len();
        for i in 0..n / 2 {
            self.buckets[i] = self.buckets[2 * i].merge(self.buckets[2 * i + 1]);
        }
        if n % 2 == 1 {
            self.buckets[n / 2] = self.buckets[n - 1];
        }
        self.buckets.truncate(n.div_ceil(2));
        self.per_bucket *= 2;
    }
}

fn even_limit(buckets: usize) -> usize {
    let b = buckets.max(MIN_BUCKETS);
    b + b % 2
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn a_million_points_keep_the_spike_the_dip_and_the_latest() {
        let mut s = Series::new(64);
        for i in 0..1_000_000u32 {
            let y = match i {
                500_000 => 100.0,
                700_000 => -5.0,
                _ => 1.0 / f64::from(i + 1),
            };
            s.push(f64::from(i), y);
        }
        let points: Vec<_> = s.points().collect();
        assert!(points.len() <= 2 * 64 + 2);
        assert!(points.contains(&Point {
            x: 500_000.0,
            y: 100.0
        }));
        assert!(points.contains(&Point {
            x: 700_000.0,
            y: -5.0
        }));
        assert_eq!(points.first(), Some(&Point { x: 0.0, y: 1.0 }));
        assert_eq!(
            s.summary().latest,
            Some(Point {
                x: 999_999.0,
                y: 1e-6
            })
        );
        assert_eq!(points.last(), s.summary().latest.as_ref());
        assert!(s.bytes() <= size_of::<Series>() + 64 * size_of::<Bucket>());
    }

    #[test]
    fn nan_is_the_latest_but_never_the_minimum_nor_drawn() {
        let mut s = Series::new(8);
        s.push(1.0, 2.0);
        s.push(2.0, f64::NAN);
        let summary = s.summary();
        assert!(summary.latest.unwrap().y.is_nan());
        assert_eq!((summary.count, summary.non_finite), (2, 1));
        assert_eq!(summary.min, Some(Point { x: 1.0, y: 2.0 }));
        assert_eq!(s.points().collect::<Vec<_>>(), [Point { x: 1.0, y: 2.0 }]);
    }

    #[test]
    fn shrinking_keeps_the_extremes_and_frees_the_rest() {
        let mut s = Series::new(256);
        for i in 0..10_000 {
            s.push(f64::from(i), f64::from(i % 97));
        }
        let before = s.bytes();
        s.shrink_to(16);
        assert!(s.bytes() < before);
        assert!(s.points().count() <= 2 * 16 + 2);
        assert!(s.points().any(|p| p.y == 96.0) && s.points().any(|p| p.y == 0.0));
    }

    fn point() -> impl Strategy<Value = (f64, f64)> {
        let y = prop_oneof![
            8 => -1e6f64..1e6,
            1 => Just(f64::NAN),
            1 => Just(f64::INFINITY),
        ];
        (-1e3f64..1e6, y)
    }

    proptest! {
        #[test]
        fn the_exact_values_and_the_bound_hold_against_every_point_kept(
            points in proptest::collection::vec(point(), 0..3000),
            buckets in 0usize..40,
        ) {
            let mut s = Series::new(buckets);
            for &(x, y) in &points {
                s.push(x, y);
                prop_assert!(s.buckets.len() <= s.limit());
                prop_assert!(s.bytes() <= size_of::<Series>() + s.limit() * size_of::<Bucket>());
            }
            let finite: Vec<_> = points.iter().filter(|p| p.1.is_finite()).collect();
            let summary = s.summary();
            prop_assert_eq!(summary.count, points.len() as u64);
            prop_assert_eq!(summary.non_finite, (points.len() - finite.len()) as u64);
            let latest = summary.latest.map(|p| (p.x, p.y.to_bits()));
            prop_assert_eq!(latest, points.last().map(|p| (p.0, p.1.to_bits())));
            let min = finite.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
            let max = finite.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
            prop_assert_eq!(summary.min.map(|p| p.y), (!finite.is_empty()).then_some(min));
            prop_assert_eq!(summary.max.map(|p| p.y), (!finite.is_empty()).then_some(max));
            let drawn: Vec<_> = s.points().collect();
            prop_assert!(drawn.len() <= 2 * s.limit() + 2);
            prop_assert!(drawn.iter().all(|d| finite.iter().any(|p| p.0 == d.x && p.1 == d.y)));
            if !finite.is_empty() {
                prop_assert!(drawn.iter().any(|d| d.y == min) && drawn.iter().any(|d| d.y == max));
            }
        }
    }
}
