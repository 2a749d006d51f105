//! `gantry plan [--json] [--exit-code]`: what `gantry up` would do to the cluster, as `pulumi
//! preview` shows a program's changes, with what the cluster costs before and after. Reads only:
//! the comparison is [`crate::gke::plan`]; this finds the cluster as `gantry status` does and
//! says the result for a person or, with `--json`, for a script. With `[watcher] in-cluster =
//! true` the watcher is part of it (`crate::watcher::planned`): made, current or changed, and
//! what it costs.

use serde::Serialize;

use super::connect::{Prepared, fail, prepare};
use crate::cli::PlanArgs;
use crate::gke::plan::{Action, Change, Current, Plan, plan, plan_keeping};
pub use crate::gke::plan_text::render;
use crate::gke::{ClusterRef, ClusterSummary, Gke};
use crate::pricing::Estimate;
use crate::settings::Settings;
use crate::watcher::planned::Planned;

/// `--exit-code`'s answer when the plan has something to do (0: nothing; 1 and 2 are errors).
pub const EXIT_CHANGES: i32 = 3;

/// `gantry plan --json`: one object.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanReport<'a> {
    pub action: Action,
    pub changes: &'a [Change],
    pub cost_per_hour: CostPerHour,
    /// With `[watcher] in-cluster = true`: the watcher, what becomes of it, and its cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watcher: Option<&'a Planned>,
}

/// US dollars per hour before and after; `null` where the price snapshot lacks something (or,
/// for `current`, before the cluster exists). Never 0 for an unknown price.
#[derive(Debug, Serialize)]
pub struct CostPerHour {
    pub current: Option<f64>,
    pub desired: Option<f64>,
    pub currency: &'static str,
}

impl<'a> PlanReport<'a> {
    pub fn of(plan: &'a Plan, watcher: Option<&'a Planned>) -> Self {
        let round = |usd: f64| (usd * 1e4).round() / 1e4;
        Self {
            action: plan.action,
            changes: &plan.changes,
            cost_per_hour: CostPerHour {
                current: plan.cost_now.as_ref().and_then(Estimate::usd).map(round),
                desired: plan.cost_after.usd().map(round),
                currency: "USD",
            },
            watcher,
        }
    }
}

pub async fn run(args: PlanArgs, settings: &Settings) -> i32 {
    let target = settings.target();
    if let Some(context) = &target.context {
        crate::errln!(
            "gantry: plan compares the config with the GKE cluster it describes; context {context} is not one Gantry manages: drop --context (and give --project and --location), or try it on the simulated cloud with `gantry --sim plan`"
        );
        return 2;
    }
    let found = if settings.session.sim {
        on_sim(settings).await
    } else {
        on_gke(settings).await
    };
    let (plan, cluster, watcher) = match found {
        Ok(found) => found,
        Err(code) => return code,
    };
    if args.json {
        match crate::sanitize::to_json_pretty(&PlanReport::of(&plan, watcher.as_ref())) {
            Ok(text) => crate::outln!("{text}"),
            Err(e) => return fail(&e, 1),
        }
    } else {
        for line in render(&plan, &cluster) {
            crate::outln!("{line}");
        }
        for line in watcher.as_ref().map(Planned::lines).unwrap_or_default() {
            crate::outln!("{line}");
        }
    }
    let watcher_changes = watcher.as_ref().is_some_and(Planned::needs_install);
    match plan.action {
        Action::Create | Action::Update if args.exit_code => EXIT_CHANGES,
        Action::None if args.exit_code && watcher_changes => EXIT_CHANGES,
        _ => 0,
    }
}

/// The cluster's plan, the cluster, and the watcher's plan (with `[watcher] in-cluster`).
type Found = (Plan, ClusterRef, Option<Planned>);

async fn on_gke(settings: &Settings) -> Result<Found, i32> {
    let Prepared {
        config,
        cluster,
        gke,
    } = prepare(settings).await?;
    let plan = plan_against(&gke, &cluster, &config).await?;
    let watcher = super::up_watcher::planned(settings, &gke, &cluster, &config).await?;
    Ok((plan, cluster, watcher))
}

