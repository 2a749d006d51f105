//! Where each of a run's `SIM_LOG_LINES` updates falls: the first starts the run, the last ends
//! it, and the rest are split into epochs that each open, take their training steps and close
//! with an evaluation. Every format draws the same plan, so the same knobs give the same steps.

/// What one update of the run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    Begin,
    /// An epoch (0-based) opens.
    EpochStart {
        epoch: u64,
    },
    /// A training step: `step` counted from 1 across the run, `in_epoch` from 1 within it.
    Step {
        epoch: u64,
        step: u64,
        in_epoch: u64,
    },
    /// An epoch closes with its evaluation, after the step `step`.
    Eval {
        epoch: u64,
        step: u64,
    },
    End,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    updates: u64,
    pub epochs: u64,
    /// Updates per epoch (the last epoch takes the remainder too).
    per_epoch: u64,
    /// Whether epochs have room to open and close (three updates or more each).
    framed: bool,
}

impl Plan {
    pub fn new(updates: u64, epochs: u64) -> Self {
        let body = updates.saturating_sub(2);
        let epochs = epochs.clamp(1, (body / 3).max(1));
        let per_epoch = (body / epochs).max(1);
        Self {
            updates,
            epochs,
            per_epoch,
            framed: per_epoch >= 3,
        }
    }

    /// Training steps in epoch `epoch`.
    pub fn steps_in(&self, epoch: u64) -> u64 {
        let body = self.updates.saturating_sub(2);
        let slots = if epoch + 1 == self.epochs {
            body.saturating_sub(epoch * self.per_epoch)
        } else {
            self.per_epoch
        };
        if self.framed { slots - 2 } else { slots }
    }

    /// Training steps before epoch `epoch`.
    pub fn steps_before(&self, epoch: u64) -> u64 {
        epoch * self.steps_in(0)
    }

    pub fn total_steps(&self) -> u64 {
        self.steps_before(self.epochs - 1) + self.steps_in(self.epochs - 1)
    }

    pub fn slot(&self, i: u64) -> Slot {
        if i == 0 {
            return Slot::Begin;
        }
        if i + 1 == self.updates {
            return Slot::End;
        }
        let k = i - 1;
        let epoch = (k / self.per_epoch).min(self.epochs - 1);
        let j = k - epoch * self.per_epoch;
        let steps = self.steps_in(epoch);
        let before = self.steps_before(epoch);
        if !self.framed {
            let in_epoch = j + 1;
            return Slot::Step {
                epoch,
                step: before + in_epoch,
                in_epoch,
            };
        }
        match j {
            0 => Slot::EpochStart { epoch },
            j if j > steps => Slot::Eval {
                epoch,
                step: before + steps,
            },
            in_epoch => Slot::Step {
                epoch,
                step: before + in_epoch,
                in_epoch,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixty_updates_in_three_epochs_open_step_and_close_each_epoch() {
        let plan = Plan::new(60, 3);
        let slots: Vec<_> = (0..60).map(|i| plan.slot(i)).collect();
        assert_eq!(slots[0], Slot::Begin);
        assert_eq!(slots[1], Slot::EpochStart { epoch: 0 });
        assert_eq!(
            slots[2],
            Slot::Step {
                epoch: 0,
                step: 1,
                in_epoch: 1
            }
        );
        assert_eq!(slots[19], Slot::Eval { epoch: 0, step: 17 });
        assert_eq!(slots[20], Slot::EpochStart { epoch: 1 });
        assert_eq!(slots[59], Slot::End);
        assert_eq!(slots[58], Slot::Eval { epoch: 2, step: 52 });
        assert_eq!(plan.total_steps(), 52);
        let steps: Vec<u64> = slots
            .iter()
            .filter_map(|s| match s {
                Slot::Step { step, .. } => Some(*step),
                _ => None,
            })
            .collect();
        assert_eq!(steps, (1..=52).collect::<Vec<_>>());
    }

    #[test]
    fn too_few_updates_for_epochs_still_give_steps_in_order() {
        for updates in 0..12 {
            let plan = Plan::new(updates, 5);
            let mut last = 0;
            for i in 0..updates {
                if let Slot::Step { step, .. } = plan.slot(i) {
                    assert!(step > last, "{updates}: {step} after {last}");
                    last = step;
                }
            }
            assert!(last <= plan.total_steps().max(1));
        }
    }
}
