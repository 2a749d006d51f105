//! `pods/{name}/log`: a container's output as the kubelet serves it, with `follow`, `timestamps`,
//! `sinceTime`, `sinceSeconds`, `tailLines`, `limitBytes`, `container` and `previous`, and the
//! `log-cut` fault that cuts a follow mid-line.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::response::Response;
use http::{HeaderValue, StatusCode};
use serde_json::Value;

use super::stream_body::{self, Chunk};
use super::{Params, Target, namespace_of, param};
use crate::kube::cluster::ClusterState;
use crate::kube::errors::ApiError;
use crate::kube::logbook::{LogLine, LogStream};
use crate::kube::resources::Kind;

/// Lines sent per chunk at most: large enough for throughput, small enough to stay responsive.
const LINES_PER_CHUNK: usize = 4096;

struct Options {
    follow: bool,
    timestamps: bool,
    limit_bytes: Option<u64>,
}

pub fn serve(
    state: &Arc<ClusterState>,
    target: &Target,
    pod_name: &str,
    params: &Params,
) -> Result<Response, ApiError> {
    if target.resource.kind != Kind::Pod {
        return Err(ApiError::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        ));
    }
    let ns = namespace_of(target).unwrap_or("default");
    let pod = state
        .store
        .get(Kind::Pod, ns, pod_name)
        .ok_or_else(|| ApiError::not_found(target.resource, pod_name))?;
    let container = pick_container(&pod, pod_name, param(params, "container"))?;
    let previous = params.get("previous").is_some_and(|v| v == "true");
    let stream = state
        .logs
        .stream(ns, pod_name, &container, previous)
        .ok_or_else(|| {
            if previous {
                ApiError::bad_request(format!(
                    "previous terminated container \"{container}\" in pod \"{pod_name}\" not found"
                ))
            } else {
                let reason =
                    waiting_reason(&pod, &container).unwrap_or_else(|| "ContainerCreating".into());
                ApiError::bad_request(format!(
                    "container \"{container}\" in pod \"{pod_name}\" is waiting to start: {reason}"
                ))
            }
        })?;
    let start = start_index(&stream, params)?;
    let opts = Options {
        follow: params.get("follow").is_some_and(|v| v == "true") && !previous,
        timestamps: params.get("timestamps").is_some_and(|v| v == "true"),
        limit_bytes: param(params, "limitBytes")
            .and_then(|v| v.parse().ok())
            .filter(|n| *n > 0),
    };
    let (tx, body) = stream_body::channel();
    let cut_after = if opts.follow {
        state.shared.faults.log_cut()
    } else {
        None
    };
    let stop = state.stop.clone();
    let faults = state.shared.faults.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = stop.cancelled() => {}
            cut = pump(stream, start, opts, tx, cut_after) => if cut {
                faults.fired("log-cut");
            }
        }
    });
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain"),
    );
    Ok(response)
}

fn pick_container(
    pod: &Value,
    pod_name: &str,
    requested: Option<&str>,
) -> Result<String, ApiError> {
    let names: Vec<&str> = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str())
        .collect();
    match requested {
        Some(c) if names.contains(&c) => Ok(c.to_string()),
        Some(c) => Err(ApiError::bad_request(format!(
            "container {c} is not valid for pod {pod_name}"
        ))),
        None if names.len() == 1 => Ok(names[0].to_string()),
        None => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {pod_name}, choose one of: [{}]",
            names.join(" ")
        ))),
    }
}

fn waiting_reason(pod: &Value, container: &str) -> Option<String> {
    pod.pointer("/status/containerStatuses")?
        .as_array()?
        .iter()
        .find(|c| c["name"] == container)?
        .pointer("/state/waiting/reason")?
        .as_str()
        .map(|r| match r {
            "ImagePullBackOff" | "ErrImagePull" => "trying and failing to pull image".to_string(),
            other => other.to_string(),
        })
}

