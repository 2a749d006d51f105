//! Numbers as training loops print them: `0.5815`, `3e-4`, `4.9e-05`, `-inf`, `nan`, `1,234,567`,
//! `35ms`. What only looks like a number is refused where the text around it shows it is
//! something else: a version or an IP address (`1.2.3`), a time or a port (`12:30`, `:8080`), a
//! date (`2024-01-05`), a fraction (`4/18`). One forward pass, no backtracking.

/// How strictly a number is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// Free text: thousands separators and a short unit (`35ms`, `12%`, `3.1it/s`) allowed.
    Text,
    /// A Python literal: digits, point, exponent, `nan`, `inf` only.
    Literal,
}

/// Longest number kept; anything longer is not a metric anyone prints.
const MAX_DIGITS: usize = 48;
/// Longest unit after a number (`tokens/s`).
const MAX_UNIT: usize = 8;

/// Bytes that continue a word: a number followed by one is part of a word, not a value.
pub(crate) fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The number starting at `s[i]` and the index just past it (and past its unit), or `None`
/// when the text there is not a number standing on its own. Its value is worked out as its
/// digits go by.
pub(crate) fn number_at(s: &[u8], i: usize, style: Style) -> Option<(f64, usize)> {
    number_at_plain(s, i, style).map(|(value, end, _)| (value, end))
}

/// As [`number_at`], and whether the one-pass reading took the number: then it holds only a
/// sign, digits, a point and an exponent.
pub(crate) fn number_at_plain(s: &[u8], i: usize, style: Style) -> Option<(f64, usize, bool)> {
    match plain_at(s, i) {
        Some((value, end)) => Some((value, end, true)),
        None => full_at(s, i, style).map(|(value, end)| (value, end, false)),
    }
}

/// What most numbers in a training log are, read in one pass: a sign, digits, a point with
/// digits after it, an exponent of one to three digits, then a byte that ends a number in
/// either style (a blank, a bracket, a quote; a comma, colon, dash or slash not before a
/// digit). `None` says only "not this simple": [`full_at`] then decides. A proptest holds the
/// two to the same answer wherever this one gives one.
fn plain_at(s: &[u8], i: usize) -> Option<(f64, usize)> {
    let signed = matches!(s.get(i), Some(b'-' | b'+'));
    let mut j = i + usize::from(signed);
    let mut decimal = Decimal::default();
    let int_digits = decimal.digits(s, j, false);
    j += int_digits;
    let mut frac_digits = 0;
    if s.get(j) == Some(&b'.') {
        frac_digits = decimal.digits(s, j + 1, true);
        if frac_digits == 0 {
            return None;
        }
        j += 1 + frac_digits;
    }
    if int_digits + frac_digits == 0 {
        return None;
    }
    let mut exponent = 0;
    if let Some((end, e)) = exponent_at(s, j) {
        exponent = e?;
        j = end;
    }
    let ends = match s.get(j) {
        None => true,
        Some(b':' | b'-' | b'/' | b',') => !s.get(j + 1).is_some_and(u8::is_ascii_digit),
        Some(&b) => !is_word_byte(b) && !matches!(b, b'%' | b'.' | b'+'),
    };
    if !ends || j - i > MAX_DIGITS {
        return None;
    }
    let value = decimal.exact(exponent)?;
    Some((if s[i] == b'-' { -value } else { value }, j))
}

