//! `printService`: type, cluster and external addresses, ports and selector.

use jiff::Timestamp;
use serde_json::Value;

use super::labels::format_labels;
use super::{creation_age, int, items, name_of, or_placeholder, s, text};

/// `printService`: Name, Type, Cluster-IP, External-IP, Port(s), Age, Selector.
pub(super) fn cells(svc: &Value, now: Timestamp) -> Vec<Value> {
    let spec = &svc["spec"];
    let svc_type = match text(&spec["type"]) {
        "" => "ClusterIP",
        t => t,
    };
    let cluster_ip = spec
        .pointer("/clusterIPs/0")
        .and_then(Value::as_str)
        .filter(|ip| !ip.is_empty())
        .or_else(|| spec["clusterIP"].as_str().filter(|ip| !ip.is_empty()))
        .unwrap_or("<none>");
    let ports = items(&spec["ports"])
        .iter()
        .map(|p| {
            let protocol = match text(&p["protocol"]) {
                "" => "TCP",
                proto => proto,
            };
            let node_port = int(&p["nodePort"]);
            if node_port > 0 {
                format!("{}:{node_port}/{protocol}", int(&p["port"]))
            } else {
                format!("{}/{protocol}", int(&p["port"]))
            }
        })
        .collect::<Vec<_>>()
        .join(",");
    vec![
        s(name_of(svc)),
        s(svc_type),
        s(cluster_ip),
        s(service_external_ip(svc, svc_type)),
        s(or_placeholder(&ports, "<none>")),
        s(creation_age(svc, now)),
        s(format_labels(&spec["selector"])),
    ]
}

/// `getServiceExternalIP` (wide, so load-balancer addresses are not truncated).
fn service_external_ip(svc: &Value, svc_type: &str) -> String {
    let external: Vec<&str> = items(&svc["spec"]["externalIPs"])
        .iter()
        .map(text)
        .collect();
    match svc_type {
        "ClusterIP" | "NodePort" => {
            if external.is_empty() {
                "<none>".to_string()
            } else {
                external.join(",")
            }
        }
        "LoadBalancer" => {
            let mut results: Vec<&str> = items(&svc["status"]["loadBalancer"]["ingress"])
                .iter()
                .filter_map(|i| {
                    [text(&i["ip"]), text(&i["hostname"])]
                        .into_iter()
                        .find(|a| !a.is_empty())
                })
                .collect();
            results.extend(external);
            if results.is_empty() {
                "<pending>".to_string()
            } else {
                results.join(",")
            }
        }
        "ExternalName" => text(&svc["spec"]["externalName"]).to_string(),
        _ => "<unknown>".to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::kube::api::table::cells::fixtures::{ago, now};

    #[test]
    fn service_rows() {
        let svc = json!({
            "metadata": {"name": "web", "creationTimestamp": ago(45 * 60)},
            "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
                     "ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080}],
                     "selector": {"app": "web", "tier": "front"}},
        });
        assert_eq!(
            cells(&svc, now()),
            vec![
                json!("web"),
                json!("ClusterIP"),
                json!("10.96.0.10"),
                json!("<none>"),
                json!("80/TCP"),
                json!("45m"),
                json!("app=web,tier=front")
            ]
        );

        let headless = json!({"metadata": {"name": "h"},
                              "spec": {"type": "ClusterIP", "clusterIP": "None", "clusterIPs": ["None"]}});
        let row = cells(&headless, now());
        assert_eq!(row[2], "None");
        assert_eq!(row[4], "<none>");
        assert_eq!(row[6], "<none>");

        let node_port = json!({"metadata": {"name": "np"},
            "spec": {"type": "NodePort", "clusterIPs": ["10.96.1.1"],
                     "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"},
                               {"port": 53, "protocol": "UDP"}]}});
        assert_eq!(cells(&node_port, now())[4], "80:30080/TCP,53/UDP");

        let lb = json!({"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer"}});
        assert_eq!(cells(&lb, now())[3], "<pending>");
    }
}
