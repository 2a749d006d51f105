//! A process pod's address and probes: a readiness probe makes it Ready, its port is reached
//! at `ClusterState::pod_endpoint`, and a failing liveness probe kills and restarts it.

use serde_json::json;

use super::*;

/// `GET path` of `address`: the status and the body.
async fn fetch(address: std::net::SocketAddr, path: &str) -> (u16, String) {
    use http_body_util::BodyExt;
    let exchange = async {
        let stream = tokio::net::TcpStream::connect(address).await.unwrap();
        let io = hyper_util::rt::TokioIo::new(stream);
        let (mut sender, connection) = hyper::client::conn::http1::handshake(io).await.unwrap();
        tokio::spawn(connection);
        let request = http::Request::get(path)
            .header("host", address.to_string())
            .body(http_body_util::Empty::<bytes::Bytes>::new())
            .unwrap();
        let response = sender.send_request(request).await.unwrap();
        let status = response.status().as_u16();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    };
    tokio::time::timeout(PATIENCE, exchange).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ready_web_server_pod_is_reached_at_its_endpoint() {
    let Some(runtime) = cluster().await else {
        return;
    };
    let state = runtime.state();
    // The image's entrypoint with args only, binding the pod's own address.
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "main", "image": "python:3.12",
            "args": ["-m", "http.server", "8080", "--bind", "$(POD_IP)"],
            "env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
            "ports": [{"name": "http", "containerPort": 8080}],
            "readinessProbe": {"httpGet": {"port": "http", "path": "/"}, "periodSeconds": 1}}]}});
    create(state, Kind::Pod, pod);
    let running = pod_when(state, "web", "the container running", |p| {
        container(p)["state"].get("running").is_some()
    })
    .await;
    assert_eq!(
        container(&running)["ready"],
        false,
        "not ready before its probe"
    );
    let ready = pod_when(state, "web", "the pod Ready", |p| {
        p["status"]["conditions"].as_array().is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
    })
    .await;
    assert_eq!(container(&ready)["ready"], true);
    let endpoint = state.pod_endpoint("default", "web", 8080).unwrap();
    assert_eq!(endpoint.ip().to_string(), ready["status"]["podIP"]);
    let (status, body) = fetch(endpoint, "/").await;
    assert_eq!(status, 200);
    assert!(body.contains("Directory listing"), "{body}");
    let log = logged(state, "web", "\"GET / HTTP/1.1\" 200").await;
    assert!(
        log.contains("kube-probe") || log.contains("GET / HTTP/1.1"),
        "{log}"
    );
    assert_eq!(state.pod_endpoint("default", "nope", 8080), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_pods_serve_the_same_port_each_on_its_own_address() {
    if !crate::kube::process::per_pod_addresses() {
        return;
    }
    let Some(runtime) = cluster().await else {
        return;
    };
    let state = runtime.state();
    for name in ["one", "two"] {
        let script = "import http.server, os, sys\n\
            class Name(http.server.BaseHTTPRequestHandler):\n\
            \x20   def do_GET(self):\n\
            \x20       self.send_response(200); self.end_headers(); self.wfile.write(os.environ['HOSTNAME'].encode())\n\
            server = http.server.HTTPServer((os.environ['POD_IP'], 8080), Name)\n\
            print('serving', flush=True)\n\
            server.serve_forever()";
        let env = json!({"env": [{"name": "POD_IP",
            "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]});
        create(
            state,
            Kind::Pod,
            python_pod(name, script, &[], env, json!({})),
        );
    }
    for name in ["one", "two"] {
        logged(state, name, "serving").await;
        let endpoint = state.pod_endpoint("default", name, 8080).unwrap();
        assert_eq!(fetch(endpoint, "/").await, (200, name.to_string()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_liveness_probe_kills_the_container_and_the_kubelet_restarts_it() {
    let Some(runtime) = cluster().await else {
        return;
    };
    let state = runtime.state();
    // The startup probe passes once the process has said it is up; liveness never does.
    let probe = json!({
        "startupProbe": {"exec": {"command": ["cat", "/etc/health/up"]},
            "periodSeconds": 1, "failureThreshold": 1000},
        "livenessProbe": {"exec": {"command": ["cat", "/etc/health/alive"]},
            "periodSeconds": 1, "failureThreshold": 2},
        "volumeMounts": [{"name": "health", "mountPath": "/etc/health"}]});
    let spec = json!({"restartPolicy": "Always", "volumes": [{"name": "health", "emptyDir": {}}]});
    let script = "import sys, time; print('up'); open(sys.argv[1], 'w').close(); time.sleep(600)";
    create(
        state,
        Kind::Pod,
        python_pod("sick", script, &["/etc/health/up"], probe, spec),
    );
    let restarted = pod_when(state, "sick", "a restart", |p| {
        container(p)["restartCount"].as_u64() >= Some(1)
            && container(p)["state"].get("running").is_some()
    })
    .await;
    let last = &container(&restarted)["lastState"]["terminated"];
    assert_eq!(last["exitCode"], 143, "{last}");
    assert_eq!(phase(&restarted), "Running");
    let unhealthy = test_support::events(state, "sick", "Unhealthy");
    let liveness = unhealthy
        .iter()
        .find(|e| e["message"].as_str().unwrap().starts_with("Liveness"))
        .unwrap();
    let message = liveness["message"].as_str().unwrap();
    assert!(
        message.starts_with("Liveness probe failed: ") && message.contains("No such file"),
        "{message}"
    );
    let previous = state.logs.stream("default", "sick", "main", true).unwrap();
    assert_eq!(
        log_text(&previous),
        "up\n",
        "the killed run's log is the previous one"
    );
    let killing = test_support::events(state, "sick", "Killing");
    assert_eq!(
        killing[0]["message"],
        "Container main failed liveness probe, will be restarted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_container_is_started_and_ready_only_once_its_startup_probe_passes() {
    let Some(runtime) = cluster().await else {
        return;
    };
    let state = runtime.state();
    let probe = json!({"startupProbe": {"exec": {"command": ["cat", "/s/started"]},
        "periodSeconds": 5, "failureThreshold": 100},
        "volumeMounts": [{"name": "s", "mountPath": "/s"}]});
    let spec = json!({"restartPolicy": "Always", "volumes": [{"name": "s", "emptyDir": {}}]});
    let script = "import sys, time\n\
        time.sleep(0.3)\n\
        open(sys.argv[1], 'w').write('yes')\n\
        print('started')\n\
        time.sleep(600)";
    create(
        state,
        Kind::Pod,
        python_pod("slow", script, &["/s/started"], probe, spec),
    );
    let running = pod_when(state, "slow", "the container running", |p| {
        container(p)["state"].get("running").is_some()
    })
    .await;
    assert_eq!(
        (
            &container(&running)["started"],
            &container(&running)["ready"]
        ),
        (&json!(false), &json!(false))
    );
    let started = pod_when(state, "slow", "the container started", |p| {
        container(p)["started"] == true
    })
    .await;
    assert_eq!(
        container(&started)["ready"],
        true,
        "no readiness probe: ready once started"
    );
    assert!(logged(state, "slow", "started").await.contains("started"));
}
