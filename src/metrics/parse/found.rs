//! What the scanners of one line have found so far, and which names are metrics at all: the x
//! axis (`step`, `epoch`) is kept apart, and numbers that describe the machine or the run's
//! settings rather than its training (`port`, `pid`, `rank`, `seed`, `v_num`, `eta`,
//! `batch_size`, `num_workers`) are left out.

use super::{Counter, Progress};

/// Most metrics kept from one line: a hostile line cannot grow the store without end.
pub(crate) const MAX_METRICS: usize = 64;
/// Longest metric name kept.
pub(crate) const MAX_NAME: usize = 64;

/// Names judged once are not judged again: more than this many and the list starts over.
const MAX_JUDGED: usize = 256;

/// Every name the parser has judged, with what it stands for. A run prints the same keys on
/// every line in the same order, so a name is looked for first where the one before it was
/// followed, and a metric's name is kept here as text once instead of taken out of every line.
#[derive(Debug, Default)]
pub(crate) struct Names {
    judged: Vec<Judged>,
    /// Counts the times the list started over: ids from before are not valid in another.
    generation: u64,
    /// Where the next name of the line is most likely to be.
    next: usize,
}

#[derive(Debug)]
enum Judged {
    Metric(Box<str>),
    Other(Box<[u8]>, Role),
}

impl Judged {
    fn bytes(&self) -> &[u8] {
        match self {
            Judged::Metric(name) => name.as_bytes(),
            Judged::Other(name, _) => name,
        }
    }
}

impl Names {
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// A metric's name by the id [`Found::record`] gave it.
    pub(crate) fn get(&self, id: u32) -> &str {
        match self.judged.get(id as usize) {
            Some(Judged::Metric(name)) => name,
            _ => "",
        }
    }

    /// The id and role of `name`, judging it when it is new. Only a metric's name that is kept
    /// (short and printable) is a metric; any other is ignored.
    fn judge(&mut self, name: &[u8]) -> (u32, Role) {
        let at = match self.judged.get(self.next) {
            Some(j) if j.bytes() == name => Some(self.next),
            _ => self.judged.iter().position(|j| j.bytes() == name),
        };
        let id = match at {
            Some(id) => id,
            None => {
                let judged = match role(name) {
                    Role::Metric if name.len() <= MAX_NAME && printable(name) => {
                        match std::str::from_utf8(name) {
                            Ok(text) => Judged::Metric(text.into()),
                            Err(_) => Judged::Other(name.into(), Role::Ignored),
                        }
                    }
                    Role::Metric => Judged::Other(name.into(), Role::Ignored),
                    other => Judged::Other(name.into(), other),
                };
                self.judged.push(judged);
                self.judged.len() - 1
            }
        };
        self.next = id + 1;
        let role = match &self.judged[id] {
            Judged::Metric(_) => Role::Metric,
            Judged::Other(_, role) => *role,
        };
        (id as u32, role)
    }

    /// At the start of a line: the list starts over when output with ever new names filled it.
    fn start_line(&mut self) {
        if self.judged.len() > MAX_JUDGED {
            self.judged.clear();
            self.generation += 1;
        }
        self.next = 0;
    }
}

#[derive(Debug, Default)]
pub(crate) struct Found {
    /// Metric ids (in `names`) and values, in the line's order.
    pub(crate) metrics: Vec<(u32, f64)>,
    pub(crate) step: Option<f64>,
    pub(crate) epoch: Option<f64>,
    pub(crate) progress: Progress,
    pub(crate) names: Names,
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
        self.names.start_line();
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

    /// `name = value`; the name's id and role.
    pub(crate) fn record(&mut self, name: &[u8], value: f64) -> (u32, Role) {
        let (id, role) = self.names.judge(name);
        self.record_judged(id, role, value);
        (id, role)
    }

    /// `name = value`, the name judged already.
    pub(crate) fn record_judged(&mut self, id: u32, role: Role, value: f64) {
        match role {
            Role::Step if value.is_finite() => {
                self.step.get_or_insert(value);
            }
            Role::Epoch if value.is_finite() => {
                self.epoch.get_or_insert(value);
            }
            Role::Metric if self.metrics.len() < MAX_METRICS => {
                self.metrics.push((id, value));
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

/// The role of a metric's name, judged by its last part (`train/global_step` is a step, `Num
/// examples` a setting). A name of several words is never the x axis (`time per iteration` is
/// a metric).
pub(crate) fn role(name: &[u8]) -> Role {
    // A unit in brackets says nothing of the role: `ETA (s)` is the `ETA`.
    let name = match name.windows(2).rposition(|w| w == b" (") {
        Some(i) if name.ends_with(b")") => &name[..i],
        _ => name,
    };
    let last = match name.iter().rposition(|&b| matches!(b, b'/' | b'.' | b' ')) {
        Some(i) => &name[i + 1..],
        None => name,
    };
    let words = last.len() != name.len() && name.contains(&b' ');
    // Lower-cased on the stack: this runs for every key of every line.
    let mut buf = [0u8; MAX_NAME];
    let Some(lower) = buf.get_mut(..last.len()) else {
        return Role::Metric;
    };
    lower.copy_from_slice(last);
    lower.make_ascii_lowercase();
    match &*lower {
        b"step" | b"global_step" | b"iteration" | b"iter" | b"it" | b"num_updates" if !words => {
            return Role::Step;
        }
        b"epoch" if !words => return Role::Epoch,
        // Counts a run announces before it starts (Hugging Face's `Num examples = 1,000`,
        // `Total optimization steps = 375`) are settings, not metrics.
        b"eta" | b"v_num" | b"world_size" | b"epochs" | b"steps" | b"steps_per_epoch"
        | b"total_steps" | b"total_flos" | b"examples" | b"device" | b"parameters" | b"params" => {
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
        Some(b'l') => &[b"interval"],
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
            found.record(name.as_bytes(), 1.0);
        }
        let kept: Vec<&str> = found
            .metrics
            .iter()
            .map(|(id, _)| found.names.get(*id))
            .collect();
        assert_eq!(kept, ["ok name", "损失"]);
    }

    #[test]
    fn a_name_met_again_keeps_its_id_in_any_order() {
        let mut found = Found::default();
        found.record(b"loss", 1.0);
        found.record(b"step", 3.0);
        found.record(b"acc", 0.5);
        found.clear();
        found.record(b"acc", 0.6);
        found.record(b"loss", 0.9);
        found.record(b"step", 4.0);
        let named: Vec<(&str, f64)> = found
            .metrics
            .iter()
            .map(|(id, v)| (found.names.get(*id), *v))
            .collect();
        assert_eq!(named, [("acc", 0.6), ("loss", 0.9)]);
        assert_eq!(found.step, Some(4.0));
        assert_eq!(found.names.judged.len(), 3);
    }

    #[test]
    fn output_with_ever_new_names_does_not_grow_the_names_without_end() {
        let mut found = Found::default();
        for i in 0..10 * MAX_JUDGED {
            found.clear();
            found.record(format!("metric_{i}").as_bytes(), 1.0);
            let (id, _) = found.metrics[0];
            assert_eq!(found.names.get(id), format!("metric_{i}"));
        }
        assert!(found.names.judged.len() <= MAX_JUDGED + 1);
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
