//! One probe of a process container, made as the kubelet's prober makes it: an HTTP GET (a
//! status from 200 to 399 is success), a TCP connection, or a command run in the container (exit
//! 0 is success), each within `timeoutSeconds`, failing with the prober's own words. gRPC and
//! HTTPS probes are not made: they fail, saying so.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use http_body_util::BodyExt;
use serde_json::{Value, json};

use super::child::Launch;
use super::launch::{Environment, Mounts, command_line};

/// What a probe does.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Http {
        host: String,
        port: u16,
        path: String,
        headers: Vec<(String, String)>,
        https: bool,
    },
    Tcp {
        host: String,
        port: u16,
    },
    Exec {
        command: Vec<String>,
    },
    Unsupported(String),
}

/// A container as an exec probe runs in it: its launch, mount paths and EXECUTABLE.
#[derive(Debug, Clone)]
pub struct InContainer {
    pub launch: Launch,
    pub mounts: Mounts,
    pub executable: std::path::PathBuf,
}

/// A probe with its timing, as the API server defaulted it (seconds, simulated but for the
/// timeout, which bounds a real request).
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    pub action: Action,
    pub initial_delay: u64,
    pub period: u64,
    pub timeout: Duration,
    pub success_threshold: u32,
    pub failure_threshold: u32,
    /// `terminationGracePeriodSeconds` of the probe itself, for a liveness kill.
    pub grace: Option<u64>,
}

impl Probe {
    /// The container's probe `key` (`readinessProbe`, ...), aimed at `pod_ip` unless it names
    /// a host.
    pub fn of(container: &Value, key: &str, pod_ip: IpAddr) -> Option<Self> {
        let probe = container.get(key).filter(|p| p.is_object())?;
        let seconds = |k: &str, default: u64| probe[k].as_u64().unwrap_or(default);
        let host = |handler: &Value| {
            handler["host"]
                .as_str()
                .filter(|h| !h.is_empty())
                .map_or_else(|| pod_ip.to_string(), str::to_string)
        };
        let action = if let Some(http) = probe.get("httpGet") {
            match port_of(container, &http["port"]) {
                Ok(port) => Action::Http {
                    host: host(http),
                    port,
                    path: http["path"].as_str().unwrap_or("/").to_string(),
                    headers: http["httpHeaders"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|h| {
                            Some((h["name"].as_str()?.into(), h["value"].as_str()?.into()))
                        })
                        .collect(),
                    https: http["scheme"].as_str() == Some("HTTPS"),
                },
                Err(why) => Action::Unsupported(why),
            }
        } else if let Some(tcp) = probe.get("tcpSocket") {
            match port_of(container, &tcp["port"]) {
                Ok(port) => Action::Tcp {
                    host: host(tcp),
                    port,
                },
                Err(why) => Action::Unsupported(why),
            }
        } else if let Some(exec) = probe.get("exec") {
            Action::Exec {
                command: exec["command"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|w| w.as_str().map(String::from))
                    .collect(),
            }
        } else {
            Action::Unsupported("only exec, httpGet and tcpSocket probes are simulated".into())
        };
        Some(Self {
            action,
            initial_delay: seconds("initialDelaySeconds", 0),
            period: seconds("periodSeconds", 10).max(1),
            timeout: Duration::from_secs(seconds("timeoutSeconds", 1).max(1)),
            success_threshold: u32::try_from(seconds("successThreshold", 1).max(1)).unwrap_or(1),
            failure_threshold: u32::try_from(seconds("failureThreshold", 3).max(1)).unwrap_or(3),
            grace: probe["terminationGracePeriodSeconds"].as_u64(),
        })
    }
}

/// A port by number or by the name of one of the container's ports.
fn port_of(container: &Value, port: &Value) -> Result<u16, String> {
    if let Some(n) = port.as_u64() {
        return u16::try_from(n).map_err(|_| format!("invalid port number: {n}"));
    }
    let name = port.as_str().unwrap_or_default();
    if let Ok(n) = name.parse::<u16>() {
        return Ok(n);
    }
    container["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"].as_str() == Some(name))
        .and_then(|p| p["containerPort"].as_u64())
        .and_then(|n| u16::try_from(n).ok())
        .ok_or_else(|| {
            format!(
                "couldn't find port: {name} in {}",
                json!(container["ports"])
            )
        })
}

/// Makes the probe once; Err(the prober's message) when it fails.
pub async fn check(probe: &Probe, container: &InContainer) -> Result<(), String> {
    match &probe.action {
        Action::Http {
            host,
            port,
            path,
            headers,
            https,
        } => {
            if *https {
                return Err("HTTPS probes are not simulated: use HTTP or a TCP probe".into());
            }
            http_get(host, *port, path, headers, probe.timeout).await
        }
        Action::Tcp { host, port } => {
            let address = format!("{host}:{port}");
            match tokio::time::timeout(probe.timeout, tokio::net::TcpStream::connect(&address))
                .await
            {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => Err(format!("dial tcp {address}: connect: {}", words(&e))),
                Err(_) => Err(format!("dial tcp {address}: i/o timeout")),
            }
        }
        Action::Exec { command } => exec(command, container, probe.timeout).await,
        Action::Unsupported(why) => Err(why.clone()),
    }
}

/// How Go's net package words a connection error.
fn words(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionRefused => "connection refused".into(),
        _ => e.to_string(),
    }
}

