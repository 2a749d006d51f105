//! The exporter's names for what Gantry keeps, old and new. Metric names are the first column
//! of the exporter's counters CSV (`etc/default-counters.csv`, `etc/dcp-metrics-included.csv`);
//! `--use-old-namespace` with `etc/1.x-compatibility-metrics.csv` prints the lowercase 1.x names
//! (NVIDIA/dcgm-exporter @ 0869a2ac03c73e82715438f44d2ecf2491049139); DCGM 4.6 renamed the
//! fields (go-dcgm `pkg/dcgm/const_fields.go`, "renamed per DCGM Field Naming Standard", @
//! b7fa31542404a9090ad0d1aabbbe592afbe234cb) and an exporter that follows will print those. All
//! are read; the units are the field's, whatever its name.

/// What Gantry keeps of a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// Integer percent, 0–100 (field 203).
    GpuUtil,
    /// Ratio 0–1 of time the graphics or compute engine is active (field 1001).
    GrEngineActive,
    /// Ratio 0–1 of cycles an SM has a warp assigned (field 1002; off in the default counters).
    SmActive,
    /// MiB (fields 250–253).
    FbTotal,
    FbFree,
    FbUsed,
    FbReserved,
    /// Watts (field 155).
    Power,
    /// The power limit the driver enforces, watts (field 158; not in the default counters).
    PowerLimit,
    /// Degrees Celsius (field 150).
    Temperature,
}

impl Field {
    /// The field a metric name is, if Gantry keeps it.
    pub fn of(name: &str) -> Option<Field> {
        Some(match name {
            "DCGM_FI_DEV_GPU_UTIL" | "DCGM_FI_DEV_GPU_UTIL_RATIO" | "dcgm_gpu_utilization" => {
                Field::GpuUtil
            }
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
            | "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO"
            | "dcgm_fi_prof_gr_engine_active" => Field::GrEngineActive,
            "DCGM_FI_PROF_SM_ACTIVE" | "DCGM_FI_PROF_SM_UTIL_RATIO" | "dcgm_fi_prof_sm_active" => {
                Field::SmActive
            }
            "DCGM_FI_DEV_FB_TOTAL" => Field::FbTotal,
            "DCGM_FI_DEV_FB_FREE" | "dcgm_fb_free" => Field::FbFree,
            "DCGM_FI_DEV_FB_USED" | "dcgm_fb_used" => Field::FbUsed,
            "DCGM_FI_DEV_FB_RESERVED" => Field::FbReserved,
            "DCGM_FI_DEV_POWER_USAGE" | "DCGM_FI_DEV_BOARD_POWER_WATTS" | "dcgm_power_usage" => {
                Field::Power
            }
            "DCGM_FI_DEV_ENFORCED_POWER_LIMIT" => Field::PowerLimit,
            "DCGM_FI_DEV_GPU_TEMP" | "DCGM_FI_DEV_GPU_TEMP_CELSIUS" | "dcgm_gpu_temp" => {
                Field::Temperature
            }
            _ => return None,
        })
    }
}

/// DCGM's blank values (go-dcgm `pkg/dcgm/const.go` lines 54-63: `DCGM_FT_INT64_BLANK` =
/// 9223372036854775792 and up, `DCGM_FT_FP64_BLANK` = 140737488355328.0 and up): an exporter
/// skips them, an old one printed them. No data, like a value that is not finite.
pub fn is_data(value: f64) -> bool {
    value.is_finite() && value < 140_737_488_355_328.0
}

/// Label names: the current one first, then what older exporters or `--use-old-namespace`
/// print (NVIDIA/dcgm-exporter `internal/pkg/transformation/const.go` lines 21-31 @
/// d5e5f510a1b6b393f39a43293ccd9dc985defc79; `render_metrics.go` line 47 for the rest).
pub const GPU: &[&str] = &["gpu"];
pub const UUID: &[&str] = &["UUID", "uuid"];
pub const MODEL: &[&str] = &["modelName"];
pub const POD: &[&str] = &["pod", "pod_name"];
pub const NAMESPACE: &[&str] = &["namespace", "pod_namespace"];
pub const CONTAINER: &[&str] = &["container", "container_name"];
pub const MIG_PROFILE: &[&str] = &["GPU_I_PROFILE"];
pub const MIG_INSTANCE: &[&str] = &["GPU_I_ID"];
