//! How much a notice matters, the same word everywhere it is said: on the status line, in
//! `gantry watch`, in a message and its outbox, in a target's `min-severity`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `critical` wants someone now (a failed attempt, a cluster in ERROR, a metric gone NaN),
/// `warning` soon, `info` is for the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

impl Severity {
    pub const ALL: [Severity; 3] = [Severity::Info, Severity::Warning, Severity::Critical];

    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }

    /// By its name: `info`, `warning` or `critical`.
    pub fn parse(name: &str) -> Option<Severity> {
        Severity::ALL.into_iter().find(|s| s.name() == name)
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// By its name, as the config, `gantry watch --json` and the outbox write it.
impl Serialize for Severity {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Severity {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Severity, D::Error> {
        let name = String::deserialize(deserializer)?;
        Severity::parse(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown severity \"{name}\": write \"info\", \"warning\" or \"critical\""
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severities_order_from_info_to_critical() {
        assert!(Severity::Info < Severity::Warning && Severity::Warning < Severity::Critical);
    }

    #[test]
    fn a_severity_is_written_and_read_by_its_name() {
        for s in Severity::ALL {
            let text = serde_json::to_string(&s).unwrap_or_default();
            assert_eq!(text, format!("\"{}\"", s.name()));
            assert_eq!(serde_json::from_str::<Severity>(&text).ok(), Some(s));
        }
        let wrong = serde_json::from_str::<Severity>("\"loud\"").unwrap_err();
        assert!(wrong.to_string().contains("write \"info\""), "{wrong}");
    }
}