async fn http_get(
    host: &str,
    port: u16,
    path: &str,
    headers: &[(String, String)],
    timeout: Duration,
) -> Result<(), String> {
    let authority = match host.parse::<IpAddr>() {
        Ok(ip) => SocketAddr::new(ip, port).to_string(),
        Err(_) => format!("{host}:{port}"),
    };
    let url = format!("http://{authority}{path}");
    let exchange = async {
        let stream = tokio::net::TcpStream::connect(&authority)
            .await
            .map_err(|e| {
                format!(
                    "Get \"{url}\": dial tcp {authority}: connect: {}",
                    words(&e)
                )
            })?;
        let io = hyper_util::rt::TokioIo::new(stream);
        let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
            .await
            .map_err(|e| format!("Get \"{url}\": {e}"))?;
        tokio::spawn(connection);
        let mut request = http::Request::get(path)
            .header(http::header::HOST, &authority)
            .header(http::header::USER_AGENT, "kube-probe/1.32")
            .header(http::header::ACCEPT, "*/*");
        for (name, value) in headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let request = request
            .body(http_body_util::Empty::<bytes::Bytes>::new())
            .map_err(|e| format!("Get \"{url}\": {e}"))?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| format!("Get \"{url}\": {e}"))?;
        let status = response.status().as_u16();
        // The prober reads (at most 10 KiB of) the body; reading it lets the server finish.
        let _ = response.into_body().collect().await;
        if (200..400).contains(&status) {
            Ok(())
        } else {
            Err(format!("HTTP probe failed with statuscode: {status}"))
        }
    };
    tokio::time::timeout(timeout, exchange).await.unwrap_or_else(|_| {
        Err(format!(
            "Get \"{url}\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
        ))
    })
}

/// Runs the command as the container would (its environment, directory, mount paths and
/// PATH). Unlike `command`, an exec's words are not expanded: the kubelet runs them as given.
async fn exec(
    command: &[String],
    container: &InContainer,
    timeout: Duration,
) -> Result<(), String> {
    let launch = &container.launch;
    let mut env = Environment::default();
    for (k, v) in &launch.env {
        env.set(k, v.clone());
    }
    let escaped: Vec<String> = command.iter().map(|w| w.replace('$', "$$")).collect();
    let spec = json!({"command": escaped});
    let (program, args) = command_line(&spec, &container.executable, &env, &container.mounts)?;
    let mut child = tokio::process::Command::new(&program);
    child
        .args(&args)
        .env_clear()
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&launch.cwd)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let shown = command.join(" ");
    match tokio::time::timeout(timeout, child.output()).await {
        Err(_) => Err(format!(
            "command timed out: \"{shown}\" timed out after {}s",
            timeout.as_secs()
        )),
        Ok(Err(e)) => Err(format!("exec \"{shown}\": {e}")),
        Ok(Ok(output)) if output.status.success() => Ok(()),
        Ok(Ok(output)) => {
            let mut said = String::from_utf8_lossy(&output.stdout).into_owned();
            said.push_str(&String::from_utf8_lossy(&output.stderr));
            if said.trim().is_empty() {
                Err(format!(
                    "command \"{shown}\" exited with {}",
                    output.status.code().unwrap_or(-1)
                ))
            } else {
                Err(said)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn launch() -> InContainer {
        InContainer {
            launch: Launch {
                program: "/bin/true".into(),
                args: Vec::new(),
                env: vec![("PATH".into(), super::super::launch::DEFAULT_PATH.into())],
                cwd: std::env::temp_dir(),
            },
            mounts: Mounts::default(),
            executable: "/bin/true".into(),
        }
    }

    fn probe(spec: Value) -> Probe {
        let container =
            json!({"ports": [{"name": "http", "containerPort": 8080}], "readinessProbe": spec});
        Probe::of(&container, "readinessProbe", IpAddr::from([127, 0, 0, 1])).unwrap()
    }

    #[test]
    fn a_named_port_is_the_containers_port_of_that_name() {
        let p = probe(json!({"httpGet": {"port": "http", "path": "/ready"}}));
        assert!(matches!(p.action, Action::Http { port: 8080, .. }), "{p:?}");
        let p = probe(json!({"tcpSocket": {"port": "nope"}}));
        assert!(
            matches!(p.action, Action::Unsupported(ref m) if m.contains("couldn't find port: nope"))
        );
        assert_eq!(
            (p.period, p.failure_threshold, p.success_threshold),
            (10, 3, 1)
        );
    }

    #[tokio::test]
    async fn an_http_probe_succeeds_below_400_and_says_why_it_fails() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let router = axum::Router::new()
            .route("/ok", axum::routing::get(|| async { "ok" }))
            .route(
                "/down",
                axum::routing::get(|| async { (http::StatusCode::SERVICE_UNAVAILABLE, "no") }),
            );
        tokio::spawn(async move { axum::serve(listener, router).await });
        let ok = probe(json!({"httpGet": {"port": port, "path": "/ok"}}));
        check(&ok, &launch()).await.unwrap();
        let down = probe(json!({"httpGet": {"port": port, "path": "/down"}}));
        let err = check(&down, &launch()).await.unwrap_err();
        assert_eq!(err, "HTTP probe failed with statuscode: 503");
        let refused = probe(json!({"tcpSocket": {"port": 1}}));
        let err = check(&refused, &launch()).await.unwrap_err();
        assert_eq!(err, "dial tcp 127.0.0.1:1: connect: connection refused");
    }

    #[tokio::test]
    async fn an_exec_probe_runs_in_the_containers_environment_and_reports_its_output() {
        let p = probe(
            json!({"exec": {"command": ["sh", "-c", "test \"$PATH\" = \"$EXPECTED\" || { echo wrong path; exit 1; }"]}}),
        );
        let mut with_expected = launch();
        with_expected
            .launch
            .env
            .push(("EXPECTED".into(), super::super::launch::DEFAULT_PATH.into()));
        check(&p, &with_expected).await.unwrap();
        let err = check(&p, &launch()).await.unwrap_err();
        assert_eq!(err.trim(), "wrong path");
    }
}
