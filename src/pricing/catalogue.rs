//! The price snapshot and its lookups. Prices are kept per region, as Google sets them; a zone
//! (`us-central1-a`) is priced as its region. An accelerator-optimized machine type (A2, A3, G2)
//! carries its GPUs and their price; a GPU attached to an N1 machine (T4, V100, P100, P4) has a
//! price of its own, per GPU, where the snapshot's GPU source gives one.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use serde::Deserialize;

use super::{Item, Provisioning, Unpriced};

/// The snapshot Gantry is built with; `scripts/refresh-prices` regenerates it.
const EMBEDDED_JSON: &str = include_str!("../../assets/pricing/gke.json");

/// Where the prices come from and how old they are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct About {
    /// The day the price list was generated (`2026-07-30`).
    pub date: String,
    /// The same, to the second, in UTC.
    pub generated: String,
    /// The price list, at the commit it was taken from.
    pub source: String,
    /// Where GPUs priced on their own come from, or why there are none.
    pub gpu_source: String,
    /// The day, or the days as `FIRST/LAST`, the prices of GPUs attached to N1 machines are of
    /// (empty when there are none): their source is not the machine types', nor of their day.
    #[serde(default)]
    pub gpu_date: String,
    /// Where the GKE cluster fee comes from.
    pub fee_source: String,
    pub currency: String,
    /// Licences and attribution of the data.
    pub licence: String,
}

/// Hourly prices per region as the snapshot gives them: `[on-demand, spot]`.
type RawHourly = BTreeMap<String, [f64; 2]>;

/// Hourly prices, `[on-demand, spot]`, by the region's place in `Catalogue::regions`, sorted.
/// The snapshot's 4,900 prices kept as maps keyed by the region's name held half a megabyte for
/// as long as Gantry ran; this holds a fifth of it.
#[derive(Debug, Clone, Default)]
struct Hourly(Box<[(u16, [f64; 2])]>);

impl Hourly {
    fn new(raw: RawHourly, regions: &[Box<str>]) -> Self {
        let mut prices: Vec<(u16, [f64; 2])> = raw
            .into_iter()
            .filter_map(|(region, price)| {
                let at = regions.binary_search_by(|r| r.as_ref().cmp(&region)).ok()?;
                Some((u16::try_from(at).ok()?, price))
            })
            .collect();
        prices.sort_unstable_by_key(|(at, _)| *at);
        Self(prices.into_boxed_slice())
    }

    fn get(&self, region: u16) -> Option<[f64; 2]> {
        let at = self.0.binary_search_by_key(&region, |(r, _)| *r).ok()?;
        Some(self.0[at].1)
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawMachineType {
    /// Its vCPUs and memory as billed (0: a snapshot that does not say).
    #[serde(default)]
    vcpus: f64,
    #[serde(default)]
    memory_gb: f64,
    /// The GPUs this type carries (accelerator type → count); their price is in the type's.
    #[serde(default)]
    gpus: BTreeMap<String, u32>,
    hourly: RawHourly,
}

#[derive(Debug, Clone, Default)]
struct MachineType {
    vcpus: f64,
    memory_gb: f64,
    gpus: BTreeMap<String, u32>,
    hourly: Hourly,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct RawGpu {
    hourly: RawHourly,
}

/// The snapshot as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawCatalogue {
    about: About,
    hours_per_month: f64,
    gke_cluster_fee_per_hour: f64,
    /// Disk type → region → USD per GB-month.
    disks: BTreeMap<String, BTreeMap<String, f64>>,
    gpus: BTreeMap<String, RawGpu>,
    machine_types: BTreeMap<String, RawMachineType>,
}

/// The whole snapshot, parsed.
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    about: About,
    hours_per_month: f64,
    gke_cluster_fee_per_hour: f64,
    /// Disk type → region → USD per GB-month.
    disks: BTreeMap<String, BTreeMap<String, f64>>,
    /// GPU → its price attached to a node.
    gpus: BTreeMap<String, Hourly>,
    machine_types: BTreeMap<String, MachineType>,
    /// Every region any price is given for, sorted.
    regions: Box<[Box<str>]>,
}

impl Catalogue {
    /// The snapshot compiled into Gantry. Should it ever fail to parse (a test guards it), every
    /// price is unknown rather than the program failing.
    pub fn embedded() -> &'static Catalogue {
        static EMBEDDED: OnceLock<Catalogue> = OnceLock::new();
        EMBEDDED.get_or_init(|| {
            Catalogue::from_json(EMBEDDED_JSON).unwrap_or_else(|e| {
                tracing::error!("the embedded price snapshot does not parse: {e}");
                Catalogue::default()
            })
        })
    }

