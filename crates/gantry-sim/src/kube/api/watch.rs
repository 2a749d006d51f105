//! Watches: newline-delimited watch events from a resourceVersion (or a synthetic initial state),
//! filtered by selectors on both sides of each change, with bookmarks, timeouts, 410 Gone for a
//! compacted version, and the `watch-drop` and `watch-gone` faults.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::response::Response;
use http::{HeaderValue, StatusCode};
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;

use super::json_body;
use super::objects::Filter;
use super::stream_body::{self, Chunk};
use super::{Params, Target, namespace_of, param, table};
use crate::kube::cluster::ClusterState;
use crate::kube::errors::ApiError;
use crate::kube::meta;
use crate::kube::resources::ResourceType;
use crate::kube::store::{Change, ChangeType, Obj};

const BOOKMARK_EVERY: Duration = Duration::from_secs(5);

struct WatchSpec {
    resource: &'static ResourceType,
    namespace: Option<String>,
    name: Option<String>,
    filter: Filter,
    table: bool,
    bookmarks: bool,
    params: Params,
}

impl WatchSpec {
    fn matches(&self, obj: &Value) -> bool {
        self.namespace
            .as_deref()
            .is_none_or(|ns| meta::namespace(obj) == ns)
            && self.name.as_deref().is_none_or(|n| meta::name(obj) == n)
            && self.filter.matches(obj)
    }

    /// The event this watcher sees for a change, if any: a change that moves an object into
    /// or out of the selection is an ADDED or DELETED, as the API server reports it.
    fn event_for(&self, change: &Change) -> Option<(&'static str, Obj)> {
        if change.kind != self.resource.kind {
            return None;
        }
        let now = self.matches(&change.object);
        let before = change.old.as_ref().is_some_and(|o| self.matches(o));
        match change.change {
            ChangeType::Added if now => Some(("ADDED", change.object.clone())),
            ChangeType::Deleted if now || before => Some(("DELETED", change.object.clone())),
            ChangeType::Modified if now && before => Some(("MODIFIED", change.object.clone())),
            ChangeType::Modified if now => Some(("ADDED", change.object.clone())),
            ChangeType::Modified if before => Some(("DELETED", change.object.clone())),
            _ => None,
        }
    }

    fn encode(&self, kind: &str, obj: &Value, first: &mut bool, out: &mut Vec<u8>) {
        let envelope = json!({"type": kind, "object": Value::Null});
        if self.table {
            let with_columns = std::mem::take(first);
            let row = table::watch_row(self.resource, obj, with_columns, &self.params);
            json_body::write_json_with(out, &envelope, "object", &row);
        } else {
            // Written in place: copying every object of a watch's initial list is costly.
            json_body::write_json_with(out, &envelope, "object", obj);
        }
        out.push(b'\n');
    }
}

fn gone_event(requested: &str, current: u64) -> Bytes {
    let status =
        ApiError::gone(format!("too old resource version: {requested} ({current})")).status_json();
    Bytes::from(format!("{}\n", json!({"type": "ERROR", "object": status})))
}

pub fn serve(
    state: &Arc<ClusterState>,
    target: &Target,
    params: &Params,
    wants_table: bool,
) -> Result<Response, ApiError> {
    let spec = WatchSpec {
        resource: target.resource,
        namespace: namespace_of(target).map(String::from),
        name: target.name.clone(),
        filter: Filter::from_params(params)?,
        table: wants_table,
        bookmarks: params
            .get("allowWatchBookmarks")
            .is_some_and(|v| v == "true"),
        params: params.clone(),
    };
    let requested = param(params, "resourceVersion").unwrap_or("0").to_string();
    let send_initial = params.get("sendInitialEvents").is_some_and(|v| v == "true");
    let timeout = param(params, "timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map(Duration::from_secs);
    let (tx, body) = stream_body::channel();
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );

    if state.shared.faults.watch_gone() {
        state.shared.faults.fired("watch-gone");
        let current = state.store.current_rv();
        tokio::spawn(async move {
            let _ = tx.send(Ok(gone_event(&requested, current))).await;
        });
        return Ok(response);
    }
    let mut initial: Vec<Obj> = Vec::new();
    let from = if requested == "0" || send_initial {
        let (items, rv) = state
            .store
            .list(target.resource.kind, spec.namespace.as_deref(), |o| {
                spec.matches(o)
            });
        initial = items;
        rv
    } else {
        requested
            .parse::<u64>()
            .map_err(|_| ApiError::bad_request(format!("invalid resource version: {requested}")))?
    };
    let Ok((backlog, rx)) = state.store.watch_from(from) else {
        let current = state.store.current_rv();
        tokio::spawn(async move {
            let _ = tx.send(Ok(gone_event(&requested, current))).await;
        });
        return Ok(response);
    };
    let state = state.clone();
    tokio::spawn(async move {
        let drop_after = state.shared.faults.watch_drop();
        run(
            state,
            spec,
            initial,
            send_initial,
            from,
            backlog,
            rx,
            tx,
            timeout,
            drop_after,
        )
        .await;
    });
    Ok(response)
}

