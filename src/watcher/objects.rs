//! Every object the watcher of a training Job is made of, from the config: its ServiceAccount
//! (acting as a Google service account through Workload Identity when one is named), its Role
//! and ClusterRole with their bindings ([`super::rbac`]), its settings' ConfigMap and Secret
//! ([`super::carried`]), its Deployment of one replica, and — with `expose = "load-balancer"` —
//! a LoadBalancer Service for its SSH port. Each carries the watcher's labels (`super::labels`).

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentSpec, DeploymentStrategy, RollingUpdateDeployment,
};
use k8s_openapi::api::core::v1::{
    Capabilities, ConfigMap, ConfigMapVolumeSource, Container, ContainerPort, EmptyDirVolumeSource,
    EnvVar, EnvVarSource, HTTPGetAction, ObjectFieldSelector, PodSecurityContext, PodSpec,
    PodTemplateSpec, Probe, ResourceRequirements, Secret, SecretVolumeSource, SecurityContext,
    Service, ServiceAccount, ServicePort, ServiceSpec, Volume, VolumeMount,
};
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::ObjectMeta;

use super::rbac::{CLUSTER, NAMESPACED};
use super::{CONFIG_DIR, CONFIG_FILE, HEALTH_PORT, SECRET_DIR, SSH_PORT};
use crate::config::{Config, Expose};

/// The annotation GKE Workload Identity reads on a Kubernetes service account.
pub const WORKLOAD_IDENTITY: &str = "iam.gke.io/gcp-service-account";
/// The file of the Secret that holds the SSH server's own key (kept across installs).
pub const HOST_KEY_FILE: &str = "ssh_host_ed25519_key";
pub const AUTHORIZED_KEYS_FILE: &str = "authorized_keys";
pub const OPERATORS_FILE: &str = "operators";
/// The user the image runs as (its Dockerfile makes it).
const RUN_AS: i64 = 10001;

/// How the watcher is to be made.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub namespace: String,
    pub job: String,
    pub image: String,
    pub serve: bool,
    pub expose: Expose,
    pub source_ranges: Vec<String>,
    pub google_service_account: Option<String>,
    /// The carried settings' document and the Secret's data.
    pub document: String,
    pub secrets: BTreeMap<String, String>,
    /// The Container API endpoint when it is not Google's (the simulator's).
    pub gke_endpoint: Option<String>,
    pub cpu: String,
    pub memory: String,
    pub memory_limit: String,
}

impl Plan {
    /// The plan of `config`'s watcher running `image`, with the carried settings.
    pub fn of(config: &Config, image: &str, carried: super::carried::Carried) -> Plan {
        let w = &config.watcher;
        Plan {
            namespace: super::namespace(config),
            job: config.job.name.clone(),
            image: image.to_string(),
            serve: w.serve,
            expose: w.expose,
            source_ranges: w.source_ranges.clone(),
            google_service_account: w.google_service_account.clone(),
            document: carried.document,
            secrets: carried.secrets,
            gke_endpoint: None,
            cpu: w.cpu.clone(),
            memory: w.memory.clone(),
            memory_limit: w.memory_limit.clone(),
        }
    }

    fn meta(&self, name: String) -> ObjectMeta {
        ObjectMeta {
            name: Some(name),
            namespace: Some(self.namespace.clone()),
            labels: Some(super::labels(&self.job)),
            ..Default::default()
        }
    }

    fn name(&self) -> String {
        super::name(&self.job)
    }

    pub fn service_account(&self) -> ServiceAccount {
        let mut meta = self.meta(self.name());
        if let Some(gsa) = &self.google_service_account {
            meta.annotations = Some(BTreeMap::from([(
                WORKLOAD_IDENTITY.to_string(),
                gsa.clone(),
            )]));
        }
        ServiceAccount {
            metadata: meta,
            ..Default::default()
        }
    }