fn start_index(stream: &LogStream, params: &Params) -> Result<usize, ApiError> {
    let mut start = 0;
    if let Some(t) = param(params, "sinceTime") {
        let ts: jiff::Timestamp = t
            .parse()
            .map_err(|_| ApiError::bad_request(format!("sinceTime: invalid time \"{t}\"")))?;
        start = stream.first_at_or_after(ts.as_nanosecond());
    } else if let Some(s) = param(params, "sinceSeconds") {
        let secs: i64 = s
            .parse()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| ApiError::bad_request("sinceSeconds: must be greater than 0"))?;
        let since = jiff::Timestamp::now().as_nanosecond() - i128::from(secs) * 1_000_000_000;
        start = stream.first_at_or_after(since);
    }
    if let Some(n) = param(params, "tailLines") {
        let n: usize = n
            .parse()
            .map_err(|_| ApiError::bad_request("tailLines: must be a whole number"))?;
        start = start.max(stream.len().saturating_sub(n));
    }
    Ok(start)
}

/// RFC 3339 with nanoseconds, trailing zeros trimmed, as Go's RFC3339Nano prints it.
pub fn format_timestamp(ts_nanos: i128) -> String {
    let mut out = Vec::with_capacity(32);
    write_timestamp(&mut out, ts_nanos, &mut None);
    String::from_utf8_lossy(&out).into_owned()
}

/// The date and time to the second, kept from one line to the next: a log's lines mostly share
/// their second, and formatting it is most of the cost of `timestamps=true`.
type SecondCache = Option<(i128, String)>;

/// `format_timestamp`, appended to `out`.
fn write_timestamp(out: &mut Vec<u8>, ts_nanos: i128, cache: &mut SecondCache) {
    let secs = ts_nanos.div_euclid(1_000_000_000);
    let nanos = ts_nanos.rem_euclid(1_000_000_000);
    let base = match cache {
        Some((s, base)) if *s == secs => base,
        _ => {
            let base = jiff::Timestamp::from_second(secs as i64)
                .map(|t| t.strftime("%Y-%m-%dT%H:%M:%S").to_string())
                .unwrap_or_default();
            &cache.insert((secs, base)).1
        }
    };
    out.extend_from_slice(base.as_bytes());
    if nanos != 0 {
        let mut digits = [b'0'; 9];
        let mut n = nanos;
        for d in digits.iter_mut().rev() {
            *d = b'0' + (n % 10) as u8;
            n /= 10;
        }
        let len = digits.iter().rposition(|d| *d != b'0').map_or(0, |i| i + 1);
        out.push(b'.');
        out.extend_from_slice(&digits[..len]);
    }
    out.push(b'Z');
}

/// As the kubelet writes a container's log: a piece that goes on (a partial line) gets no
/// newline, and the piece after it no timestamp. `line_start` says whether the next line begins
/// a line, across calls.
fn encode(lines: &[LogLine], timestamps: bool, line_start: &mut bool, out: &mut Vec<u8>) {
    let mut cache = None;
    for l in lines {
        if timestamps && *line_start {
            write_timestamp(out, l.ts, &mut cache);
            out.push(b' ');
        }
        out.extend_from_slice(&l.text);
        if !l.partial {
            out.push(b'\n');
        }
        *line_start = !l.partial;
    }
}