/// [`number_at`] for any number: grouped digits, a unit, `nan` and `inf`, and what only looks
/// like a number.
fn full_at(s: &[u8], i: usize, style: Style) -> Option<(f64, usize)> {
    let digits_from = |k: usize| {
        s.get(k..)
            .map_or(0, |t| t.iter().take_while(|b| b.is_ascii_digit()).count())
    };
    let signed = matches!(s.get(i), Some(b'-' | b'+'));
    let mut j = i + usize::from(signed);
    if s.get(j).is_some_and(u8::is_ascii_alphabetic)
        && let Some((value, end)) = non_finite_at(s, j)
    {
        return Some((if s[i] == b'-' { -value } else { value }, end));
    }
    let mut decimal = Decimal::default();
    let int_digits = decimal.digits(s, j, false);
    j += int_digits;
    let mut grouped = false;
    if style == Style::Text && (1..=3).contains(&int_digits) {
        // `1,234,567`: groups of exactly three after a lead of one to three digits.
        while s.get(j) == Some(&b',') && digits_from(j + 1) == 3 {
            grouped = true;
            decimal.digits(s, j + 1, false);
            j += 4;
        }
    }
    let mut frac_digits = 0;
    if s.get(j) == Some(&b'.') {
        frac_digits = decimal.digits(s, j + 1, true);
        j += usize::from(frac_digits > 0) * (1 + frac_digits);
    }
    if int_digits == 0 && frac_digits == 0 {
        return None;
    }
    let mut exponent = Some(0);
    if let Some((end, e)) = exponent_at(s, j) {
        exponent = e;
        j = end;
    }
    // What follows decides: `1.2.3`, `12:30`, `2024-01-05`, `4/18` are not values.
    match (s.get(j), s.get(j + 1)) {
        (Some(b'.' | b':' | b'-' | b'/' | b','), Some(d)) if d.is_ascii_digit() => return None,
        _ => {}
    }
    let end = match style {
        Style::Literal => j,
        Style::Text => unit_end(s, j),
    };
    let glued = |b: u8| {
        is_word_byte(b) || b == b'.' && s.get(end + 1).is_some_and(u8::is_ascii_alphanumeric)
    };
    if s.get(end).is_some_and(|&b| glued(b)) || j - i > MAX_DIGITS {
        return None;
    }
    let value = match exponent.and_then(|e| decimal.exact(e)) {
        Some(v) if s[i] == b'-' => -v,
        Some(v) => v,
        None if grouped => {
            let mut buf = [0u8; MAX_DIGITS];
            let kept = s[i..j].iter().filter(|&&b| b != b',');
            let len = kept.clone().count();
            buf.iter_mut().zip(kept).for_each(|(d, s)| *d = *s);
            std_parse(&buf[..len])?
        }
        None => std_parse(&s[i..j])?,
    };
    Some((value, end))
}

/// The exponent at `s[j]` (`e` or `E`, a sign, digits): where it ends, and its value when it
/// has at most three digits (else the standard parser decides). `None` when there is none.
fn exponent_at(s: &[u8], j: usize) -> Option<(usize, Option<i32>)> {
    if !matches!(s.get(j), Some(b'e' | b'E')) {
        return None;
    }
    let from = j + 1 + usize::from(matches!(s.get(j + 1), Some(b'-' | b'+')));
    let (e, digits) = digits_at(s, from, 0);
    if digits == 0 {
        return None;
    }
    // At most three digits: below 1000, so the conversion is exact.
    let value = (digits <= 3).then(|| {
        let e = e as i32;
        if s[j + 1] == b'-' { -e } else { e }
    });
    Some((from + digits, value))
}

/// The run of digits at `s[k..]` taken into `acc` (times ten, plus the digit, wrapping), and how
/// many there were. A caller that needs the value exact refuses runs too long for it.
pub(crate) fn digits_at(s: &[u8], k: usize, mut acc: u64) -> (u64, usize) {
    let mut n = 0;
    while let Some(&b) = s.get(k + n)
        && b.is_ascii_digit()
    {
        acc = acc.wrapping_mul(10).wrapping_add(u64::from(b - b'0'));
        n += 1;
    }
    (acc, n)
}

fn std_parse(text: &[u8]) -> Option<f64> {
    std::str::from_utf8(text).ok()?.parse().ok()
}

/// Powers of ten that a double holds exactly.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// A decimal's digits as an integer, and the power of ten they are scaled by.
#[derive(Debug, Default)]
struct Decimal {
    mantissa: u64,
    digits: u32,
    scale: i32,
}

