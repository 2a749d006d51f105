//! GKE locations: a region (`us-central1`, a regional cluster spanning three zones) or a zone
//! (`us-central1-a`, a zonal cluster), and the checks GKE makes on names and locations.

use super::errors::GkeError;

/// The zones a regional cluster spans when the request names none, as GKE picks three.
const DEFAULT_ZONE_SUFFIXES: [&str; 3] = ["a", "b", "c"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    name: String,
    region_len: usize,
}

impl Location {
    /// Parses `us-central1` or `us-central1-a`; anything else GKE calls an invalid location.
    pub fn parse(name: &str) -> Result<Self, GkeError> {
        if is_region(name) {
            return Ok(Self {
                name: name.to_string(),
                region_len: name.len(),
            });
        }
        match zone_region(name) {
            Some(region) => Ok(Self {
                name: name.to_string(),
                region_len: region.len(),
            }),
            None => Err(GkeError::invalid(format!(
                "Location \"{name}\" is not a valid Google Cloud region or zone."
            ))),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.name
    }

    pub fn region(&self) -> &str {
        &self.name[..self.region_len]
    }

    pub fn is_zone(&self) -> bool {
        self.region_len < self.name.len()
    }

    /// The zones nodes go to when the request does not say: the zone itself, or three of the region's.
    pub fn default_zones(&self) -> Vec<String> {
        if self.is_zone() {
            vec![self.name.clone()]
        } else {
            DEFAULT_ZONE_SUFFIXES
                .iter()
                .map(|s| format!("{}-{s}", self.name))
                .collect()
        }
    }

    /// Checks node locations a request names: each a zone of this location's region.
    pub fn check_zones(&self, zones: &[String]) -> Result<(), GkeError> {
        for zone in zones {
            if zone_region(zone) != Some(self.region()) {
                return Err(GkeError::invalid(format!(
                    "Node location \"{zone}\" is not a zone of region \"{}\".",
                    self.region()
                )));
            }
        }
        Ok(())
    }
}

/// `us-central1`, `europe-west4`, `northamerica-northeast1`: letters, a dash, letters, digits.
fn is_region(name: &str) -> bool {
    let Some((area, rest)) = name.split_once('-') else {
        return false;
    };
    let letters = rest.trim_end_matches(|c: char| c.is_ascii_digit());
    let digits = &rest[letters.len()..];
    is_lower_word(area) && is_lower_word(letters) && !digits.is_empty()
}

fn is_lower_word(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase())
}

/// The region of a zone (`us-central1-a` → `us-central1`), or None if `name` is not a zone.
fn zone_region(name: &str) -> Option<&str> {
    let (region, suffix) = name.rsplit_once('-')?;
    let one_letter = suffix.len() == 1 && suffix.chars().all(|c| c.is_ascii_lowercase());
    (one_letter && is_region(region)).then_some(region)
}

/// GKE's rule for cluster names: `^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$`.
pub fn check_cluster_name(name: &str) -> Result<(), GkeError> {
    if is_resource_name(name, 40) {
        return Ok(());
    }
    Err(GkeError::invalid(format!(
        "Invalid value for field \"cluster.name\": \"{name}\". Must be a match of regex \
         '(?:[a-z](?:[-a-z0-9]{{0,38}}[a-z0-9])?)' (only alphanumerics and '-' allowed, must start \
         with a letter and end with an alphanumeric, and must be no longer than 40 characters)."
    )))
}

/// GKE's rule for node pool names: like cluster names.
pub fn check_node_pool_name(name: &str) -> Result<(), GkeError> {
    if is_resource_name(name, 40) {
        return Ok(());
    }
    Err(GkeError::invalid(format!(
        "Invalid value for field \"node_pool.name\": \"{name}\". Must be a match of regex \
         '(?:[a-z](?:[-a-z0-9]{{0,38}}[a-z0-9])?)'."
    )))
}

fn is_resource_name(name: &str, max: usize) -> bool {
    let bytes = name.as_bytes();
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    bytes.len() <= max
        && first.is_ascii_lowercase()
        && (last.is_ascii_lowercase() || last.is_ascii_digit())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn parses_regions_and_zones() {
        let region = Location::parse("us-central1").unwrap();
        assert!(!region.is_zone());
        assert_eq!(
            region.default_zones(),
            ["us-central1-a", "us-central1-b", "us-central1-c"]
        );
        let zone = Location::parse("europe-west4-b").unwrap();
        assert!(zone.is_zone());
        assert_eq!(zone.region(), "europe-west4");
        assert_eq!(zone.default_zones(), ["europe-west4-b"]);
        assert!(Location::parse("northamerica-northeast1").is_ok());
    }

    #[test]
    fn rejects_bad_locations() {
        for bad in [
            "",
            "nowhere",
            "us-central",
            "us-central1-ab",
            "US-central1",
            "-",
            "us-1",
        ] {
            let err = Location::parse(bad).unwrap_err();
            assert_eq!(err.status, "INVALID_ARGUMENT", "{bad}");
        }
    }

    #[test]
    fn node_locations_must_be_in_the_region() {
        let region = Location::parse("us-central1").unwrap();
        assert!(region.check_zones(&["us-central1-f".into()]).is_ok());
        assert!(region.check_zones(&["us-east1-b".into()]).is_err());
        assert!(region.check_zones(&["us-central1".into()]).is_err());
    }

    #[test]
    fn cluster_names_follow_gke_rules() {
        for good in ["a", "my-cluster", "gantry-1", &"a".repeat(40)] {
            assert!(check_cluster_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "1abc",
            "My-Cluster",
            "ends-",
            "under_score",
            &"a".repeat(41),
        ] {
            assert!(check_cluster_name(bad).is_err(), "{bad}");
        }
    }
}
