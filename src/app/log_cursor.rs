//! One viewer's place in the logs: which lines it shows (the engine's store of the newest
//! attempt, filtered to one pod or not; or a fetch of its own for an older attempt or a previous
//! container), where it is (following, or held at an absolute line number), and how (wrap,
//! timestamps, search). It holds no lines of the shared store, so viewers cost the same whatever
//! the log's length.

use crate::engine::World;
use crate::engine::world::log_store::{LogStore, Source};
use crate::k8s::logs::TailEvent;

/// Lines a viewer's own fetch holds (its files on disk keep every line).
pub const FETCH_CAPACITY: usize = 20_000;

#[derive(Debug, Clone)]
pub struct LogCursor {
    /// Only this pod of the newest attempt (None: every pod, merged).
    pub pod: Option<String>,
    pub follow: bool,
    /// The number of the line at the bottom of the view, while not following.
    pub anchor: u64,
    pub wrap: bool,
    pub timestamps: bool,
    pub search: Option<String>,
    /// The search being typed, before Enter.
    pub typing: Option<String>,
    /// This viewer's own fetch, shown instead of the engine's store.
    pub fetched: Option<LogStore>,
    /// The engine store's generation the place refers to.
    generation_seen: u64,
    /// Fetches started (each one's generation).
    fetches: u64,
}

impl Default for LogCursor {
    fn default() -> Self {
        Self {
            pod: None,
            follow: true,
            anchor: 0,
            wrap: false,
            timestamps: false,
            search: None,
            typing: None,
            fetched: None,
            generation_seen: 0,
            fetches: 0,
        }
    }
}

/// What the logs pane shows, worked out for one frame or one key.
pub struct Shown<'a> {
    pub store: &'a LogStore,
    /// Only lines of this pod number (in `store.pods`).
    pub only: Option<u32>,
    /// The index of the line at the bottom of the view (None: no line to show).
    pub bottom: Option<usize>,
}

impl Shown<'_> {
    pub fn matches(&self, index: usize) -> bool {
        self.store
            .lines
            .get(index)
            .is_some_and(|l| self.only.is_none_or(|p| l.pod == p))
    }

    /// The nearest shown line at or before `index`.
    pub fn at_or_before(&self, index: usize) -> Option<usize> {
        (0..=index.min(self.store.lines.len().checked_sub(1)?))
            .rev()
            .find(|&i| self.matches(i))
    }

    /// The nearest shown line at or after `index`.
    pub fn at_or_after(&self, index: usize) -> Option<usize> {
        (index..self.store.lines.len()).find(|&i| self.matches(i))
    }

    /// Lines held below the bottom of the view (all pods).
    pub fn below(&self) -> usize {
        match self.bottom {
            Some(b) => self.store.lines.len().saturating_sub(b + 1),
            None => 0,
        }
    }
}

impl LogCursor {
    /// The lines this viewer shows and where it is in them.
    pub fn shown<'a>(&'a self, model: &'a World) -> Shown<'a> {
        let (store, only) = match &self.fetched {
            Some(own) => (own, None),
            None => (
                &model.logs,
                // A pod with no line yet: nothing of it to show.
                self.pod
                    .as_ref()
                    .map(|pod| model.logs.pod_number(pod).unwrap_or(u32::MAX)),
            ),
        };
        let mut shown = Shown {
            store,
            only,
            bottom: None,
        };
        let last = store.lines.len().checked_sub(1);
        shown.bottom = match (self.follow, last) {
            (_, None) => None,
            (true, Some(last)) => shown.at_or_before(last),
            (false, Some(last)) => {
                let at =
                    store
                        .index_of(self.anchor)
                        .unwrap_or(if self.anchor < store.first_number() {
                            0
                        } else {
                            last
                        });
                shown.at_or_before(at).or_else(|| shown.at_or_after(at))
            }
        };
        shown
    }

    /// Where the lines come from, for the pane's title.
    pub fn label(&self, model: &World) -> String {
        match &self.fetched {
            Some(own) => own.source_label(),
            None => match (&model.logs.source, &self.pod) {
                (None, _) => "no attempt yet".into(),
                (Some(_), Some(pod)) => pod.clone(),
                (Some(_), None) => "all pods".into(),
            },
        }
    }

