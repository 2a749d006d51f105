//! Every point for scripts: one JSON document
//! (`{"sources": [{"source": …, "metrics": {"loss": [[x, value], …]}}]}`, a non-finite value as
//! `null`) or CSV (`source,metric,x,value`, RFC 4180 quoting, non-finite as `nan`, `inf`,
//! `-inf`). Written one source at a time, so a Job of many pods is never held whole.

use serde::Serialize;
use serde::ser::Serializer;

use super::read::Series;
use crate::output::write_stdout;

/// Output gathered and written in blocks: one write per row would cost a system call each.
#[derive(Debug, Default)]
pub struct Out {
    buf: String,
}

/// Bytes gathered before they are written.
const BLOCK: usize = 64 * 1024;

impl Out {
    pub fn push(&mut self, text: &str) {
        self.buf.push_str(text);
    }

    /// Writes what is gathered once it fills a block. False when stdout is gone.
    pub fn flush_full(&mut self) -> bool {
        self.buf.len() < BLOCK || self.flush()
    }

    /// Writes what is gathered. False when stdout is gone.
    pub fn flush(&mut self) -> bool {
        let ok = self.buf.is_empty() || write_stdout(self.buf.as_bytes());
        self.buf.clear();
        ok
    }
}

/// One element of `sources`, as compact JSON that is inert on a terminal.
pub fn json_source(source: &str, series: &[Series]) -> serde_json::Result<String> {
    #[derive(Serialize)]
    struct Source<'a> {
        source: &'a str,
        metrics: Metrics<'a>,
    }
    crate::sanitize::to_json(&Source {
        source,
        metrics: Metrics(series),
    })
}

/// The series as one JSON object, in the order the metrics first appeared.
struct Metrics<'a>(&'a [Series]);

impl Serialize for Metrics<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|s| (&s.name, Points(&s.points))))
    }
}

struct Points<'a>(&'a [(f64, f64)]);

impl Serialize for Points<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(
            self.0
                .iter()
                .map(|&(x, value)| (X(x), value.is_finite().then_some(value))),
        )
    }
}

/// A step as a whole number (`10`, not `10.0`); an epoch as the fraction it is.
struct X(f64);

impl Serialize for X {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match whole(self.0) {
            Some(n) => serializer.serialize_i64(n),
            None => serializer.serialize_f64(self.0),
        }
    }
}

/// `x` as an integer when it is one that a double holds exactly.
fn whole(x: f64) -> Option<i64> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    (x.fract() == 0.0 && x.abs() <= EXACT).then_some(x as i64)
}

pub const CSV_HEADER: &str = "source,metric,x,value\n";

/// The CSV rows of one source, written as they fill blocks. False when stdout is gone.
pub fn csv_rows(out: &mut Out, source: &str, series: &[Series]) -> bool {
    let mut source_field = String::new();
    csv_field(&mut source_field, source);
    for s in series {
        let mut prefix = source_field.clone();
        prefix.push(',');
        csv_field(&mut prefix, &s.name);
        prefix.push(',');
        for &(x, value) in &s.points {
            out.push(&prefix);
            out.push(&csv_number(x));
            out.push(",");
            out.push(&csv_number(value));
            out.push("\n");
            if !out.flush_full() {
                return false;
            }
        }
    }
    true
}

/// A field as RFC 4180 has it: quoted, with quotes doubled, when it holds a comma, a quote or
/// a line break.
fn csv_field(out: &mut String, text: &str) {
    if text.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&text.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(text);
    }
}

/// A number every CSV reader parses back to the same value: whole numbers without a point,
/// others in the shortest form that reads back exactly (`4.9e-5`), `nan`, `inf`, `-inf`.
fn csv_number(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.into()
    } else if let Some(n) = whole(v) {
        n.to_string()
    } else {
        format!("{v:?}")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn series(name: &str, points: &[(f64, f64)]) -> Series {
        Series {
            name: name.into(),
            points: points.to_vec(),
        }
    }

    #[test]
    fn json_keeps_first_appearance_order_and_writes_non_finite_as_null() {
        let text = json_source(
            "pod-a",
            &[
                series("zeta", &[(1.0, 0.5), (2.5, f64::NAN)]),
                series("alpha", &[(1.0, f64::INFINITY), (2.0, 3e-4)]),
            ],
        )
        .unwrap();
        assert_eq!(
            text,
            r#"{"source":"pod-a","metrics":{"zeta":[[1,0.5],[2.5,null]],"alpha":[[1,null],[2,0.0003]]}}"#
        );
    }

    #[test]
    fn csv_fields_are_quoted_as_rfc_4180_says() {
        let mut out = String::new();
        for field in ["plain", "a,b", "say \"hi\"", "two\nlines", "cr\rhere"] {
            csv_field(&mut out, field);
            out.push('|');
        }
        assert_eq!(
            out,
            "plain|\"a,b\"|\"say \"\"hi\"\"\"|\"two\nlines\"|\"cr\rhere\"|"
        );
    }

    #[test]
    fn csv_numbers_read_back_exactly() {
        for v in [0.1234, 4.9e-5, 1e300, -2.5, 0.30000000000000004] {
            assert_eq!(csv_number(v).parse::<f64>().unwrap(), v, "{v}");
        }
        assert_eq!(csv_number(10.0), "10");
        assert_eq!(csv_number(f64::NAN), "nan");
        assert_eq!(csv_number(f64::NEG_INFINITY), "-inf");
    }
}