    /// A snapshot in the format `scripts/refresh-prices` writes.
    pub fn from_json(text: &str) -> Result<Catalogue, serde_json::Error> {
        let raw: RawCatalogue = serde_json::from_str(text)?;
        let prices = raw.machine_types.values().map(|m| &m.hourly);
        let gpu_prices = raw.gpus.values().map(|g| &g.hourly);
        let mut regions: BTreeSet<&str> = prices
            .chain(gpu_prices)
            .flat_map(|h| h.keys().map(String::as_str))
            .collect();
        regions.extend(
            raw.disks
                .values()
                .flat_map(|d| d.keys().map(String::as_str)),
        );
        let regions: Box<[Box<str>]> = regions.into_iter().map(Box::from).collect();
        let machine_types = raw
            .machine_types
            .into_iter()
            .map(|(name, m)| {
                let machine_type = MachineType {
                    vcpus: m.vcpus,
                    memory_gb: m.memory_gb,
                    gpus: m.gpus,
                    hourly: Hourly::new(m.hourly, &regions),
                };
                (name, machine_type)
            })
            .collect();
        let gpus = raw
            .gpus
            .into_iter()
            .map(|(name, g)| (name, Hourly::new(g.hourly, &regions)))
            .collect();
        Ok(Catalogue {
            about: raw.about,
            hours_per_month: raw.hours_per_month,
            gke_cluster_fee_per_hour: raw.gke_cluster_fee_per_hour,
            disks: raw.disks,
            gpus,
            machine_types,
            regions,
        })
    }

    pub fn about(&self) -> &About {
        &self.about
    }

    /// The hours a monthly figure stands for (730: a year's hours over twelve).
    pub fn hours_per_month(&self) -> f64 {
        self.hours_per_month
    }

    /// GKE's flat management fee per cluster, whatever its size (before any free-tier credit).
    pub fn cluster_fee_per_hour(&self) -> f64 {
        self.gke_cluster_fee_per_hour
    }

