//! The metrics of one source for a person: per metric how many points, over which x, the
//! latest value and the best and worst with where they were; a loss first, numbers short (as
//! the metrics pane prints them).

use unicode_width::UnicodeWidthStr;

use super::read::Series;
use crate::metrics::store::loss_first;
use crate::ui::metrics::scale::{value, x_value};

const HEADER: [&str; 7] = [
    "metric",
    "points",
    "first x",
    "last x",
    "latest",
    "min (at x)",
    "max (at x)",
];

/// The lines of one source's table: its name, then a header and a row per metric (or a line
/// saying there are none).
pub fn lines(source: &str, series: &[Series]) -> Vec<String> {
    if series.iter().all(|s| s.points.is_empty()) {
        return vec![format!("no metrics found in {source}")];
    }
    let mut ordered: Vec<&Series> = series.iter().collect();
    let mut names: Vec<&str> = ordered.iter().map(|s| s.name.as_str()).collect();
    loss_first(&mut names);
    ordered.sort_by_key(|s| names.iter().position(|n| *n == s.name));
    let rows: Vec<[String; 7]> = ordered.into_iter().filter_map(row).collect();
    let mut widths = HEADER.map(UnicodeWidthStr::width);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.width());
        }
    }
    let mut out = vec![source.to_string()];
    out.push(layout(&HEADER.map(String::from), &widths));
    out.extend(rows.iter().map(|r| layout(r, &widths)));
    out
}

/// The metric's name left-aligned, the numbers right-aligned.
fn layout(cells: &[String; 7], widths: &[usize; 7]) -> String {
    let mut line = String::from(" ");
    for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
        let pad = " ".repeat(width.saturating_sub(cell.width()));
        line.push(' ');
        if i == 0 {
            line.push_str(cell);
            line.push_str(&pad);
        } else {
            line.push_str(&pad);
            line.push_str(cell);
        }
        line.push(' ');
    }
    line.trim_end().to_string()
}

fn row(s: &Series) -> Option<[String; 7]> {
    let (first, last) = (s.points.first()?, s.points.last()?);
    let finite = || s.points.iter().filter(|p| p.1.is_finite());
    // The first of equal values: where the best was reached.
    let min = finite().fold(None, |m: Option<&(f64, f64)>, p| match m {
        Some(m) if m.1 <= p.1 => Some(m),
        _ => Some(p),
    });
    let max = finite().fold(None, |m: Option<&(f64, f64)>, p| match m {
        Some(m) if m.1 >= p.1 => Some(m),
        _ => Some(p),
    });
    let at = |p: Option<&(f64, f64)>| {
        p.map_or_else(
            || "-".to_string(),
            |&(x, v)| format!("{} (at {})", value(v), x_value(x)),
        )
    };
    Some([
        s.name.clone(),
        x_value(s.points.len() as f64),
        x_value(first.0),
        x_value(last.0),
        value(last.1),
        at(min),
        at(max),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(name: &str, points: &[(f64, f64)]) -> Series {
        Series {
            name: name.into(),
            points: points.to_vec(),
        }
    }

    #[test]
    fn a_loss_comes_first_with_its_range_and_where_it_was_best() {
        let table = lines(
            "pod-a",
            &[
                series("learning_rate", &[(1.0, 5e-5), (2.0, 4.9e-5)]),
                series(
                    "loss",
                    &[(1.0, 10.07), (2.0, f64::NAN), (3.0, 0.4), (1200.0, 0.5)],
                ),
            ],
        );
        assert_eq!(
            table,
            [
                "pod-a",
                "  metric         points  first x  last x  latest     min (at x)    max (at x)",
                "  loss                4        1   1,200     0.5     0.4 (at 3)  10.07 (at 1)",
                "  learning_rate       2        1       2  4.9e-5  4.9e-5 (at 2)   5e-5 (at 1)",
            ]
        );
    }

    #[test]
    fn a_source_without_metrics_says_so() {
        assert_eq!(lines("train.log", &[]), ["no metrics found in train.log"]);
    }

    #[test]
    fn a_metric_only_ever_nan_has_no_min_or_max() {
        let table = lines("p", &[series("loss", &[(1.0, f64::NAN)])]);
        assert!(
            table[2].ends_with("NaN           -           -"),
            "{table:?}"
        );
    }
}
