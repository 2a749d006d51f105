//! Prices as people read them where decisions are made: "≈ $0.28/h, $207/month" on a create
//! confirmation or a plan, "$1.37" for what a cluster or an attempt has cost so far, and
//! "price unknown (GPU nvidia-tesla-t4 in us-central1)" rather than a made-up figure.

use super::Estimate;

/// "$0.14", "$1,234.57"; under a cent, enough digits to be more than zero ("$0.0025").
pub fn usd(amount: f64) -> String {
    let cents_or_more = amount == 0.0 || amount.abs() >= 0.005;
    if cents_or_more {
        grouped(amount, 2)
    } else {
        format!("${amount:.4}")
    }
}

/// Whole dollars from $10 on ("$104", "$64,598"); cents below ("$7.30").
pub fn usd_rounded(amount: f64) -> String {
    if amount.abs() >= 10.0 {
        grouped(amount, 0)
    } else {
        usd(amount)
    }
}

/// "$0.14/h, $104/month" for a price per hour.
pub fn per_hour_and_month(per_hour: f64, hours_per_month: f64) -> String {
    format!(
        "{}/h, {}/month",
        usd(per_hour),
        usd_rounded(per_hour * hours_per_month)
    )
}

/// "≈ $0.14/h, $104/month", or "price unknown (…)" naming what has no price.
pub fn estimate(estimate: &Estimate, hours_per_month: f64) -> String {
    match estimate {
        Estimate::Known(per_hour) => {
            format!("≈ {}", per_hour_and_month(*per_hour, hours_per_month))
        }
        Estimate::Unknown(_) => unknown(estimate),
    }
}

/// What an hourly price comes to over a number of hours ("$1.37"), or "price unknown (…)".
pub fn over_hours(estimate: &Estimate, hours: f64) -> String {
    match estimate {
        Estimate::Known(per_hour) => usd(per_hour * hours.max(0.0)),
        Estimate::Unknown(_) => unknown(estimate),
    }
}

fn unknown(estimate: &Estimate) -> String {
    match estimate {
        Estimate::Unknown(missing) if !missing.is_empty() => {
            let names: Vec<String> = missing.iter().map(ToString::to_string).collect();
            format!("price unknown ({})", names.join("; "))
        }
        _ => "price unknown".to_string(),
    }
}

/// "$1,234.57": a sign, a dollar sign, thousands separated by commas.
fn grouped(amount: f64, decimals: usize) -> String {
    let text = format!("{:.*}", decimals, amount.abs());
    let (whole, fraction) = text
        .split_once('.')
        .map_or((text.as_str(), None), |(w, f)| (w, Some(f)));
    let mut digits = String::new();
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            digits.push(',');
        }
        digits.push(digit);
    }
    let sign = if amount < 0.0 && text.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
        "-"
    } else {
        ""
    };
    match fraction {
        Some(fraction) => format!("{sign}${digits}.{fraction}"),
        None => format!("{sign}${digits}"),
    }
}
/// Dollars as `--json` and messages give them: to a millionth (a few seconds of a small
/// cluster is not 0).
pub fn round_usd(usd: f64) -> f64 {
    (usd * 1e6).round() / 1e6
}
