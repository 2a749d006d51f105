//! Every format's output as a whole run prints it: the shapes of its lines, its `\r` redraws,
//! NaN from the divergence step on, and the same bytes for the same rank and attempt.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn shape(format: LogFormat) -> LogShape {
    LogShape {
        format,
        epochs: 3,
        updates: 60,
        lines_per_second: 4.0,
        diverge_at: None,
        hostile: false,
        rank: 0,
        world: 1,
    }
}

/// The run's output, as `kubectl logs` would give it.
fn output(shape: &LogShape, ordinal: u64) -> String {
    let mut log = TrainingLog::new(shape, ordinal);
    let mut sink = LineSink::default();
    for i in 0..shape.updates {
        log.write(i, &mut sink);
    }
    sink.finish();
    let mut out = Vec::new();
    for (text, partial) in sink.take() {
        out.extend_from_slice(&text);
        if !partial {
            out.push(b'\n');
        }
    }
    String::from_utf8(out).unwrap()
}

fn lines(shape: &LogShape) -> Vec<String> {
    output(shape, 0).lines().map(str::to_string).collect()
}

#[test]
fn hugging_face_prints_dicts_above_a_bar_redrawn_after_carriage_returns() {
    let out = lines(&shape(LogFormat::Hf));
    let train: Vec<_> = out.iter().filter(|l| l.contains("{'loss': ")).collect();
    assert_eq!(train.len(), 51 / 5, "{out:#?}");
    let first = train[0];
    assert!(first.starts_with("\r  0%|          | 0/51 [00:00<?, ?it/s]\r  2%|▏         | 1/51 [00:00<00:12,  4.00it/s]"), "{first:?}");
    let dict = first.rsplit('\r').next().unwrap();
    assert!(dict.starts_with("{'loss': 1."), "{dict}");
    assert!(dict.contains(", 'grad_norm': ") && dict.contains(", 'learning_rate': "));
    assert!(dict.ends_with(", 'epoch': 0.29}"), "{dict}");
    let evals: Vec<_> = out
        .iter()
        .filter(|l| l.contains("{'eval_loss': "))
        .collect();
    assert_eq!(evals.len(), 3);
    assert!(evals[2].ends_with("'epoch': 3.0}"), "{}", evals[2]);
    let end = &out[out.len() - 2];
    assert!(end.contains("\r{'train_runtime': 12.75, 'train_samples_per_second': 32.0, 'train_steps_per_second': 4.0, 'train_loss': "), "{end:?}");
    assert_eq!(
        out.last().unwrap(),
        "\r100%|██████████| 51/51 [00:12<00:00,  4.00it/s]"
    );
}

#[test]
fn lightning_prints_one_bar_line_per_epoch_with_validation_metrics_at_its_end() {
    let out = lines(&shape(LogFormat::Lightning));
    assert_eq!(out.len(), 6, "{out:#?}");
    assert_eq!(out[0], "GPU available: True (cuda), used: True");
    for (epoch, line) in out[1..4].iter().enumerate() {
        assert!(
            line.starts_with(&format!("\rEpoch {epoch}:   0%|          | 0/")),
            "{line:?}"
        );
        assert_eq!(line.matches('\r').count(), 19);
        let last = line.rsplit('\r').next().unwrap();
        assert!(
            last.starts_with(&format!("Epoch {epoch}: 100%|██████████| ")),
            "{last}"
        );
        assert!(
            last.contains(", v_num=0, train_loss=") && last.contains(", val_acc="),
            "{last}"
        );
    }
    assert_eq!(out[4], "saving checkpoint shard 1 of 1 to /workspace/ckpt");
    assert_eq!(out[5], "`Trainer.fit` stopped: `max_epochs=3` reached.");
}

#[test]
fn keras_prints_epoch_headers_then_a_bar_erased_with_backspaces_and_finished_with_validation() {
    let out = lines(&shape(LogFormat::Keras));
    assert_eq!(out.len(), 9, "{out:#?}");
    assert_eq!(out[1], "Epoch 1/3");
    let bar = &out[2];
    assert!(
        bar.starts_with("\r 1/17 [>.............................] - ETA: 4s - loss: "),
        "{bar:?}"
    );
    let width = bar[1..].find('\x08').unwrap();
    let erased = format!("{}\r 2/17 [==>...", "\x08".repeat(width));
    assert!(bar.contains(&erased), "{bar:?}");
    let last = bar.rsplit('\r').next().unwrap();
    assert!(
        last.starts_with("17/17 [==============================] - 4s 250ms/step - loss: "),
        "{last}"
    );
    assert!(
        last.contains(" - accuracy: 0.") && last.contains(" - val_loss: "),
        "{last}"
    );
    assert!(last.contains(" - val_accuracy: 0."), "{last}");
    assert!(out[6].starts_with("\r 1/17 [>.............................] - ETA: 4s - loss: "));
}