async fn pump(
    stream: Arc<LogStream>,
    mut next: usize,
    opts: Options,
    tx: tokio::sync::mpsc::Sender<Chunk>,
    cut_after: Option<Duration>,
) -> bool {
    let mut progress = stream.watch();
    let mut sent: u64 = 0;
    let cut_at = cut_after.map(|d| tokio::time::Instant::now() + d);
    let mut cutting = false;
    let mut line_start = true;
    loop {
        if cut_at.is_some_and(|at| tokio::time::Instant::now() >= at) {
            cutting = true;
        }
        let lines = stream.read(next, if cutting { 1 } else { LINES_PER_CHUNK });
        if !lines.is_empty() {
            if cutting {
                // Half of the next line, then the connection goes: a cut mid-line.
                let half = &lines[0].text[..lines[0].text.len() / 2];
                let mut out = Vec::new();
                if opts.timestamps {
                    out.extend_from_slice(format_timestamp(lines[0].ts).as_bytes());
                    out.push(b' ');
                }
                out.extend_from_slice(half);
                let _ = tx.send(Ok(Bytes::from(out))).await;
                // Let the half line reach the wire before the connection goes.
                tokio::time::sleep(Duration::from_millis(20)).await;
                stream_body::cut(&tx, "log stream cut (simulated fault)").await;
                return true;
            }
            next += lines.len();
            let mut out = Vec::with_capacity(lines.iter().map(|l| l.text.len() + 40).sum());
            encode(&lines, opts.timestamps, &mut line_start, &mut out);
            if let Some(limit) = opts.limit_bytes {
                let room = limit.saturating_sub(sent) as usize;
                if out.len() >= room {
                    out.truncate(room);
                    let _ = tx.send(Ok(Bytes::from(out))).await;
                    return false;
                }
            }
            sent += out.len() as u64;
            if tx.send(Ok(Bytes::from(out))).await.is_err() {
                return false;
            }
            continue;
        }
        if !opts.follow {
            return false;
        }
        let (len, finished) = *progress.borrow_and_update();
        if next >= len && finished {
            return false;
        }
        if next < len {
            continue;
        }
        tokio::select! {
            changed = progress.changed() => if changed.is_err() { return false },
            _ = tx.closed() => return false,
            _ = sleep_until(cut_at), if cut_at.is_some() && !cutting => { cutting = true; }
        }
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_like_go() {
        assert_eq!(
            format_timestamp(1_700_000_000_000_000_000),
            "2023-11-14T22:13:20Z"
        );
        assert_eq!(
            format_timestamp(1_700_000_000_120_000_000),
            "2023-11-14T22:13:20.12Z"
        );
        assert_eq!(
            format_timestamp(1_700_000_000_000_000_001),
            "2023-11-14T22:13:20.000000001Z"
        );
        let mut out = Vec::new();
        let mut cache = None;
        for ts in [
            1_700_000_000_999_999_999,
            1_700_000_001_000_000_000,
            1_700_000_001_000_000_500,
        ] {
            write_timestamp(&mut out, ts, &mut cache);
            out.push(b' ');
        }
        assert_eq!(
            String::from_utf8_lossy(&out),
            "2023-11-14T22:13:20.999999999Z 2023-11-14T22:13:21Z 2023-11-14T22:13:21.0000005Z "
        );
    }

    #[test]
    fn pieces_of_a_line_are_joined_and_stamped_once_as_the_kubelet_does() {
        let line = |ts, text: &'static str, partial| LogLine {
            ts,
            text: Bytes::from(text),
            partial,
        };
        let lines = [
            line(1_700_000_000_000_000_000, "\r 10%|\r 20%", true),
            line(1_700_000_000_100_000_000, "|\r{'loss': 1.0}", false),
            line(1_700_000_000_200_000_000, "no newline at the end", true),
        ];
        let (mut plain, mut stamped) = (Vec::new(), Vec::new());
        encode(&lines, false, &mut true, &mut plain);
        encode(&lines, true, &mut true, &mut stamped);
        assert_eq!(
            String::from_utf8_lossy(&plain),
            "\r 10%|\r 20%|\r{'loss': 1.0}\nno newline at the end"
        );
        assert_eq!(
            String::from_utf8_lossy(&stamped),
            "2023-11-14T22:13:20Z \r 10%|\r 20%|\r{'loss': 1.0}\n2023-11-14T22:13:20.2Z no newline at the end"
        );
    }
}