impl Decimal {
    /// Takes in the digits at `s[k..]` (after the point when `fraction`); how many there were.
    fn digits(&mut self, s: &[u8], k: usize, fraction: bool) -> usize {
        let (mantissa, n) = digits_at(s, k, self.mantissa);
        self.mantissa = mantissa;
        self.digits = self.digits.saturating_add(n as u32);
        if fraction {
            self.scale -= n as i32;
        }
        n
    }

    /// The value times ten to `exponent` when it takes one exact operation: a mantissa below
    /// 2^53 times or divided by an exact power of ten rounds once, so the result is the
    /// correctly rounded one (Clinger's fast path). Most printed metrics are such; the rest go
    /// to the standard parser.
    fn exact(&self, exponent: i32) -> Option<f64> {
        if self.digits > 15 {
            return None;
        }
        // Below 10^15: exact as a double, converted from a signed integer in one instruction.
        let m = i64::try_from(self.mantissa).ok()? as f64;
        match self.scale + exponent {
            0 => Some(m),
            e @ 1..=22 => Some(m * POW10[e as usize]),
            e @ -22..=-1 => Some(m / POW10[e.unsigned_abs() as usize]),
            _ => None,
        }
    }
}

/// Past a short unit glued to a number (`ms`, `s`, `%`, `it/s`), or `j` when there is none.
fn unit_end(s: &[u8], j: usize) -> usize {
    if s.get(j) == Some(&b'%') {
        return j + 1;
    }
    let letters = |from: usize| {
        s[from.min(s.len())..]
            .iter()
            .take_while(|b| b.is_ascii_alphabetic())
            .count()
    };
    let first = letters(j);
    if first == 0 || first > MAX_UNIT {
        return j;
    }
    let mut end = j + first;
    if s.get(end) == Some(&b'/') {
        let second = letters(end + 1);
        if second > 0 && first + 1 + second <= MAX_UNIT {
            end += 1 + second;
        }
    }
    end
}