#[test]
fn jsonl_prints_one_json_object_per_step_and_per_evaluation() {
    let out = lines(&shape(LogFormat::Jsonl));
    assert_eq!(out.len(), 60);
    let objects: Vec<serde_json::Value> = out
        .iter()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(objects.len(), 51 + 3);
    assert_eq!(objects[0]["step"], 1);
    assert!(objects[0]["loss"].as_f64().unwrap() > 1.5);
    assert!(objects[0]["lr"].as_f64().unwrap() > 0.0);
    assert_eq!(objects[17]["epoch"], 1.0);
    assert!(objects[17]["eval_loss"].is_f64());
}

#[test]
fn plain_prints_one_step_line_per_update() {
    let out = lines(&shape(LogFormat::Plain));
    assert_eq!(out.len(), 60);
    assert!(
        out[2].starts_with("step 00001/00051 (1.96%) | loss: 2."),
        "{}",
        out[2]
    );
    assert!(out[2].contains(" | grad_norm: ") && out[2].contains(" | lr: 1.50e-04 | dt: "));
    assert!(
        out[19].starts_with("step 00017/00051 (33.33%) | eval_loss: "),
        "{}",
        out[19]
    );
}

#[test]
fn every_format_prints_nan_from_the_divergence_step_on() {
    // Step 29 as each format shows it: Lightning and Keras count steps within the epoch (the
    // second epoch's 12th of 17).
    for (format, nan, step_29) in [
        (LogFormat::Hf, "'loss': nan", "| 29/51 ["),
        (
            LogFormat::Lightning,
            "train_loss=nan",
            "Epoch 1:  71%|███████   | 12/17 [",
        ),
        (LogFormat::Keras, "loss: nan", "12/17 [="),
        (LogFormat::Jsonl, "\"loss\": NaN", "{\"step\": 29, "),
        (LogFormat::Plain, "loss: nan", "step 00029/00051"),
    ] {
        let diverging = LogShape {
            diverge_at: Some(30),
            ..shape(format)
        };
        let (normal, diverged) = (output(&shape(format), 0), output(&diverging, 0));
        assert!(!normal.contains(nan), "{format:?}");
        // Up to step 30 the runs are the same; from there on the loss is NaN.
        let same = normal
            .bytes()
            .zip(diverged.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        let (before, after) = diverged.split_at(same);
        assert!(before.contains(step_29), "{format:?}: {before}");
        assert!(!before.contains(nan), "{format:?}");
        assert!(after.contains(nan), "{format:?}: {after}");
    }
}

#[test]
fn the_same_rank_and_attempt_print_the_same_bytes_and_other_ranks_differ_a_little() {
    for format in [LogFormat::Hf, LogFormat::Keras, LogFormat::Jsonl] {
        let one = output(&shape(format), 0);
        assert_eq!(one, output(&shape(format), 0));
        let rank1 = LogShape {
            rank: 1,
            ..shape(format)
        };
        assert_ne!(one, output(&rank1, 0));
        assert_ne!(one, output(&shape(format), 1));
    }
}

#[test]
fn every_format_writes_lines_in_any_number_of_updates() {
    for format in [
        LogFormat::Hf,
        LogFormat::Lightning,
        LogFormat::Keras,
        LogFormat::Jsonl,
        LogFormat::Plain,
    ] {
        for updates in [0, 1, 2, 3, 5, 7, 11, 2000] {
            let s = LogShape {
                updates,
                epochs: 4,
                ..shape(format)
            };
            let out = output(&s, 0);
            assert!(
                updates < 2 || out.ends_with('\n'),
                "{format:?} {updates}: {out:?}"
            );
        }
    }
}

#[test]
fn formats_are_named_as_the_variable_takes_them() {
    assert_eq!(LogFormat::parse(" HF "), Some(LogFormat::Hf));
    assert_eq!(LogFormat::parse("jsonl"), Some(LogFormat::Jsonl));
    assert_eq!(LogFormat::parse("xml"), None);
}
