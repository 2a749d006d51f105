//! What one viewer's metrics pane shows: whether it is shown, the metric chosen and whether the
//! curve is smoothed. The metric is kept by name, so it stays chosen while new metrics appear,
//! and a name the attempt lacks falls back to its first (a loss when there is one). The
//! attempt's GPU series (utilisation, memory: `engine::world::gpus`) come after the training's
//! own, so `]` reaches them.

#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricsView {
    pub shown: bool,
    pub metric: Option<String>,
    pub smooth: bool,
}

impl MetricsView {
    /// The metric to draw out of an attempt's `names` (loss first, as the store orders them).
    pub fn metric<'a>(&self, names: &[&'a str]) -> Option<&'a str> {
        self.metric
            .as_deref()
            .and_then(|m| names.iter().find(|n| **n == m).copied())
            .or_else(|| names.first().copied())
    }

    /// Chooses the metric `delta` places on from the one shown, round the list.
    pub fn step(&mut self, names: &[&str], delta: isize) -> Option<String> {
        let current = self.metric(names)?;
        let at = names.iter().position(|n| *n == current).unwrap_or(0) as isize;
        let next = names[(at + delta).rem_euclid(names.len() as isize) as usize].to_string();
        self.metric = Some(next.clone());
        Some(next)
    }
}

/// The names the chart can show for an attempt: the training's own metrics, then its pods' GPU
/// series when the GPUs were read.
pub fn metric_names<'a>(
    model: &'a crate::engine::World,
    attempt: &crate::k8s::status::AttemptSummary,
) -> Vec<&'a str> {
    let mut names = model.training.store.metrics(attempt.number());
    let pods = model.jobs.pods_of(&attempt.name);
    names.extend(
        model
            .gpus
            .series_names(pods.iter().map(|p| p.name.as_str())),
    );
    names
}
