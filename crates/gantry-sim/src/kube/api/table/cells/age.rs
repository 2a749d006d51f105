//! The AGE cells of the server-side Table, as kube-apiserver words them
//! (`k8s.io/apimachinery/pkg/util/duration.HumanDuration`): the simulator's own, so kubectl shows
//! against it what it shows against a real cluster.

/// A duration in whole seconds, in the API server's words: `45s`, `7m30s`, `3h5m`, `5d`, `2y`.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let days = (hours / 24) % 365;
        return if days == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{days}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_as_the_api_server_writes_them() {
        // The cases of apimachinery's duration_test.go.
        for (secs, want) in [
            (-2, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (9 * 60 + 59, "9m59s"),
            (10 * 60, "10m"),
            (3 * 3600 - 1, "179m"),
            (3 * 3600, "3h"),
            (8 * 3600 - 60, "7h59m"),
            (8 * 3600, "8h"),
            (48 * 3600 - 1, "47h"),
            (48 * 3600, "2d"),
            (8 * 86400 - 3600, "7d23h"),
            (8 * 86400, "8d"),
            (2 * 365 * 86400 - 86400, "729d"),
            (2 * 365 * 86400, "2y"),
            (8 * 365 * 86400 - 86400, "7y364d"),
            (8 * 365 * 86400, "8y"),
        ] {
            assert_eq!(human_duration(secs), want, "{secs}s");
        }
    }
}
