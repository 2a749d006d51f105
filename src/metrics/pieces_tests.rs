#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;

use super::*;

/// Every update `Pieces` gives for `pieces` fed in turn, then the end of the stream.
fn updates(pieces: &[&[u8]]) -> Vec<String> {
    let mut out = Vec::new();
    let mut splitter = Pieces::new();
    for piece in pieces {
        splitter.push(piece, |u| out.push(String::from_utf8_lossy(u).into_owned()));
    }
    splitter.finish(|u| out.push(String::from_utf8_lossy(u).into_owned()));
    out
}

/// (x, metrics) of every sample from `pieces`.
fn samples(pieces: &[&str]) -> Vec<(f64, Vec<(String, f64)>)> {
    let mut out = Vec::new();
    let mut stream = MetricStream::new();
    let mut parser = crate::metrics::LineParser::new();
    let mut keep = |s: &Sample<'_>| {
        out.push((s.x, s.metrics().map(|(n, v)| (n.to_string(), v)).collect()));
    };
    for piece in pieces {
        stream.push(&mut parser, piece.as_bytes(), &mut keep);
    }
    stream.finish(&mut parser, &mut keep);
    out
}

fn xs(pieces: &[&str]) -> Vec<f64> {
    samples(pieces).into_iter().map(|(x, _)| x).collect()
}

#[test]
fn carriage_returns_split_across_pieces_give_every_bar_update() {
    let got = samples(&[
        "Epoch 0:  11%|█         | 2/18 [00:01<00:08,  2.00it/s, loss=1.5]\rEpoch 0:  1",
        "7%|█▋        | 3/18 [00:01<00:07,  2.00it/s, loss=1.4]\r",
    ]);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].1, [("loss".to_string(), 1.5)]);
    assert_eq!((got[1].0, got[1].1[0].1), (3.0, 1.4));
}

#[test]
fn a_long_line_in_pieces_is_read_whole() {
    let got = updates(&[b"{\"step\": 3, \"lo", b"ss\": 0.5", b"}\n{\"step\": 4}\n"]);
    assert_eq!(got, ["{\"step\": 3, \"loss\": 0.5}", "{\"step\": 4}"]);
}

#[test]
fn crlf_ends_one_update_and_the_stream_end_ends_the_last() {
    assert_eq!(updates(&[b"a=1\r\nb=2\r\n\nc=3"]), ["a=1", "b=2", "c=3"]);
}

#[test]
fn an_overlong_update_is_cut_and_the_next_is_whole() {
    let long = vec![b'A'; MAX_UPDATE * 2];
    let got = updates(&[&long, &long, b"\nloss=1\n"]);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].len(), MAX_UPDATE);
    assert_eq!(got[1], "loss=1");
}

#[test]
fn a_bar_that_starts_again_each_epoch_keeps_the_x_axis_going_up() {
    let got = xs(&[
        "Epoch 0:  94%|█████████▍| 17/18 [00:08<00:00,  2.0it/s, loss=2.1, v_num=0]\r",
        "Epoch 0: 100%|██████████| 18/18 [00:09<00:00,  2.0it/s, loss=2.0, v_num=0]\n",
        "Epoch 1:   6%|▌         | 1/18 [00:00<00:08,  2.0it/s, loss=1.9, v_num=0]\r",
        "Epoch 1:  11%|█         | 2/18 [00:01<00:08,  2.0it/s, loss=1.8, v_num=0]\r",
    ]);
    assert_eq!(got, [17.0, 18.0, 19.0, 20.0]);
}

#[test]
fn keras_bars_take_their_epoch_from_the_line_before() {
    let mut stream = MetricStream::new();
    let mut parser = crate::metrics::LineParser::new();
    let mut got = Vec::new();
    for line in [
        "Epoch 1/2",
        "469/469 [==============================] - 8s 16ms/step - loss: 0.58 - accuracy: 0.77",
        "Epoch 2/2",
        "469/469 [==============================] - 7s 15ms/step - loss: 0.31 - accuracy: 0.89",
    ] {
        stream.push_line(&mut parser, line.as_bytes(), |s| {
            got.push((s.x, s.epoch, s.progress.fraction()))
        });
    }
    assert_eq!(got[1], (469.0, Some(1.0), Some(0.5)));
    assert_eq!(got[3], (938.0, Some(2.0), Some(1.0)));
    assert_eq!(
        stream.progress().epoch,
        Some(Counter {
            done: 2.0,
            total: 2.0
        })
    );
}

