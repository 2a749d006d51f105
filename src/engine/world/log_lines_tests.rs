use super::*;

fn texts(buffer: &LineBuffer) -> Vec<&str> {
    buffer.iter().map(|l| l.text).collect()
}

#[test]
fn lines_come_back_as_written_with_their_pod_and_time() {
    let mut buffer = LineBuffer::default();
    buffer.push_back(3, Some(42), "first", &[]);
    buffer.push_back(1, None, "", &[]);
    buffer.push_back(0, Some(NO_TIME + 1), "thïrd ✓", &[]);
    assert_eq!(texts(&buffer), ["first", "", "thïrd ✓"]);
    assert_eq!(
        buffer.get(0),
        Some(Line {
            pod: 3,
            ts: Some(42),
            text: "first",
            runs: &[],
        })
    );
    assert_eq!(buffer.get(1).map(|l| (l.pod, l.ts)), Some((1, None)));
    assert_eq!(buffer.get(3), None);
}

#[test]
fn blocks_are_freed_as_the_oldest_lines_leave() {
    let mut buffer = LineBuffer::default();
    let line = "x".repeat(1000);
    for i in 0..1000 {
        buffer.push_back(i, None, &line, &[]);
        buffer.keep_newest(100);
    }
    assert_eq!(buffer.len(), 100);
    // 100 lines of 1,000 bytes span two or three 64 KiB blocks, never all sixteen written.
    assert!(buffer.blocks.len() <= 3, "{}", buffer.blocks.len());
    assert_eq!(buffer.get(0).map(|l| l.pod), Some(900));
    assert!(buffer.iter().all(|l| l.text == line));
}

#[test]
fn a_line_grows_in_place_or_moves_to_the_end() {
    let mut buffer = LineBuffer::default();
    buffer.push_back(0, None, "a-start", &[]);
    assert_eq!(buffer.extend(0, "+more", &[]), Some(()));
    buffer.push_back(1, None, "b", &[]);
    // No longer the last text written: copied to the end.
    assert_eq!(buffer.extend(0, "+again", &[]), Some(()));
    assert_eq!(texts(&buffer), ["a-start+more+again", "b"]);
    assert_eq!(buffer.extend(5, "x", &[]), None);
    buffer.keep_newest(1);
    assert_eq!(texts(&buffer), ["b"]);
}

#[test]
fn a_moved_line_keeps_its_block_alive() {
    let mut buffer = LineBuffer::default();
    let filler = "f".repeat(BLOCK_BYTES / 4);
    buffer.push_back(0, None, "old", &[]);
    for _ in 0..8 {
        buffer.push_back(1, None, &filler, &[]);
    }
    // Line 0 moves into the newest block; the first block must go, the newest stay.
    buffer.extend(0, "-grown", &[]);
    buffer.keep_newest(9);
    assert_eq!(buffer.get(0).map(|l| l.text), Some("old-grown"));
    buffer.keep_newest(1);
    assert_eq!(texts(&buffer), [filler.as_str()]);
    assert_eq!(buffer.blocks.len(), 1);
    buffer.clear();
    assert!(buffer.is_empty() && buffer.blocks.is_empty());
    buffer.push_back(2, None, "again", &[]);
    assert_eq!(texts(&buffer), ["again"]);
}

#[test]
fn an_emptied_newest_block_goes_without_taking_older_lines() {
    let mut buffer = LineBuffer::default();
    let big = "b".repeat(60_000);
    buffer.push_back(0, None, "old", &[]);
    buffer.push_back(1, None, &big, &[]);
    // Line 0 grows past the block's room: moved into a second block.
    buffer.extend(0, &"g".repeat(10_000), &[]);
    // It leaves; the second block is empty, the first still holds the big line.
    buffer.keep_newest(1);
    buffer.push_back(2, None, &big, &[]);
    assert_eq!(texts(&buffer), [big.as_str(), big.as_str()]);
    let live: u32 = buffer.blocks.iter().map(|b| b.live).sum();
    assert_eq!(live, 2);
}

fn red_from(start: u32) -> Run {
    Run {
        start,
        ink: crate::sanitize::sgr::Ink {
            fg: crate::sanitize::sgr::Tint::Indexed(1),
            ..Default::default()
        },
    }
}

