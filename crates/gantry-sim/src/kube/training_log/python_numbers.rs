//! Numbers written as Python writes them, since every framework imitated here is Python:
//! `repr(float)` (dicts and `json.dumps`), `'%.4f'`/`'%.4e'` (Keras), `'{:.3g}'` (tqdm's
//! postfix), thousands separators (`f"{n:,}"`). A reader that works on real logs must see the
//! same bytes.

/// `repr(x)` of a Python float: the shortest digits that read back, in exponent form below
/// 1e-4 and from 1e16 (`4.9e-05`, `0.0003`, `2.0`, `nan`).
pub fn repr(x: f64) -> String {
    if let Some(special) = special(x) {
        return special.to_string();
    }
    let sci = format!("{x:e}");
    let (mantissa, exp) = split_exponent(&sci);
    if !(-4..16).contains(&exp) {
        return format!("{mantissa}e{}", exponent(exp));
    }
    let fixed = format!("{x}");
    if fixed.contains('.') {
        fixed
    } else {
        fixed + ".0"
    }
}

/// `json.dumps` of a float: `repr`, with JavaScript's names for what JSON lacks.
pub fn json(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        repr(x)
    }
}

/// `'%.{decimals}f' % x`: Rust's fixed form, with Python's `nan` and `inf`.
pub fn fixed(x: f64, decimals: usize) -> String {
    match special(x) {
        Some(special) => special.to_string(),
        None => format!("{x:.decimals$}"),
    }
}

/// `round(x, digits)`.
pub fn round(x: f64, digits: i32) -> f64 {
    if !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}

/// `'%.{precision}e' % x`: `1.2345e-04`.
pub fn exp_form(x: f64, precision: usize) -> String {
    if let Some(special) = special(x) {
        return special.to_string();
    }
    let sci = format!("{x:.precision$e}");
    let (mantissa, exp) = split_exponent(&sci);
    format!("{mantissa}e{}", exponent(exp))
}

/// `'{:.3g}'.format(x)` as tqdm's `format_num` shortens a postfix number, keeping the plain
/// `str(x)` when that is no longer (`0.312`, `3e-5`, `10.1`, `nan`).
pub fn tqdm_num(x: f64) -> String {
    if let Some(special) = special(x) {
        return special.to_string();
    }
    let g = general3(x).replace("+0", "+").replace("-0", "-");
    let plain = repr(x);
    if g.len() < plain.len() { g } else { plain }
}

/// `'{:,}'.format(n)`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `'{:.3g}'`: three significant digits, trailing zeros dropped, exponent form outside
/// 1e-4..1e3.
fn general3(x: f64) -> String {
    let sci = format!("{x:.2e}");
    let (_, exp) = split_exponent(&sci);
    if (-4..3).contains(&exp) {
        let decimals = (2 - exp).max(0) as usize;
        trim_zeros(format!("{x:.decimals$}"))
    } else {
        let (mantissa, exp) = split_exponent(&sci);
        format!("{}e{}", trim_zeros(mantissa.to_string()), exponent(exp))
    }
}

fn trim_zeros(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn special(x: f64) -> Option<&'static str> {
    if x.is_nan() {
        Some("nan")
    } else if x.is_infinite() {
        Some(if x > 0.0 { "inf" } else { "-inf" })
    } else {
        None
    }
}

/// Rust's `1.5e-5` split into `1.5` and `-5`.
fn split_exponent(sci: &str) -> (&str, i32) {
    match sci.split_once('e') {
        Some((m, e)) => (m, e.parse().unwrap_or(0)),
        None => (sci, 0),
    }
}

/// Python's exponent: a sign and at least two digits.
fn exponent(exp: i32) -> String {
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{sign}{:02}", exp.unsigned_abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_read_as_python_prints_them() {
        assert_eq!(repr(4.9e-5), "4.9e-05");
        assert_eq!(repr(1e-5), "1e-05");
        assert_eq!(repr(0.0003), "0.0003");
        assert_eq!(repr(2.0), "2.0");
        assert_eq!(repr(0.1234), "0.1234");
        assert_eq!(repr(1.2e16), "1.2e+16");
        assert_eq!(repr(f64::NAN), "nan");
        assert_eq!(json(f64::NAN), "NaN");
        assert_eq!(json(f64::NEG_INFINITY), "-Infinity");
    }

    #[test]
    fn percent_and_format_forms_read_as_python_prints_them() {
        assert_eq!(exp_form(0.00012345, 4), "1.2345e-04");
        assert_eq!(exp_form(3e-4, 2), "3.00e-04");
        assert_eq!(exp_form(f64::NAN, 4), "nan");
        assert_eq!(fixed(f64::NAN, 6), "nan");
        assert_eq!(fixed(0.25, 4), "0.2500");
        assert_eq!(tqdm_num(0.3124), "0.312");
        assert_eq!(tqdm_num(10.07), "10.1");
        assert_eq!(tqdm_num(3e-5), "3e-5");
        assert_eq!(tqdm_num(4.9e-5), "4.9e-5");
        assert_eq!(tqdm_num(2.5), "2.5");
        assert_eq!(tqdm_num(1234.5), "1234.5");
        assert_eq!(tqdm_num(123456.7), "1.23e+5");
        assert_eq!(tqdm_num(f64::NAN), "nan");
        assert_eq!(thousands(14_934_102), "14,934,102");
        assert_eq!(thousands(934), "934");
        assert_eq!(round(2.31004, 4), 2.31);
    }
}