/// The embedded simulated cloud, fresh: what `up` would create there.
async fn on_sim(settings: &Settings) -> Result<Found, i32> {
    let config = settings.config.clone();
    let options = crate::engine::SessionOptions {
        target: settings.target().clone(),
        sim: true,
        time_scale: 1.0,
        ..Default::default()
    };
    let session = crate::engine::open_session(&options, config)
        .await
        .map_err(|e| fail(&format!("{e:#}"), 1))?;
    let crate::engine::session::Backend::Gke { gke, target, .. } = &session.backend else {
        return Err(fail(&"the simulated cloud did not open as GKE", 1));
    };
    let plan = plan_against(gke, target, &session.config).await?;
    let watcher = super::up_watcher::planned(settings, gke, target, &session.config).await?;
    Ok((plan, target.clone(), watcher))
}

/// The plan for the config's cluster against what GKE reports of it now. Fallback pools an
/// unfinished attempt of the Job targets are kept.
pub(super) async fn plan_against(
    gke: &Gke,
    cluster: &ClusterRef,
    config: &crate::config::Config,
) -> Result<Plan, i32> {
    let found = gke
        .get_cluster(cluster)
        .await
        .map_err(|e| fail(&e, e.exit_code()))?;
    Ok(match found {
        None => plan(&config.cluster, &cluster.location, None),
        Some(c) => {
            let summary = ClusterSummary::from_cluster(cluster, &c);
            let in_use = fallbacks_in_use(gke, cluster, &c, &summary, &config.job).await;
            plan_keeping(
                &config.cluster,
                &cluster.location,
                Some(Current {
                    summary: &summary,
                    labels: &summary.labels,
                }),
                &in_use,
            )
        }
    })
}

