//! The simulated API server's object store: objects as JSON, one resourceVersion counter, and a
//! change history that watches resume from (410 Gone once a version has been compacted away).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::broadcast;

use super::resources::Kind;

pub type Obj = Arc<Value>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeType {
    Added,
    Modified,
    Deleted,
}

impl ChangeType {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeType::Added => "ADDED",
            ChangeType::Modified => "MODIFIED",
            ChangeType::Deleted => "DELETED",
        }
    }
}

#[derive(Debug)]
pub struct Change {
    pub kind: Kind,
    pub change: ChangeType,
    pub object: Obj,
    /// The object before this change (None for ADDED): filtered watches need both sides.
    pub old: Option<Obj>,
    pub rv: u64,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    #[error("already exists")]
    AlreadyExists,
    #[error(
        "the object has been modified; please apply your changes to the latest version and try again"
    )]
    Conflict,
    #[error("{0}")]
    Invalid(String),
}

/// The changes a watch replays, and the receiver for what follows them.
pub type WatchStart = (Vec<Arc<Change>>, broadcast::Receiver<Arc<Change>>);

/// The version a watch asked to start from is older than the kept history.
#[derive(Debug, PartialEq)]
pub struct Gone;

pub type Key = (String, String);

struct Inner {
    rv: u64,
    objects: HashMap<Kind, BTreeMap<Key, Obj>>,
    history: VecDeque<Arc<Change>>,
    /// The newest version dropped from `history`: a watch from an older version is Gone.
    compacted: u64,
}

pub struct Store {
    inner: Mutex<Inner>,
    tx: broadcast::Sender<Arc<Change>>,
    history_limit: usize,
    /// Applied to every object written (a fault's doing), before it is compared and kept.
    rewrite: std::sync::OnceLock<Rewrite>,
}

/// A change every written object goes through.
pub type Rewrite = Box<dyn Fn(Kind, &mut Value) + Send + Sync>;

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").finish_non_exhaustive()
    }
}

pub fn key_of(obj: &Value) -> Key {
    (
        obj.pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        obj.pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
    )
}

fn set_rv(obj: &mut Value, rv: u64) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("resourceVersion".into(), Value::String(rv.to_string()));
    }
}

pub fn rv_of(obj: &Value) -> Option<u64> {
    obj.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
}

impl Store {
    pub fn new() -> Arc<Self> {
        Self::with_history(20_000)
    }

    pub fn with_history(history_limit: usize) -> Arc<Self> {
        let (tx, _) = broadcast::channel(16_384);
        Arc::new(Self {
            inner: Mutex::new(Inner {
                rv: 1,
                objects: HashMap::new(),
                history: VecDeque::new(),
                compacted: 0,
            }),
            tx,
            history_limit,
            rewrite: std::sync::OnceLock::new(),
        })
    }

    /// Sets what every written object goes through (once; later calls are ignored).
    pub fn set_rewrite(&self, rewrite: Rewrite) {
        let _ = self.rewrite.set(rewrite);
    }