#[test]
fn hugging_face_dicts_sit_at_the_step_of_the_bar_and_ignore_the_eval_bar() {
    let got = samples(&[
        " 10%|█         | 50/500 [00:20<03:00,  2.49it/s]\r",
        "{'loss': 1.25, 'grad_norm': 3.1, 'learning_rate': 4.5e-05, 'epoch': 0.3}\n",
        " 10%|█         | 50/500 [00:21<03:00,  2.49it/s]\r\n",
        "\n 15%|█▌        | 3/20 [00:00<00:01, 12.5it/s]\x1b[A\r",
        "{'eval_loss': 1.5, 'eval_runtime': 1.6, 'epoch': 0.3}\n",
    ]);
    let with_metrics: Vec<_> = got.iter().filter(|(_, m)| !m.is_empty()).collect();
    assert_eq!(with_metrics.len(), 2);
    assert!(with_metrics.iter().all(|(x, _)| *x == 50.0));
}

#[test]
fn without_steps_the_x_axis_is_the_epoch_or_else_the_update_number() {
    assert_eq!(
        xs(&[
            "{'loss': 2.0, 'epoch': 0.25}\n",
            "{'loss': 1.0, 'epoch': 0.5}\n"
        ]),
        [0.25, 0.5]
    );
    assert_eq!(
        xs(&["starting\n", "loss=2\n", "noise\n", "loss=1\n"]),
        [2.0, 4.0]
    );
}

#[test]
fn per_epoch_step_counters_of_a_plain_loop_become_one_axis() {
    let got = xs(&[
        "epoch 1/2 step 98/100 loss=1.0\n",
        "epoch 1/2 done: val_loss=1.1\n",
        "epoch 2/2 step 1/100 loss=0.9\n",
    ]);
    assert_eq!(got, [98.0, 98.0, 101.0]);
}

proptest! {
    #[test]
    fn any_cut_into_pieces_gives_the_same_updates(
        text in "[a-z=0-9 \r\n]{0,120}",
        cuts in proptest::collection::vec(0usize..120, 0..8),
    ) {
        let bytes = text.as_bytes();
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
        cuts.sort_unstable();
        let mut pieces = Vec::new();
        let mut start = 0;
        for cut in cuts {
            pieces.push(&bytes[start..cut]);
            start = cut;
        }
        pieces.push(&bytes[start..]);
        prop_assert_eq!(updates(&pieces), updates(&[bytes]));
    }
}

proptest! {
    /// Reading a whole line in place gives what pushing it and its newline gives, whatever
    /// was pending before it.
    #[test]
    fn a_whole_line_read_in_place_gives_the_same_updates(
        before in "[a-z=0-9 \r\n]{0,40}",
        lines in proptest::collection::vec("[a-z=0-9 \r]{0,40}", 0..6),
    ) {
        let (mut whole, mut pushed) = (Pieces::new(), Pieces::new());
        let (mut got, mut want) = (Vec::new(), Vec::new());
        whole.push(before.as_bytes(), |u| got.push(u.to_vec()));
        pushed.push(before.as_bytes(), |u| want.push(u.to_vec()));
        for line in &lines {
            whole.push_line(line.as_bytes(), |u| got.push(u.to_vec()));
            pushed.push(line.as_bytes(), |u| want.push(u.to_vec()));
            pushed.push(b"\n", |u| want.push(u.to_vec()));
        }
        whole.finish(|u| got.push(u.to_vec()));
        pushed.finish(|u| want.push(u.to_vec()));
        prop_assert_eq!(got, want);
    }
}