    fn subject(&self) -> Vec<Subject> {
        vec![Subject {
            kind: "ServiceAccount".into(),
            name: self.name(),
            namespace: Some(self.namespace.clone()),
            ..Default::default()
        }]
    }

    pub fn role(&self) -> Role {
        Role {
            metadata: self.meta(self.name()),
            rules: Some(NAMESPACED.iter().map(|r| r.policy()).collect()),
        }
    }

    pub fn role_binding(&self) -> RoleBinding {
        RoleBinding {
            metadata: self.meta(self.name()),
            role_ref: RoleRef {
                api_group: "rbac.authorization.k8s.io".into(),
                kind: "Role".into(),
                name: self.name(),
            },
            subjects: Some(self.subject()),
        }
    }

    fn cluster_meta(&self) -> ObjectMeta {
        ObjectMeta {
            name: Some(super::cluster_name(&self.namespace, &self.job)),
            labels: Some(super::labels(&self.job)),
            ..Default::default()
        }
    }

    pub fn cluster_role(&self) -> ClusterRole {
        ClusterRole {
            metadata: self.cluster_meta(),
            rules: Some(CLUSTER.iter().map(|r| r.policy()).collect()),
            ..Default::default()
        }
    }

    pub fn cluster_role_binding(&self) -> ClusterRoleBinding {
        ClusterRoleBinding {
            metadata: self.cluster_meta(),
            role_ref: RoleRef {
                api_group: "rbac.authorization.k8s.io".into(),
                kind: "ClusterRole".into(),
                name: super::cluster_name(&self.namespace, &self.job),
            },
            subjects: Some(self.subject()),
        }
    }

    pub fn config_map(&self) -> ConfigMap {
        ConfigMap {
            metadata: self.meta(self.name()),
            data: Some(BTreeMap::from([(
                CONFIG_FILE.to_string(),
                self.document.clone(),
            )])),
            ..Default::default()
        }
    }

    pub fn secret(&self) -> Secret {
        Secret {
            metadata: self.meta(self.name()),
            data: Some(
                self.secrets
                    .iter()
                    .map(|(k, v)| (k.clone(), ByteString(v.clone().into_bytes())))
                    .collect(),
            ),
            type_: Some("Opaque".into()),
            ..Default::default()
        }
    }

    /// The LoadBalancer Service of `expose = "load-balancer"`.
    pub fn load_balancer(&self) -> Option<Service> {
        (self.expose == Expose::LoadBalancer).then(|| Service {
            metadata: self.meta(self.name()),
            spec: Some(ServiceSpec {
                type_: Some("LoadBalancer".into()),
                selector: Some(self.pod_labels()),
                ports: Some(vec![ServicePort {
                    name: Some("ssh".into()),
                    port: i32::from(SSH_PORT),
                    target_port: Some(IntOrString::Int(i32::from(SSH_PORT))),
                    ..Default::default()
                }]),
                load_balancer_source_ranges: Some(self.source_ranges.clone()),
                ..Default::default()
            }),
            ..Default::default()
        })
    }

    fn pod_labels(&self) -> BTreeMap<String, String> {
        let mut labels = super::labels(&self.job);
        labels.remove(super::VERSION_LABEL);
        labels
    }

    /// What the container runs: `gantry --in-cluster watch` (or `serve`), its health endpoint
    /// and SSH server on the pod's own address.
    pub fn args(&self) -> Vec<String> {
        let mut args = vec!["--in-cluster".to_string()];
        if let Some(endpoint) = &self.gke_endpoint {
            args.extend(["--gke-endpoint".to_string(), endpoint.clone()]);
        }
        let health = format!("$(POD_IP):{HEALTH_PORT}");
        if self.serve {
            let secret = |file: &str| format!("{SECRET_DIR}/{file}");
            args.extend([
                "serve".to_string(),
                "--ssh-listen".to_string(),
                format!("$(POD_IP):{SSH_PORT}"),
                "--host-key".to_string(),
                secret(HOST_KEY_FILE),
                "--authorized-keys".to_string(),
                secret(AUTHORIZED_KEYS_FILE),
                "--operators".to_string(),
                secret(OPERATORS_FILE),
            ]);
        } else {
            args.push("watch".to_string());
        }
        args.extend(["--health".to_string(), health]);
        args
    }

