//! Kubernetes resource quantities (`500m`, `2`, `1.5Gi`, `512M`), as the scheduler compares them.

/// Parses a quantity into thousandths of a unit (millicores for CPU, milli-bytes for memory).
pub fn parse_milli(q: &str) -> Option<u128> {
    let q = q.trim();
    if q.is_empty() {
        return None;
    }
    let split = q
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(q.len());
    let (number, suffix) = q.split_at(split);
    let number: f64 = number.parse().ok()?;
    if !number.is_finite() || number < 0.0 {
        return None;
    }
    let factor: f64 = match suffix {
        "" => 1.0,
        "m" => 0.001,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "Ki" => 1024.0,
        "Mi" => 1024.0 * 1024.0,
        "Gi" => 1024.0 * 1024.0 * 1024.0,
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        s if s.starts_with('e') || s.starts_with('E') => 10f64.powi(s[1..].parse().ok()?),
        _ => return None,
    };
    Some((number * factor * 1000.0).round() as u128)
}

/// CPU in millicores.
pub fn cpu_millis(q: &str) -> Option<u64> {
    parse_milli(q).map(|m| m as u64)
}

/// Memory (or any count) in whole units.
pub fn units(q: &str) -> Option<u64> {
    parse_milli(q).map(|m| (m / 1000) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_quantities() {
        assert_eq!(cpu_millis("500m"), Some(500));
        assert_eq!(cpu_millis("2"), Some(2000));
        assert_eq!(cpu_millis("0.25"), Some(250));
        assert_eq!(units("1Gi"), Some(1 << 30));
        assert_eq!(units("512Mi"), Some(512 << 20));
        assert_eq!(units("1G"), Some(1_000_000_000));
        assert_eq!(units("1e3"), Some(1000));
        assert_eq!(units("lots"), None);
        assert_eq!(units(""), None);
    }
}