#[test]
fn colours_stay_with_their_line_as_lines_come_grow_and_go() {
    let mut buffer = LineBuffer::default();
    buffer.push_back(0, None, "plain", &[]);
    buffer.push_back(1, None, "red", &[red_from(0)]);
    // A run past a cut line's end goes with the cut.
    buffer.push_back(2, None, "cut", &[red_from(1), red_from(3)]);
    assert_eq!(buffer.get(0).map(|l| l.runs), Some(&[][..]));
    assert_eq!(
        buffer.get(1).map(|l| (l.pod, l.runs)),
        Some((1, &[red_from(0)][..]))
    );
    assert_eq!(buffer.get(2).map(|l| l.runs), Some(&[red_from(1)][..]));
    // A plain line that grows a coloured piece gets runs after its old end.
    buffer.extend(0, "+red", &[red_from(1)]);
    assert_eq!(
        buffer.get(0).map(|l| (l.pod, l.runs)),
        Some((0, &[red_from(6)][..]))
    );
    buffer.keep_newest(2);
    assert_eq!(buffer.get(0).map(|l| l.runs), Some(&[red_from(0)][..]));
    buffer.keep_newest(0);
    assert!(buffer.styles.is_empty());
}

#[derive(Debug, Clone)]
enum Op {
    Push(u32, String, bool),
    Extend(usize, String, bool),
    Keep(usize),
}

fn op() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    // Lengths up to a few blocks' worth in total, so blocks fill, move and leave.
    let text = prop_oneof![
        "[a-zé✓]{0,40}".boxed(),
        (1000usize..20_000).prop_map(|n| "x".repeat(n)).boxed(),
    ];
    prop_oneof![
        6 => (0u32..4, text.clone(), any::<bool>()).prop_map(|(p, t, c)| Op::Push(p, t, c)),
        2 => (0usize..64, text, any::<bool>()).prop_map(|(i, t, c)| Op::Extend(i, t, c)),
        1 => (0usize..40).prop_map(Op::Keep),
    ]
}

/// A coloured text's runs: red from its second byte, when it has one.
fn runs_of(text: &str, coloured: bool) -> Vec<Run> {
    if coloured && text.len() > 1 {
        vec![red_from(1)]
    } else {
        Vec::new()
    }
}

proptest::proptest! {
    /// Whatever is pushed, grown and dropped, the buffer reads as a plain list of strings
    /// with their colours would, and never keeps a block no line needs (beyond the one being
    /// written).
    #[test]
    fn reads_as_a_list_of_strings(ops in proptest::collection::vec(op(), 1..120)) {
        let mut buffer = LineBuffer::default();
        let mut model: VecDeque<(u32, String, Vec<Run>)> = VecDeque::new();
        for op in ops {
            match op {
                Op::Push(pod, text, coloured) => {
                    let runs = runs_of(&text, coloured);
                    buffer.push_back(pod, None, &text, &runs);
                    model.push_back((pod, text, runs));
                }
                Op::Extend(i, text, coloured) => {
                    let runs = runs_of(&text, coloured);
                    let done = buffer.extend(i, &text, &runs);
                    proptest::prop_assert_eq!(done.is_some(), i < model.len());
                    if let Some((_, line, held)) = model.get_mut(i) {
                        let len = line.len() as u32;
                        held.extend(runs.iter().map(|r| red_from(r.start + len)));
                        line.push_str(&text);
                    }
                }
                Op::Keep(n) => {
                    buffer.keep_newest(n);
                    while model.len() > n {
                        model.pop_front();
                    }
                }
            }
            let held: Vec<(u32, &str, &[Run])> =
                buffer.iter().map(|l| (l.pod, l.text, l.runs)).collect();
            let want: Vec<(u32, &str, &[Run])> =
                model.iter().map(|(p, t, r)| (*p, t.as_str(), r.as_slice())).collect();
            proptest::prop_assert_eq!(held, want);
            let live: u32 = buffer.blocks.iter().map(|b| b.live).sum();
            proptest::prop_assert_eq!(live as usize, buffer.len());
            proptest::prop_assert!(buffer.blocks.front().is_none_or(|b| b.live > 0 || buffer.blocks.len() == 1));
            proptest::prop_assert!(buffer.styles.iter().all(|(n, _)| *n >= buffer.dropped));
        }
    }
}