    fn rewritten(&self, kind: Kind, obj: &mut Value) {
        if let Some(rewrite) = self.rewrite.get() {
            rewrite(kind, obj);
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn record(
        &self,
        inner: &mut Inner,
        kind: Kind,
        change: ChangeType,
        object: Obj,
        old: Option<Obj>,
        rv: u64,
    ) {
        let change = Arc::new(Change {
            kind,
            change,
            object,
            old,
            rv,
        });
        inner.history.push_back(change.clone());
        while inner.history.len() > self.history_limit {
            if let Some(old) = inner.history.pop_front() {
                inner.compacted = old.rv;
            }
        }
        // No receivers is fine: nobody is watching.
        let _ = self.tx.send(change);
    }

    pub fn current_rv(&self) -> u64 {
        self.lock().rv
    }

    pub fn get(&self, kind: Kind, namespace: &str, name: &str) -> Option<Obj> {
        self.lock()
            .objects
            .get(&kind)?
            .get(&(namespace.to_string(), name.to_string()))
            .cloned()
    }

    /// Objects of a kind (in one namespace, or all), filtered, with the version the list is at.
    pub fn list(
        &self,
        kind: Kind,
        namespace: Option<&str>,
        filter: impl Fn(&Value) -> bool,
    ) -> (Vec<Obj>, u64) {
        let inner = self.lock();
        let items = inner
            .objects
            .get(&kind)
            .map(|m| {
                m.iter()
                    .filter(|((ns, _), _)| namespace.is_none_or(|want| want == ns))
                    .filter(|(_, o)| filter(o))
                    .map(|(_, o)| o.clone())
                    .collect()
            })
            .unwrap_or_default();
        (items, inner.rv)
    }

    /// One page of a list: at most `limit` objects after the key `after`, the version the list
    /// is at, and the number of matching objects left after the page.
    pub fn list_page(
        &self,
        kind: Kind,
        namespace: Option<&str>,
        filter: impl Fn(&Value) -> bool,
        after: Option<&Key>,
        limit: usize,
    ) -> (Vec<Obj>, u64, usize) {
        use std::ops::Bound;
        let inner = self.lock();
        let Some(objects) = inner.objects.get(&kind) else {
            return (Vec::new(), inner.rv, 0);
        };
        let start = after.map_or(Bound::Unbounded, Bound::Excluded);
        let mut matching = objects
            .range((start, Bound::Unbounded))
            .filter(|((ns, _), _)| namespace.is_none_or(|want| want == ns))
            .filter(|(_, o)| filter(o));
        let items: Vec<Obj> = matching
            .by_ref()
            .take(limit)
            .map(|(_, o)| o.clone())
            .collect();
        let remaining = matching.count();
        (items, inner.rv, remaining)
    }

    pub fn count(&self, kind: Kind) -> usize {
        self.lock().objects.get(&kind).map_or(0, BTreeMap::len)
    }

    /// Stores a new object, stamping its resourceVersion. Callers fill uid and timestamps.
    pub fn create(&self, kind: Kind, mut obj: Value) -> Result<Obj, StoreError> {
        self.rewritten(kind, &mut obj);
        let key = key_of(&obj);
        if key.1.is_empty() {
            return Err(StoreError::Invalid("metadata.name: Required value".into()));
        }
        let mut inner = self.lock();
        if inner
            .objects
            .get(&kind)
            .is_some_and(|m| m.contains_key(&key))
        {
            return Err(StoreError::AlreadyExists);
        }
        inner.rv += 1;
        let rv = inner.rv;
        set_rv(&mut obj, rv);
        let obj = Arc::new(obj);
        inner
            .objects
            .entry(kind)
            .or_default()
            .insert(key, obj.clone());
        self.record(&mut inner, kind, ChangeType::Added, obj.clone(), None, rv);
        Ok(obj)
    }

    /// Read-modify-write of one object under the store's lock. A change that leaves the object as
    /// it was is not a write: no new version, no watch event (as the real API server).
    /// `expected_rv` makes it an optimistic update that fails with Conflict when stale.
    pub fn modify<E>(
        &self,
        kind: Kind,
        namespace: &str,
        name: &str,
        expected_rv: Option<u64>,
        f: impl FnOnce(&mut Value) -> Result<(), E>,
    ) -> Result<Result<Obj, StoreError>, E> {
        let mut inner = self.lock();
        let key = (namespace.to_string(), name.to_string());
        let Some(current) = inner.objects.get(&kind).and_then(|m| m.get(&key)).cloned() else {
            return Ok(Err(StoreError::NotFound));
        };
        if let Some(expected) = expected_rv
            && rv_of(&current) != Some(expected)
        {
            return Ok(Err(StoreError::Conflict));
        }
        let mut next = (*current).clone();
        f(&mut next)?;
        self.rewritten(kind, &mut next);
        // Keep identity fields: a write cannot rename or move an object.
        if key_of(&next) != key {
            return Ok(Err(StoreError::Invalid(
                "metadata.name and metadata.namespace cannot change".into(),
            )));
        }
        set_rv(&mut next, rv_of(&current).unwrap_or(0));
        if next == *current {
            return Ok(Ok(current));
        }
        inner.rv += 1;
        let rv = inner.rv;
        set_rv(&mut next, rv);
        let next = Arc::new(next);
        inner
            .objects
            .entry(kind)
            .or_default()
            .insert(key, next.clone());
        self.record(
            &mut inner,
            kind,
            ChangeType::Modified,
            next.clone(),
            Some(current),
            rv,
        );
        Ok(Ok(next))
    }

    /// `modify` for callers whose change cannot fail.
    pub fn update(
        &self,
        kind: Kind,
        namespace: &str,
        name: &str,
        f: impl FnOnce(&mut Value),
    ) -> Result<Obj, StoreError> {
        self.modify::<std::convert::Infallible>(kind, namespace, name, None, |v| {
            f(v);
            Ok(())
        })
        .unwrap_or_else(|never| match never {})
    }

    /// Removes an object for good, emitting DELETED with a new version.
    pub fn remove(&self, kind: Kind, namespace: &str, name: &str) -> Option<Obj> {
        let mut inner = self.lock();
        let key = (namespace.to_string(), name.to_string());
        let old = inner.objects.get_mut(&kind)?.remove(&key)?;
        inner.rv += 1;
        let rv = inner.rv;
        let mut last = (*old).clone();
        set_rv(&mut last, rv);
        let last = Arc::new(last);
        self.record(
            &mut inner,
            kind,
            ChangeType::Deleted,
            last.clone(),
            Some(old),
            rv,
        );
        Some(last)
    }

    /// Every change after `from` still in the history, and a receiver for what comes next,
    /// taken together so nothing falls between them.
    pub fn watch_from(&self, from: u64) -> Result<WatchStart, Gone> {
        let inner = self.lock();
        if from < inner.compacted {
            return Err(Gone);
        }
        let backlog = inner
            .history
            .iter()
            .filter(|c| c.rv > from)
            .cloned()
            .collect();
        Ok((backlog, self.tx.subscribe()))
    }

    /// A receiver for every change from now on (controllers).
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Change>> {
        self.tx.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str) -> Value {
        json!({"metadata": {"name": name, "namespace": "default"}})
    }

    #[test]
    fn versions_and_history() {
        let store = Store::with_history(2);
        let a = store.create(Kind::Pod, pod("a")).unwrap();
        let first = rv_of(&a).unwrap();
        store.create(Kind::Pod, pod("b")).unwrap();
        assert_eq!(
            store.create(Kind::Pod, pod("b")).err(),
            Some(StoreError::AlreadyExists)
        );
        let same = store.update(Kind::Pod, "default", "a", |_| {}).unwrap();
        assert_eq!(rv_of(&same), Some(first), "a no-op write keeps the version");
        store
            .update(Kind::Pod, "default", "a", |v| {
                v["status"] = json!({"phase": "Running"})
            })
            .unwrap();
        let (backlog, _rx) = store.watch_from(first).unwrap();
        assert_eq!(backlog.len(), 2);
        assert_eq!(store.watch_from(first - 1).err(), Some(Gone));
        assert!(store.remove(Kind::Pod, "default", "a").is_some());
        assert!(store.get(Kind::Pod, "default", "a").is_none());
    }

    #[test]
    fn optimistic_concurrency() {
        let store = Store::new();
        let a = store.create(Kind::Pod, pod("a")).unwrap();
        let rv = rv_of(&a).unwrap();
        let stale = store.modify::<()>(Kind::Pod, "default", "a", Some(rv + 7), |_| Ok(()));
        assert_eq!(stale, Ok(Err(StoreError::Conflict)));
    }
}
