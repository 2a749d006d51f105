//! One source's log, as raw bytes, to every point of every metric it prints: the same stream
//! the TUI reads a live pod through (`\r` updates, lines split anywhere), with nothing
//! downsampled, so a script gets exactly what the log says.

use std::collections::HashMap;
use std::io::{self, Read};

use crate::metrics::pieces::Sample;

/// One metric's points `(x, value)`, in the order the log gave them.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// Every metric of one log, in the order each first appeared.
pub fn read(source: impl Read) -> io::Result<Vec<Series>> {
    let mut found = Found::default();
    crate::metrics::read::samples(source, |sample| found.add(sample))?;
    Ok(found.series)
}

#[derive(Default)]
struct Found {
    series: Vec<Series>,
    index: HashMap<String, usize>,
}

impl Found {
    fn add(&mut self, sample: &Sample<'_>) {
        for (name, value) in sample.metrics() {
            let i = match self.index.get(name) {
                Some(&i) => i,
                None => {
                    self.index.insert(name.to_string(), self.series.len());
                    self.series.push(Series {
                        name: name.to_string(),
                        points: Vec::new(),
                    });
                    self.series.len() - 1
                }
            };
            self.series[i].points.push((sample.x, value));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Gives out its bytes a few at a time, as a pipe or a slow disk may.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(buf.len()).min(3);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_log_read_in_tiny_pieces_gives_the_points_of_the_whole_log() {
        let log =
            b"step 1 | loss: 2.5 | lr: 3e-4\nstep 2 | loss: 1.5 | lr: 3e-4\rstep 3 | loss: nan";
        let whole = read(&log[..]).unwrap();
        // NaN is never equal to itself: compared as printed.
        assert_eq!(
            format!("{:?}", read(Trickle(log)).unwrap()),
            format!("{whole:?}")
        );
        assert_eq!(whole[0].name, "loss");
        assert_eq!(whole[0].points[..2], [(1.0, 2.5), (2.0, 1.5)]);
        assert!(whole[0].points[2].1.is_nan(), "{whole:?}");
        assert_eq!(whole[1].name, "lr");
    }

    #[test]
    fn a_log_without_metrics_gives_none() {
        assert!(read(&b"Starting training\nDone.\n"[..]).unwrap().is_empty());
    }
}
