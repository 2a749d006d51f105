//! What the scanners of one line have found so far, and which names are metrics at all: the x
//! axis (`step`, `epoch`) is kept apart, and numbers that describe the machine or the run's
//! settings rather than its training (`port`, `pid`, `rank`, `seed`, `v_num`, `eta`,
//! `batch_size`, `num_workers`) are left out.

use super::{Counter, Progress};

/// Most metrics kept from one line: a hostile line cannot grow the store without end.
pub(crate) const MAX_METRICS: usize = 64;
/// Longest metric name kept.
pub(crate) const MAX_NAME: usize = 64;

/// Where a metric's name is: in the line's text, or (unescaped JSON keys) in the arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameRef {
    Text(usize, usize),
    Arena(usize, usize),
}

impl NameRef {
    pub(crate) fn resolve<'a>(&self, text: &'a [u8], arena: &'a str) -> Option<&'a str> {
        match *self {
            NameRef::Text(a, b) => std::str::from_utf8(text.get(a..b)?).ok(),
            NameRef::Arena(a, b) => arena.get(a..b),
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct Found {
    pub(crate) metrics: Vec<(NameRef, f64)>,
    pub(crate) step: Option<f64>,
    pub(crate) epoch: Option<f64>,
    pub(crate) progress: Progress,
}

/// What a name stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Step,
    Epoch,
    Metric,
    Ignored,
}

impl Found {
    pub(crate) fn clear(&mut self) {
        self.metrics.clear();
        self.step = None;
        self.epoch = None;
        self.progress = Progress::default();
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.metrics.is_empty()
            && self.step.is_none()
            && self.epoch.is_none()
            && self.progress.is_empty()
    }

    /// `name = value`, the name given by where it is; `name` is its text, for its role.
    pub(crate) fn record(&mut self, name: &[u8], at: NameRef, value: f64) {
        match role(name) {
            Role::Step if value.is_finite() => {
                self.step.get_or_insert(value);
            }
            Role::Epoch if value.is_finite() => {
                self.epoch.get_or_insert(value);
            }
            Role::Metric
                if self.metrics.len() < MAX_METRICS
                    && name.len() <= MAX_NAME
                    && printable(name) =>
            {
                self.metrics.push((at, value));
            }
            _ => {}
        }
    }

    pub(crate) fn epoch_counter(&mut self, counter: Counter) {
        self.progress.epoch.get_or_insert(counter);
        self.epoch.get_or_insert(counter.done);
    }

    pub(crate) fn step_counter(&mut self, counter: Counter) {
        self.progress.step.get_or_insert(counter);
    }
}

/// The role of a metric's name, judged by its last part (`train/global_step` is a step).
pub(crate) fn role(name: &[u8]) -> Role {
    let last = match name.iter().rposition(|&b| b == b'/' || b == b'.') {
        Some(i) => &name[i + 1..],
        None => name,
    };
    // Lower-cased on the stack: this runs for every key of every line.
    let mut buf = [0u8; MAX_NAME];
    let Some(lower) = buf.get_mut(..last.len()) else {
        return Role::Metric;
    };
    lower.copy_from_slice(last);
    lower.make_ascii_lowercase();
    match &*lower {
        b"step" | b"global_step" | b"iteration" | b"iter" | b"it" => return Role::Step,
        b"epoch" => return Role::Epoch,
        // Counts a run announces before it starts (Hugging Face's `Num examples = 1,000`,
        // `Total optimization steps = 375`) are settings, not metrics.
        b"eta" | b"v_num" | b"world_size" | b"epochs" | b"steps" | b"steps_per_epoch"
        | b"total_steps" | b"total_flos" | b"examples" | b"device" | b"parameters" => {
            return Role::Ignored;
        }
        _ => {}
    }
    // Settings by their last part (`MASTER_PORT`, `local_rank`, `train_batch_size`), looked
    // up by their last byte.
    let parts: &[&[u8]] = match lower.last() {
        Some(b't') => &[b"port", b"timestamp"],
        Some(b'd') => &[b"pid", b"seed"],
        Some(b'k') => &[b"rank"],
        Some(b'n') => &[b"version"],
        Some(b's') => &[b"ts"],
        Some(b'e') => &[b"batch_size"],
        _ => &[],
    };
    let is_setting = parts.iter().any(|part| ends_with_part(lower, part))
        || lower.starts_with(b"num_")
        || lower.starts_with(b"max_");
    if is_setting {
        Role::Ignored
    } else {
        Role::Metric
    }
}

/// A name shown on a screen must not act on it: no control characters, no bidirectional
/// overrides (JSON keys and quoted dict keys can hold anything).
fn printable(name: &[u8]) -> bool {
    if name.iter().all(|b| (0x21..0x7f).contains(b)) {
        return true;
    }
    std::str::from_utf8(name).is_ok_and(|s| {
        s.chars()
            .all(|c| !c.is_control() && !crate::sanitize::is_bidi_override(c))
    })
}

/// `name` is `part` or ends with `_part`.
fn ends_with_part(name: &[u8], part: &[u8]) -> bool {
    name.ends_with(part) && (name.len() == part.len() || name[name.len() - part.len() - 1] == b'_')
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn knows_the_x_axis_by_any_of_its_names() {
        for name in [
            "step",
            "Step",
            "global_step",
            "train/global_step",
            "iteration",
            "iter",
            "it",
        ] {
            assert_eq!(role(name.as_bytes()), Role::Step, "{name}");
        }
        assert_eq!(role(b"epoch"), Role::Epoch);
        assert_eq!(role(b"Epoch"), Role::Epoch);
    }

    #[test]
    fn names_that_would_act_on_a_terminal_are_left_out() {
        let mut found = Found::default();
        for name in ["a\x1b[2Jb", "x\u{202e}y", "bell\x07", "ok name", "损失"] {
            found.record(name.as_bytes(), NameRef::Text(0, 0), 1.0);
        }
        assert_eq!(found.metrics.len(), 2);
    }

    #[test]
    fn leaves_out_settings_and_machine_numbers() {
        for name in [
            "port",
            "MASTER_PORT",
            "pid",
            "local_rank",
            "seed",
            "v_num",
            "ETA",
            "num_workers",
            "max_steps",
            "per_device_train_batch_size",
            "epochs",
        ] {
            assert_eq!(role(name.as_bytes()), Role::Ignored, "{name}");
        }
        for name in [
            "loss",
            "eval_loss",
            "learning_rate",
            "grad_norm",
            "samples/s",
            "train_runtime",
            "transport",
        ] {
            assert_eq!(role(name.as_bytes()), Role::Metric, "{name}");
        }
    }
}