    pub fn deployment(&self) -> Deployment {
        let pod_labels = self.pod_labels();
        let quantity = |q: &str| Quantity(q.to_string());
        let field = |path: &str| EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: path.to_string(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let env = vec![
            EnvVar {
                name: "POD_IP".into(),
                value_from: Some(field("status.podIP")),
                ..Default::default()
            },
            EnvVar {
                name: "POD_NAME".into(),
                value_from: Some(field("metadata.name")),
                ..Default::default()
            },
            EnvVar {
                name: "HOME".into(),
                value: Some("/var/lib/gantry".into()),
                ..Default::default()
            },
            EnvVar {
                name: super::CONFIG_ENV.into(),
                value: Some(format!("{CONFIG_DIR}/{CONFIG_FILE}")),
                ..Default::default()
            },
            EnvVar {
                name: super::SECRETS_ENV.into(),
                value: Some(SECRET_DIR.into()),
                ..Default::default()
            },
            // Where the kubelet projects the token (named, so a kubelet that puts it elsewhere
            // — the simulated cluster's — can say where).
            EnvVar {
                name: crate::k8s::in_cluster::SERVICE_ACCOUNT_DIR_ENV.into(),
                value: Some(crate::k8s::in_cluster::SERVICE_ACCOUNT_DIR.into()),
                ..Default::default()
            },
        ];
        let probe = |path: &str, failures: i32| Probe {
            http_get: Some(HTTPGetAction {
                path: Some(path.to_string()),
                port: IntOrString::Int(i32::from(HEALTH_PORT)),
                ..Default::default()
            }),
            period_seconds: Some(10),
            failure_threshold: Some(failures),
            ..Default::default()
        };
        let mut ports = vec![ContainerPort {
            name: Some("health".into()),
            container_port: i32::from(HEALTH_PORT),
            ..Default::default()
        }];
        if self.serve {
            ports.push(ContainerPort {
                name: Some("ssh".into()),
                container_port: i32::from(SSH_PORT),
                ..Default::default()
            });
        }
        let container = Container {
            name: "gantry".into(),
            image: Some(self.image.clone()),
            args: Some(self.args()),
            env: Some(env),
            ports: Some(ports),
            readiness_probe: Some(probe("/readyz", 3)),
            // Stuck for a minute and a half: the engine made no round in all that time.
            liveness_probe: Some(probe("/healthz", 9)),
            resources: Some(ResourceRequirements {
                requests: Some(BTreeMap::from([
                    ("cpu".to_string(), quantity(&self.cpu)),
                    ("memory".to_string(), quantity(&self.memory)),
                ])),
                limits: Some(BTreeMap::from([(
                    "memory".to_string(),
                    quantity(&self.memory_limit),
                )])),
                ..Default::default()
            }),
            volume_mounts: Some(vec![
                VolumeMount {
                    name: "config".into(),
                    mount_path: CONFIG_DIR.into(),
                    read_only: Some(true),
                    ..Default::default()
                },
                VolumeMount {
                    name: "secret".into(),
                    mount_path: SECRET_DIR.into(),
                    read_only: Some(true),
                    ..Default::default()
                },
                VolumeMount {
                    name: "state".into(),
                    mount_path: "/var/lib/gantry".into(),
                    ..Default::default()
                },
            ]),
            security_context: Some(SecurityContext {
                allow_privilege_escalation: Some(false),
                read_only_root_filesystem: Some(true),
                run_as_non_root: Some(true),
                capabilities: Some(Capabilities {
                    drop: Some(vec!["ALL".into()]),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        let volumes = vec![
            Volume {
                name: "config".into(),
                config_map: Some(ConfigMapVolumeSource {
                    name: self.name(),
                    ..Default::default()
                }),
                ..Default::default()
            },
            Volume {
                name: "secret".into(),
                secret: Some(SecretVolumeSource {
                    secret_name: Some(self.name()),
                    default_mode: Some(0o400),
                    ..Default::default()
                }),
                ..Default::default()
            },
            Volume {
                name: "state".into(),
                empty_dir: Some(EmptyDirVolumeSource::default()),
                ..Default::default()
            },
        ];
        Deployment {
            metadata: self.meta(self.name()),
            spec: Some(DeploymentSpec {
                replicas: Some(1),
                selector: LabelSelector {
                    match_labels: Some(pod_labels.clone()),
                    ..Default::default()
                },
                // One at a time: the old pod gives its Lease up as it stops, and the new one
                // takes it; an engine on a laptop covers the gap if there is one.
                strategy: Some(DeploymentStrategy {
                    type_: Some("RollingUpdate".into()),
                    rolling_update: Some(RollingUpdateDeployment {
                        max_surge: Some(IntOrString::Int(0)),
                        max_unavailable: Some(IntOrString::Int(1)),
                    }),
                }),
                template: PodTemplateSpec {
                    metadata: Some(ObjectMeta {
                        labels: Some(pod_labels),
                        ..Default::default()
                    }),
                    spec: Some(PodSpec {
                        service_account_name: Some(self.name()),
                        containers: vec![container],
                        volumes: Some(volumes),
                        termination_grace_period_seconds: Some(10),
                        security_context: Some(PodSecurityContext {
                            run_as_user: Some(RUN_AS),
                            run_as_group: Some(RUN_AS),
                            fs_group: Some(RUN_AS),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }),
                },
                ..Default::default()
            }),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn plan(serve: bool) -> Plan {
        let mut config = Config::default();
        config.watcher.image = Some("example.com/team/gantry:test".into());
        config.watcher.serve = serve;
        config.watcher.google_service_account = Some("gantry@p.iam.gserviceaccount.com".into());
        let carried = super::super::carried::carry(&config);
        Plan::of(&config, "example.com/team/gantry:test", carried)
    }

    #[test]
    fn the_watcher_runs_as_its_own_account_with_its_settings_mounted_and_nothing_secret_in_view() {
        let p = plan(false);
        let d = p.deployment();
        let pod = d.spec.as_ref().unwrap().template.spec.as_ref().unwrap();
        assert_eq!(
            pod.service_account_name.as_deref(),
            Some("gantry-watcher-ml-training-job")
        );
        let c = &pod.containers[0];
        assert_eq!(
            c.args.as_ref().unwrap(),
            &["--in-cluster", "watch", "--health", "$(POD_IP):8080"]
        );
        let everything = serde_json::to_string(&d).unwrap();
        assert!(!everything.contains("hooks.slack.com"));
        assert_eq!(
            p.service_account().metadata.annotations.unwrap()[WORKLOAD_IDENTITY],
            "gantry@p.iam.gserviceaccount.com"
        );
        let labels = d.metadata.labels.unwrap();
        assert_eq!(labels[super::super::COMPONENT], "watcher");
        assert!(!labels.contains_key(crate::k8s::labels::JOB_LABEL));
    }

    #[test]
    fn serving_adds_the_ssh_server_on_the_pod_s_address_with_the_secret_s_keys() {
        let args = plan(true).args();
        assert_eq!(args[1], "serve");
        assert!(
            args.windows(2)
                .any(|w| w == ["--ssh-listen", "$(POD_IP):2222"])
        );
        assert!(
            args.windows(2)
                .any(|w| w == ["--host-key", "/etc/gantry/secret/ssh_host_ed25519_key"])
        );
    }
}
