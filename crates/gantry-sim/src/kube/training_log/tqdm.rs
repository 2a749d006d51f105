//! tqdm's progress bar as `format_meter` draws it without a terminal width (ten cells): what
//! Hugging Face's Trainer and Lightning print, each redraw after a `\r`.
//! `Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=10.07]`.

/// tqdm's Unicode cells, from empty to full in eighths.
const CELLS: [char; 9] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉', '█'];
const WIDTH: usize = 10;

/// One bar: `desc` (may be empty), `n` of `total` done after `elapsed` seconds, `postfix`
/// (`loss=0.5, v_num=0`, may be empty).
pub fn meter(desc: &str, n: u64, total: u64, elapsed: f64, postfix: &str) -> String {
    let frac = if total > 0 {
        (n as f64 / total as f64).min(1.0)
    } else {
        0.0
    };
    let mut out = String::with_capacity(96);
    if !desc.is_empty() {
        out.push_str(desc);
        out.push_str(": ");
    }
    out.push_str(&format!("{:3.0}%|", frac * 100.0));
    let eighths = (frac * (WIDTH * 8) as f64) as usize;
    let (full, part) = (eighths / 8, eighths % 8);
    out.extend(std::iter::repeat_n(CELLS[8], full));
    if full < WIDTH {
        out.push(CELLS[part]);
        out.extend(std::iter::repeat_n(CELLS[0], WIDTH - full - 1));
    }
    let rate = (n > 0 && elapsed > 0.0).then(|| n as f64 / elapsed);
    let remaining = match rate {
        Some(r) => interval((total.saturating_sub(n)) as f64 / r),
        None => "?".into(),
    };
    let rate = match rate {
        Some(r) if r < 1.0 => format!("{:5.2}s/it", 1.0 / r),
        Some(r) => format!("{r:5.2}it/s"),
        None => "?it/s".into(),
    };
    out.push_str(&format!(
        "| {n}/{total} [{}<{remaining}, {rate}",
        interval(elapsed)
    ));
    if !postfix.is_empty() {
        out.push_str(", ");
        out.push_str(postfix);
    }
    out.push(']');
    out
}

/// tqdm's `format_interval`: `01:02`, `1:02:03`.
pub fn interval(secs: f64) -> String {
    let secs = if secs.is_finite() {
        secs.max(0.0) as u64
    } else {
        0
    };
    let (mins, s) = (secs / 60, secs % 60);
    let (h, m) = (mins / 60, mins % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m:02}:{s:02}")
    }
}

/// What tqdm writes for one redraw: `\r`, the bar, and spaces over what is left of a longer
/// bar before it. `last` is the previous bar's width in characters, updated.
pub fn redraw(bar: &str, last: &mut usize) -> String {
    let len = bar.chars().count();
    let pad = last.saturating_sub(len);
    *last = len;
    format!("\r{bar}{}", " ".repeat(pad))
}

/// What `tqdm.write` puts around a printed line: the bar cleared (`\r`, spaces, `\r`), the
/// line and its newline, then the bar drawn again.
pub fn write_above(line: &str, bar: &str, last: &mut usize) -> String {
    let clear = format!("\r{}\r", " ".repeat(*last));
    *last = 0;
    format!("{clear}{line}\n{}", redraw(bar, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_are_drawn_as_tqdm_draws_them() {
        assert_eq!(
            meter("", 0, 500, 0.0, ""),
            "  0%|          | 0/500 [00:00<?, ?it/s]"
        );
        assert_eq!(
            meter("Epoch 0", 4, 18, 17.88, "loss=10.07, v_num=1"),
            "Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=10.07, v_num=1]"
        );
        assert_eq!(
            meter("", 500, 500, 3725.0, ""),
            "100%|██████████| 500/500 [1:02:05<00:00,  7.45s/it]"
        );
        assert_eq!(
            meter("", 50, 500, 20.0, ""),
            " 10%|█         | 50/500 [00:20<03:00,  2.50it/s]"
        );
    }

    #[test]
    fn a_line_written_above_the_bar_clears_and_redraws_it() {
        let mut last = 0;
        assert_eq!(redraw("abcd", &mut last), "\rabcd");
        assert_eq!(redraw("ab", &mut last), "\rab  ");
        assert_eq!(write_above("{}", "ab", &mut last), "\r  \r{}\n\rab");
    }
}