    /// The region of a zone (`us-central1-a` → `us-central1`) or a region itself, when the
    /// snapshot has prices there.
    pub fn region_of<'a>(&'a self, location: &str) -> Option<&'a str> {
        if let Some(at) = self.region_index(location) {
            return self.regions.get(usize::from(at)).map(AsRef::as_ref);
        }
        let (region, zone) = location.rsplit_once('-')?;
        let zone_letter = zone.len() == 1 && zone.bytes().all(|b| b.is_ascii_lowercase());
        let at = self.region_index(region).filter(|_| zone_letter)?;
        self.regions.get(usize::from(at)).map(AsRef::as_ref)
    }

    fn region_index(&self, region: &str) -> Option<u16> {
        let at = self
            .regions
            .binary_search_by(|r| r.as_ref().cmp(region))
            .ok()?;
        u16::try_from(at).ok()
    }

    /// One node of a machine type, per hour. An accelerator-optimized type's price includes the
    /// GPUs it carries.
    pub fn machine_type(
        &self,
        name: &str,
        location: &str,
        provisioning: Provisioning,
    ) -> Result<f64, Unpriced> {
        let region = self.region(location)?;
        let hourly = self.machine_types.get(name).map(|m| &m.hourly);
        hourly_price(hourly, self.region_index(region), provisioning)
            .ok_or_else(|| unpriced(Item::MachineType, name, region))
    }

    /// One GPU attached to a node, per hour. A GPU sold only inside its machine types
    /// ([`Catalogue::machine_types_carrying`]) has no price of its own.
    pub fn gpu(
        &self,
        name: &str,
        location: &str,
        provisioning: Provisioning,
    ) -> Result<f64, Unpriced> {
        let region = self.region(location)?;
        let hourly = self.gpus.get(name);
        hourly_price(hourly, self.region_index(region), provisioning)
            .ok_or_else(|| unpriced(Item::Gpu, name, region))
    }

    /// Persistent disk (`pd-standard`, `pd-balanced`, `pd-ssd`) per GB and month; spot nodes pay
    /// the same for their disks.
    pub fn disk_per_gb_month(&self, disk_type: &str, location: &str) -> Result<f64, Unpriced> {
        let region = self.region(location)?;
        let price = self
            .disks
            .get(disk_type)
            .and_then(|d| d.get(region))
            .copied();
        price
            .filter(|p| *p > 0.0)
            .ok_or_else(|| unpriced(Item::Disk, disk_type, region))
    }

    /// The GPUs a machine type carries, and how many (none for a type GPUs are attached to).
    pub fn gpus_carried_by(&self, machine_type: &str) -> impl Iterator<Item = (&str, u32)> {
        let gpus = self.machine_types.get(machine_type).map(|m| &m.gpus);
        gpus.into_iter()
            .flatten()
            .map(|(name, count)| (name.as_str(), *count))
    }

    /// Its vCPUs and memory in GiB (Compute Engine's "GB"), as billed: a shared-core E2 counts
    /// its share of a core (`e2-micro`: 0.25). None where the snapshot does not say.
    pub fn machine_size(&self, name: &str) -> Option<super::MachineSize> {
        let m = self.machine_types.get(name)?;
        (m.vcpus > 0.0 && m.memory_gb > 0.0).then_some(super::MachineSize {
            vcpus: m.vcpus,
            memory_gib: m.memory_gb,
        })
    }

    /// The machine types that carry a GPU (`nvidia-tesla-a100` → `a2-highgpu-1g`, …).
    pub fn machine_types_carrying<'a>(&'a self, gpu: &'a str) -> impl Iterator<Item = &'a str> {
        let carrying = self
            .machine_types
            .iter()
            .filter(move |(_, m)| m.gpus.contains_key(gpu));
        carrying.map(|(name, _)| name.as_str())
    }

    /// Every machine type in the snapshot.
    pub fn machine_type_names(&self) -> impl Iterator<Item = &str> {
        self.machine_types.keys().map(String::as_str)
    }

    /// Every region in the snapshot.
    pub fn regions(&self) -> impl Iterator<Item = &str> {
        self.regions.iter().map(AsRef::as_ref)
    }

    fn region<'a>(&'a self, location: &str) -> Result<&'a str, Unpriced> {
        self.region_of(location)
            .ok_or_else(|| unpriced(Item::Location, location, location))
    }
}

fn hourly_price(
    hourly: Option<&Hourly>,
    region: Option<u16>,
    provisioning: Provisioning,
) -> Option<f64> {
    let [on_demand, spot] = hourly?.get(region?)?;
    let price = match provisioning {
        Provisioning::OnDemand => on_demand,
        Provisioning::Spot => spot,
    };
    // The snapshot leaves out what it cannot price; a 0 would be a broken file, not a free node.
    (price > 0.0).then_some(price)
}

fn unpriced(item: Item, name: &str, region: &str) -> Unpriced {
    Unpriced {
        item,
        name: name.to_string(),
        region: region.to_string(),
    }
}
