//! The Prometheus text exposition format (0.0.4), as the exporter serves it, read with
//! `prom_text_format_parser` — the one crate found that reads every recorded exporter output
//! (families whose series differ in their labels, files without `# HELP`/`# TYPE`). The format
//! is frozen, the crate small; what it leaves to its caller is done here: label values come
//! back escaped (`\\`, `\"`, `\n`), and values as the text they were.

use prom_text_format_parser::{ScrapeParseError, ValueType, parse_scrape};

use super::DcgmError;

/// One sample line: its metric name, its labels (unescaped, in their order) and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: Vec<(String, String)>,
    /// As Go's `ParseFloat` reads it: `NaN` and `±Inf` included.
    pub value: f64,
}

impl Sample {
    /// The value of label `key`, if it is there.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Every sample of `text`, family by family. A line that is not of the format fails the whole
/// text (the parser says where): an exporter's output is machine-made, so such a text is not
/// an exporter's.
pub fn samples(text: &str) -> Result<Vec<Sample>, DcgmError> {
    // The parser wants one line at least; an exporter with no GPU to tell of prints none.
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let (metrics, error) = parse_scrape(text);
    if let Some(error) = error {
        let first = match error {
            ScrapeParseError::Parse(words) => words.lines().next().unwrap_or_default().to_string(),
            ScrapeParseError::Collect(errors) => errors
                .first()
                .map(|e| format!("line {}: {}", e.line_no.start + 1, e.error))
                .unwrap_or_default(),
        };
        if metrics.is_empty() {
            return Err(DcgmError::Exposition(first));
        }
        // A family the assembler refused (a TYPE after its samples, say) is left out; the rest
        // of the exporter's text still counts.
        tracing::debug!(error = %first, "part of an exporter's text was not read");
    }
    let mut out = Vec::new();
    for metric in metrics {
        for sample in metric.samples {
            if sample.value.value_type != ValueType::Sample {
                continue;
            }
            let value = sample.value.value.parse::<f64>().unwrap_or(f64::NAN);
            let labels = sample
                .labels
                .iter()
                .map(|l| (l.key.clone(), unescape(&l.value)))
                .collect();
            out.push(Sample {
                name: metric.name.clone(),
                labels,
                value,
            });
        }
    }
    Ok(out)
}

/// A label value as it was before the text format escaped it (`\\`, `\"`, `\n`; any other
/// backslash is kept as it is, as Prometheus' own parser does).
fn unescape(value: &str) -> String {
    if !value.contains('\\') {
        return value.to_string();
    }
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('\\') => out.push('\\'),
            Some('"') => out.push('"'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn escaped_label_values_come_back_as_they_were_and_values_as_go_reads_them() {
        let text = "# TYPE m gauge\nm{a=\"x\\\"y,z=w\",b=\"q\\\\r\\nn\"} 1\nm{a=\"2\"} NaN\nm{a=\"3\"} +Inf 1395066363000\nm{a=\"4\"} -1.5e-3\n";
        let samples = samples(text).unwrap();
        assert_eq!(samples.len(), 4);
        assert_eq!(samples[0].label("a"), Some("x\"y,z=w"));
        assert_eq!(samples[0].label("b"), Some("q\\r\nn"));
        assert_eq!(samples[0].label("z"), None);
        assert!(samples[1].value.is_nan());
        assert_eq!(samples[2].value, f64::INFINITY);
        assert_eq!(samples[3].value, -0.0015);
    }

    #[test]
    fn a_text_that_is_not_the_format_says_where() {
        let err = samples("garbage line {{{\n").unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
    }

    #[test]
    fn an_empty_text_has_no_samples() {
        assert_eq!(samples("").unwrap(), Vec::new());
        assert_eq!(samples("# just a comment\n").unwrap(), Vec::new());
    }
}