/// The cluster's fallback pools that an unfinished attempt of the Job targets. When the Jobs
/// cannot be read, every fallback pool is taken as in use: none is removed unseen.
async fn fallbacks_in_use(
    gke: &Gke,
    cluster: &ClusterRef,
    found: &google_cloud_container_v1::model::Cluster,
    summary: &ClusterSummary,
    job: &crate::config::JobConfig,
) -> Vec<String> {
    let fallbacks: Vec<String> = crate::gke::fallback::pools_of(summary)
        .into_iter()
        .map(|(pool, _)| pool)
        .collect();
    if fallbacks.is_empty() {
        return fallbacks;
    }
    let read = async {
        let client = crate::gke::cluster_client::cluster_client(cluster, found, gke.auth())
            .map_err(|e| e.to_string())?;
        crate::k8s::attempts::list_attempts(&client, job)
            .await
            .map_err(|e| e.to_string())
    };
    match read.await {
        Ok(jobs) => jobs
            .iter()
            .map(crate::k8s::status::AttemptSummary::of)
            .filter(|a| !a.status.is_finished())
            .filter_map(|a| a.node_pool)
            .filter(|pool| fallbacks.contains(pool))
            .collect(),
        Err(e) => {
            crate::errln!(
                "gantry: could not read the Job's attempts ({e}): the fallback pools {} are kept as if a run used them",
                fallbacks.join(", ")
            );
            fallbacks
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::collections::BTreeMap;

    use serde_json::Value;

    use super::*;
    use crate::config::ClusterConfig;
    use crate::gke::ClusterStatus;
    use crate::gke::summary::PoolSummary;

    fn cluster() -> ClusterRef {
        ClusterRef::new("demo-project", "us-central1-a", "ml-gke-cluster")
    }

    fn hand_made(machine_type: &str, nodes: u32) -> ClusterSummary {
        ClusterSummary {
            status: ClusterStatus::Running,
            node_count: nodes,
            node_pools: vec![PoolSummary {
                initial_node_count: 1,
                ..PoolSummary::running("default-pool", machine_type, nodes)
            }],
            ..ClusterSummary::not_found(&cluster(), machine_type)
        }
    }

    fn plan_of(summary: Option<&ClusterSummary>) -> Plan {
        let labels = BTreeMap::new();
        let current = summary.map(|summary| Current {
            summary,
            labels: &labels,
        });
        plan(&ClusterConfig::default(), "us-central1-a", current)
    }

    #[test]
    fn an_update_reads_as_a_preview_with_the_cost_before_and_after() {
        let lines = render(&plan_of(Some(&hand_made("e2-medium", 1))), &cluster());
        assert_eq!(
            lines[0],
            "Plan for cluster ml-gke-cluster (demo-project/us-central1-a):"
        );
        assert_eq!(lines[1], "  ~ default-pool.nodeCount: 1 → 3 (in place)");
        assert_eq!(
            lines[2],
            "  ~ default-pool.machineType: e2-medium → n1-standard-1 (nodes recreated)"
        );
        assert!(lines[3].starts_with("Cost: ≈ $0.1"), "{lines:?}");
        assert!(lines[3].contains("/h → $0.28/h ("), "{lines:?}");
        assert!(lines[3].ends_with("→ $207/month)"), "{lines:?}");
    }

    #[test]
    fn nothing_to_do_says_so() {
        let lines = render(&plan_of(Some(&hand_made("n1-standard-1", 3))), &cluster());
        assert_eq!(lines[1], "No changes: the cluster matches the config.");
        assert_eq!(lines[2], "Cost: ≈ $0.28/h, $207/month");
    }

    #[test]
    fn a_create_lists_what_would_be_made_and_its_cost() {
        let lines = render(&plan_of(None), &cluster());
        assert_eq!(lines[1], "  + cluster ml-gke-cluster in us-central1-a");
        assert_eq!(
            lines[2],
            "  + pool default-pool: 3 × n1-standard-1, 100 GB pd-balanced"
        );
        assert_eq!(lines[3], "Cost: ≈ $0.28/h, $207/month");
    }

    fn watcher() -> Planned {
        let mut config = crate::config::Config::default();
        config.watcher.in_cluster = true;
        config.watcher.image = Some("example.com/team/gantry:1".into());
        config.watcher.authorized_keys = Some("/dev/null".into());
        config.watcher.operators = Some("/dev/null".into());
        let desired = crate::watcher::desired::Desired::in_cluster(&config, None)
            .unwrap()
            .unwrap();
        Planned::of(&desired, &config, "us-central1-a", Ok(None))
    }

    #[test]
    fn the_json_carries_the_watcher_only_when_the_config_puts_it_in_the_cluster() {
        let plan = plan_of(None);
        let without = serde_json::to_value(PlanReport::of(&plan, None)).unwrap();
        assert!(without.get("watcher").is_none(), "{without}");
        let w = watcher();
        let with = serde_json::to_value(PlanReport::of(&plan, Some(&w))).unwrap();
        let json = &with["watcher"];
        assert_eq!(json["deployment"], "gantry-watcher-ml-training-job");
        assert_eq!(json["namespace"], "default");
        assert_eq!(json["image"], "example.com/team/gantry:1");
        assert_eq!(json["state"]["is"], "new");
        assert_eq!(
            json["objects"][0],
            "ServiceAccount/gantry-watcher-ml-training-job"
        );
        assert_eq!(json["cost"]["by"], "CPU");
        assert_eq!(json["cost"]["pool"], "default-pool");
        let per_hour = json["cost"]["perHour"].as_f64().unwrap();
        assert_eq!(Some(per_hour), w.cost.per_hour);
        assert!(per_hour > 0.0);
    }

    #[test]
    fn an_unpriced_machine_type_is_price_unknown_never_zero() {
        let plan = plan_of(Some(&hand_made("z9-imaginary-1", 3)));
        let lines = render(&plan, &cluster());
        let cost = lines.last().unwrap();
        assert!(cost.starts_with("Cost: price unknown ("), "{cost}");
        assert!(cost.contains("z9-imaginary-1"), "{cost}");
        let json = serde_json::to_value(PlanReport::of(&plan, None)).unwrap();
        assert_eq!(json["costPerHour"]["current"], Value::Null);
        assert!(json["costPerHour"]["desired"].as_f64().unwrap() > 0.0);
        assert_eq!(json["costPerHour"]["currency"], "USD");
        assert_eq!(json["action"], "update");
        assert_eq!(json["changes"][0]["pool"], "default-pool");
        assert_eq!(json["changes"][0]["how"], "recreate-nodes");
    }
}
