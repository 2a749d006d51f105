//! Where each of a run's `SIM_LOG_LINES` updates falls: the first starts the run, the last ends
//! it, and the rest are split into epochs of the same length (a dataset does not change size
//! between epochs) that each open, take their training steps and close with an evaluation; the
//! few left over save checkpoints. Every format draws the same plan, so the same knobs give the
//! same steps.

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
    /// After the last epoch: the `part`th of `parts` checkpoint lines.
    Save {
        part: u64,
        parts: u64,
    },
    End,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    updates: u64,
    pub epochs: u64,
    /// Updates per epoch.
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

    /// Training steps in each epoch.
    pub fn steps_per_epoch(&self) -> u64 {
        if self.framed {
            self.per_epoch - 2
        } else {
            self.per_epoch
        }
    }

    /// Training steps before epoch `epoch`.
    pub fn steps_before(&self, epoch: u64) -> u64 {
        epoch * self.steps_per_epoch()
    }

    pub fn total_steps(&self) -> u64 {
        self.epochs * self.steps_per_epoch()
    }

    pub fn slot(&self, i: u64) -> Slot {
        if i == 0 {
            return Slot::Begin;
        }
        if i + 1 == self.updates {
            return Slot::End;
        }
        let k = i - 1;
        let in_epochs = self.epochs * self.per_epoch;
        if k >= in_epochs {
            return Slot::Save {
                part: k - in_epochs + 1,
                parts: self.updates.saturating_sub(2).saturating_sub(in_epochs),
            };
        }
        let epoch = k / self.per_epoch;
        let j = k % self.per_epoch;
        let steps = self.steps_per_epoch();
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
    fn sixty_updates_in_three_epochs_open_step_and_close_each_epoch_then_save() {
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
        assert_eq!(slots[57], Slot::Eval { epoch: 2, step: 51 });
        assert_eq!(slots[58], Slot::Save { part: 1, parts: 1 });
        assert_eq!(plan.total_steps(), 51);
        let steps: Vec<u64> = slots
            .iter()
            .filter_map(|s| match s {
                Slot::Step { step, .. } => Some(*step),
                _ => None,
            })
            .collect();
        assert_eq!(steps, (1..=51).collect::<Vec<_>>());
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
