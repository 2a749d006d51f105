//! Kubernetes quantities as metrics-server and the API write them (`950000000n`, `250m`,
//! `1024Ki`), read exactly, and written back the way k9s and `kubectl top` show them.

/// A Kubernetes quantity in thousandths (`250m` → 250, `2` → 2000, `1Ki` → 1,024,000,
/// `1500000n` → 1.5): CPU in millicores, memory in thousandths of a byte.
pub fn milli(q: &str) -> Option<u128> {
    let q = q.trim();
    let split = q
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(q.len());
    let (number, suffix) = q.split_at(split);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let whole: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    // Up to nine decimals (nano), kept exact.
    let digits = fraction.len().min(9) as u32;
    let fraction: u128 = if digits == 0 {
        0
    } else {
        fraction[..digits as usize].parse().ok()?
    };
    let nano = whole * 1_000_000_000 + fraction * 10u128.pow(9 - digits);
    // `nano` is the number times 10^9; the result is the quantity times 1000.
    let scaled = match suffix {
        "n" => nano / 1_000_000_000_000_000,
        "u" => nano / 1_000_000_000_000,
        "m" => nano / 1_000_000_000,
        "" => nano / 1_000_000,
        "k" => nano / 1000,
        "M" => nano,
        "G" => nano * 1000,
        "T" => nano * 1_000_000,
        "Ki" => nano * 1024 / 1_000_000,
        "Mi" => nano * (1 << 20) / 1_000_000,
        "Gi" => nano * (1 << 30) / 1_000_000,
        "Ti" => nano * (1 << 40) / 1_000_000,
        _ => return None,
    };
    Some(scaled)
}

/// CPU as k9s shows it: `950m`, `2.1`.
pub fn cpu_text(millis: u64) -> String {
    if millis < 1000 {
        format!("{millis}m")
    } else {
        format!("{:.1}", millis as f64 / 1000.0)
    }
}

/// Memory as kubectl top shows it: `512Mi`, `1.5Gi`.
pub fn memory_text(bytes: u64) -> String {
    let mi = bytes as f64 / f64::from(1u32 << 20);
    if mi < 1024.0 {
        format!("{mi:.0}Mi")
    } else {
        format!("{:.1}Gi", mi / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_as_metrics_server_writes_them() {
        assert_eq!(milli("950000000n"), Some(950));
        assert_eq!(milli("250m"), Some(250));
        assert_eq!(milli("2"), Some(2000));
        assert_eq!(milli("1.5"), Some(1500));
        assert_eq!(milli("1024Ki").map(|m| m / 1000), Some(1 << 20));
        assert_eq!(milli("2Gi").map(|m| m / 1000), Some(2 << 30));
        assert_eq!(milli("12x"), None);
    }

    #[test]
    fn usage_reads_as_k9s_shows_it() {
        assert_eq!(cpu_text(950), "950m");
        assert_eq!(cpu_text(2100), "2.1");
        assert_eq!(memory_text(512 << 20), "512Mi");
        assert_eq!(memory_text(3 << 29), "1.5Gi");
    }
}