/// `nan`, `inf`, `infinity` in any case (Python prints `nan`/`inf`, JSON encoders `NaN` and
/// `Infinity`), standing on their own.
fn non_finite_at(s: &[u8], j: usize) -> Option<(f64, usize)> {
    let word = &s[j.min(s.len())..];
    let word = &word[..word.iter().take_while(|&&b| is_word_byte(b)).count()];
    if word.eq_ignore_ascii_case(b"nan") {
        Some((f64::NAN, j + 3))
    } else if word.eq_ignore_ascii_case(b"inf") || word.eq_ignore_ascii_case(b"infinity") {
        Some((f64::INFINITY, j + word.len()))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn text(s: &str) -> Option<f64> {
        number_at(s.as_bytes(), 0, Style::Text).map(|(v, _)| v)
    }

    #[test]
    fn reads_the_forms_training_loops_print() {
        assert_eq!(text("0.5815"), Some(0.5815));
        assert_eq!(text("3e-4"), Some(3e-4));
        assert_eq!(text("4.9e-05 "), Some(4.9e-5));
        assert_eq!(text("-1.5E+3"), Some(-1500.0));
        assert_eq!(text(".5"), Some(0.5));
        assert_eq!(text("1,234,567 tokens"), Some(1_234_567.0));
        assert_eq!(text("35ms"), Some(35.0));
        assert_eq!(text("12.5%"), Some(12.5));
        assert_eq!(text("3.1it/s,"), Some(3.1));
        assert!(text("nan").unwrap().is_nan());
        assert_eq!(text("-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(text("Infinity"), Some(f64::INFINITY));
    }

    #[test]
    fn refuses_versions_addresses_times_dates_and_fractions() {
        for s in [
            "1.2.3",
            "10.0.0.1",
            "12:30:45",
            "10.0.0.1:8080",
            "2024-01-05",
            "4/18",
        ] {
            assert_eq!(text(s), None, "{s}");
        }
    }

    #[test]
    fn refuses_words_that_start_with_digits_or_nan() {
        for s in [
            "3rd_place",
            "nanosecond",
            "info",
            "1x2y3z4w5v6u7t8s9",
            "e5",
            "abc",
        ] {
            assert_eq!(text(s), None, "{s}");
        }
    }

    #[test]
    fn takes_an_ambiguous_comma_as_a_separator_only_before_three_digits() {
        assert_eq!(number_at(b"1,23", 0, Style::Text), None);
        assert_eq!(number_at(b"1, 2", 0, Style::Text), Some((1.0, 1)));
        assert_eq!(number_at(b"1234,567", 0, Style::Text), None);
        assert_eq!(number_at(b"1,234", 0, Style::Literal), None);
    }

    #[test]
    fn the_value_worked_out_on_the_way_is_what_the_standard_parser_gives() {
        for text in [
            "0.5815",
            "3e-4",
            "4.9e-05",
            "-1.5E+3",
            "00010",
            "1234567.891",
            "0.1",
            "1e22",
            "1e23",
            "123456789012345678",
            "-0.0",
            "9007199254740993",
            "2.2250738585072014e-308",
        ] {
            let want: f64 = text.parse().unwrap();
            let (got, _) = number_at(text.as_bytes(), 0, Style::Literal).unwrap();
            assert_eq!(got.to_bits(), want.to_bits(), "{text}");
        }
    }

    proptest::proptest! {
        #[test]
        fn printed_floats_read_back_as_the_standard_parser_reads_them(
            x in proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL | proptest::num::f64::ZERO,
            digits in 0usize..10,
        ) {
            let texts = [format!("{x}"), format!("{x:e}"), format!("{x:.digits$}"), format!("{x:.digits$e}")];
            // Longer than any metric printed: refused on purpose.
            for text in texts.into_iter().filter(|t| t.len() <= MAX_DIGITS) {
                let want: f64 = text.parse().unwrap();
                let got = number_at(text.as_bytes(), 0, Style::Text).map(|(v, _)| v.to_bits());
                proptest::prop_assert_eq!(got, Some(want.to_bits()), "{}", text);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]
        #[test]
        fn the_one_pass_reading_agrees_with_the_full_one_wherever_it_reads(
            text in "[-+]?[0-9]{0,4}(\\.[0-9]{0,4})?([eE][-+]?[0-9]{0,4})?[ 0-9.eE:/,%a_|)+-]{0,3}",
            from in 0usize..3,
        ) {
            let s = text.as_bytes();
            if let Some((value, end)) = plain_at(s, from) {
                for style in [Style::Text, Style::Literal] {
                    let full = full_at(s, from, style).map(|(v, e)| (v.to_bits(), e));
                    proptest::prop_assert_eq!(full, Some((value.to_bits(), end)), "{} {:?}", text, style);
                }
            }
        }
    }

    #[test]
    fn the_one_pass_reading_leaves_all_but_plain_numbers_to_the_full_one() {
        for s in [
            "1,234", "35ms", "12%", "1.2.3", "5.", "1e", "1e1234", "12:30", "nan", "-", "",
        ] {
            assert_eq!(plain_at(s.as_bytes(), 0), None, "{s}");
        }
        assert_eq!(plain_at(b"0.0123 acc", 0), Some((0.0123, 6)));
        assert_eq!(plain_at(b"-3e-4|", 0), Some((-3e-4, 5)));
        assert_eq!(plain_at(b"1, 2", 0), Some((1.0, 1)));
    }

    #[test]
    fn literal_style_keeps_no_unit() {
        assert_eq!(number_at(b"0.5}", 0, Style::Literal), Some((0.5, 3)));
        assert_eq!(number_at(b"35ms", 0, Style::Literal), None);
    }
}