    /// The view held at line `index` of what is shown: whether that is following (the newest
    /// shown line), and the line's number.
    fn place(shown: &Shown<'_>, index: usize) -> (bool, u64) {
        let newest = shown
            .store
            .lines
            .len()
            .checked_sub(1)
            .and_then(|l| shown.at_or_before(l));
        (Some(index) == newest, shown.store.number_of(index))
    }

    /// Moves the view by `delta` shown lines (negative: back).
    pub fn scroll_by(&mut self, model: &World, delta: isize) {
        let shown = self.shown(model);
        let Some(mut at) = shown.bottom else {
            return;
        };
        for _ in 0..delta.unsigned_abs() {
            let next = if delta < 0 {
                at.checked_sub(1).and_then(|i| shown.at_or_before(i))
            } else {
                shown.at_or_after(at + 1)
            };
            match next {
                Some(n) => at = n,
                None => break,
            }
        }
        (self.follow, self.anchor) = Self::place(&shown, at);
    }

    pub fn top(&mut self, model: &World) {
        let shown = self.shown(model);
        if let Some(first) = shown.at_or_after(0) {
            let (_, anchor) = Self::place(&shown, first);
            (self.follow, self.anchor) = (false, anchor);
        }
    }

    pub fn bottom(&mut self) {
        self.follow = true;
    }

    pub fn toggle_follow(&mut self, model: &World) {
        if self.follow {
            // Paused where it is: the lines in view stay in view.
            let shown = self.shown(model);
            let anchor = shown.bottom.map(|b| shown.store.number_of(b));
            if let Some(anchor) = anchor {
                self.anchor = anchor;
            }
            self.follow = false;
        } else {
            self.bottom();
        }
    }

    /// Moves the view to the next (or previous) shown line containing the search; false when
    /// there is none.
    pub fn jump_to_match(&mut self, model: &World, forward: bool) -> bool {
        let Some(query) = self.search.clone().filter(|q| !q.is_empty()) else {
            return false;
        };
        let query = query.to_lowercase();
        let shown = self.shown(model);
        let len = shown.store.lines.len();
        let Some(from) = shown.bottom else {
            return false;
        };
        for step in 1..=len {
            let i = if forward {
                (from + step) % len
            } else {
                (from + len - step % len) % len
            };
            if shown.matches(i)
                && shown
                    .store
                    .lines
                    .get(i)
                    .is_some_and(|l| l.text.to_lowercase().contains(&query))
            {
                (self.follow, self.anchor) = Self::place(&shown, i);
                return true;
            }
        }
        false
    }

    /// Shows the engine's store (the newest attempt), every pod or one; the own fetch goes.
    pub fn live(&mut self, pod: Option<String>) {
        self.fetched = None;
        self.pod = pod;
        self.follow = true;
    }

    /// Starts showing a fetch of this viewer's own; returns its generation.
    pub fn fetch(&mut self, source: Source) -> u64 {
        self.fetches += 1;
        let mut store = LogStore::with_capacity(FETCH_CAPACITY);
        store.switch(source);
        store.generation = self.fetches;
        self.fetched = Some(store);
        self.pod = None;
        self.follow = true;
        self.fetches
    }

    /// Lines (and ends) of this viewer's own fetch.
    pub fn on_fetched(&mut self, generation: u64, event: TailEvent) -> bool {
        let Some(store) = self.fetched.as_mut().filter(|s| s.generation == generation) else {
            return false;
        };
        match event {
            TailEvent::Lines { pod, lines } => store.push(&pod, &lines),
            TailEvent::PodEnded { why, .. } => {
                store.ended(&why);
            }
            TailEvent::WatchTrouble { error } => store.pods_stale = Some(error),
            TailEvent::WatchRecovered => store.pods_stale = None,
            _ => return false,
        }
        true
    }

    /// The engine store's generation this view has taken in.
    pub fn generation_seen(&self) -> u64 {
        self.generation_seen
    }

    /// The model changed: a new attempt in the store starts the view over, and a place that
    /// has left the store moves to the oldest line held. Returns what to tell the viewer.
    pub fn follow_model(&mut self, model: &World) -> Option<String> {
        if self.generation_seen != model.logs.generation {
            self.generation_seen = model.logs.generation;
            self.live(None);
            return None;
        }
        let store = self.fetched.as_ref().unwrap_or(&model.logs);
        if !self.follow && self.anchor < store.first_number() {
            self.anchor = store.first_number();
            return Some(
                "the lines you were reading have left the buffer (they are in the saved files): now at the oldest line held"
                    .into(),
            );
        }
        None
    }
}