#[allow(clippy::too_many_arguments)]
async fn run(
    state: Arc<ClusterState>,
    spec: WatchSpec,
    initial: Vec<Obj>,
    send_initial: bool,
    from: u64,
    backlog: Vec<Arc<Change>>,
    mut rx: tokio::sync::broadcast::Receiver<Arc<Change>>,
    tx: mpsc::Sender<Chunk>,
    timeout: Option<Duration>,
    drop_after: Option<Duration>,
) {
    let mut first = true;
    let mut last_rv = from;
    let mut out = Vec::new();
    for obj in &initial {
        spec.encode("ADDED", obj, &mut first, &mut out);
    }
    if send_initial {
        let bookmark = json!({"type": "BOOKMARK", "object": {
            "kind": spec.resource.kind_name, "apiVersion": spec.resource.api_version(),
            "metadata": {"resourceVersion": from.to_string(), "annotations": {"k8s.io/initial-events-end": "true"}}}});
        out.extend_from_slice(bookmark.to_string().as_bytes());
        out.push(b'\n');
    }
    for change in backlog.iter().filter(|c| c.rv > from) {
        last_rv = change.rv;
        if let Some((kind, obj)) = spec.event_for(change) {
            spec.encode(kind, &obj, &mut first, &mut out);
        }
    }
    if !out.is_empty()
        && tx
            .send(Ok(Bytes::from(std::mem::take(&mut out))))
            .await
            .is_err()
    {
        return;
    }
    let never = Duration::from_secs(365 * 24 * 3600);
    let ends = tokio::time::sleep(timeout.unwrap_or(never));
    let cut = tokio::time::sleep(drop_after.unwrap_or(never));
    tokio::pin!(ends, cut);
    let mut bookmark = tokio::time::interval(BOOKMARK_EVERY);
    bookmark.tick().await;
    loop {
        tokio::select! {
            _ = state.stop.cancelled() => return,
            _ = tx.closed() => return,
            _ = &mut ends => return,
            _ = &mut cut, if drop_after.is_some() => {
                state.shared.faults.fired("watch-drop");
                stream_body::cut(&tx, "watch dropped (simulated fault)").await;
                return;
            }
            _ = bookmark.tick(), if spec.bookmarks && !spec.table => {
                let b = json!({"type": "BOOKMARK", "object": {"kind": spec.resource.kind_name, "apiVersion": spec.resource.api_version(), "metadata": {"resourceVersion": last_rv.max(from).to_string()}}});
                if tx.send(Ok(Bytes::from(format!("{b}\n")))).await.is_err() {
                    return;
                }
            }
            change = rx.recv() => {
                let mut pending = match change {
                    Ok(c) => vec![c],
                    // Too slow to keep up: end the watch; the client resumes from what it saw.
                    Err(RecvError::Lagged(_)) | Err(RecvError::Closed) => return,
                };
                while let Ok(c) = rx.try_recv() {
                    pending.push(c);
                    if pending.len() >= 512 {
                        break;
                    }
                }
                for change in pending {
                    if change.rv <= last_rv {
                        continue;
                    }
                    last_rv = change.rv;
                    if let Some((kind, obj)) = spec.event_for(&change) {
                        spec.encode(kind, &obj, &mut first, &mut out);
                    }
                }
                if !out.is_empty() && tx.send(Ok(Bytes::from(std::mem::take(&mut out)))).await.is_err() {
                    return;
                }
            }
        }
    }
}
