//! The lines the logs pane holds, packed: their text sits back to back in large blocks instead
//! of one allocation per line, and each line costs 24 bytes of bookkeeping. With 100,000 lines
//! held that is about half the memory of a `VecDeque` of `String`s (48 bytes a line, plus the
//! allocator's header and rounding for each string).
//!
//! Lines leave from the front only (the oldest first), so a block is freed once no line held
//! points into it. A line that grows (a very long line arriving in pieces) is appended to in
//! place when it is the last text written, and copied to the end otherwise: the old copy is dead
//! weight only until its block leaves.

use std::collections::VecDeque;

/// Bytes of text per block: many lines each, and any line the pane keeps fits in one.
const BLOCK_BYTES: usize = 64 * 1024;
/// `Slot::ts` of a line the server gave no time for.
const NO_TIME: i64 = i64::MIN;

/// One line held, as drawn and searched.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line<'a> {
    /// Index into `LogView::pods`.
    pub pod: u32,
    /// When the kubelet stamped the line, in nanoseconds since the Unix epoch (None if the
    /// server did not say).
    pub ts: Option<i64>,
    /// Sanitised text: safe to draw.
    pub text: &'a str,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    ts: i64,
    /// Number of the block holding the text (wrapping; see `LineBuffer::first_block`).
    block: u32,
    pod: u32,
    start: u32,
    len: u32,
}

#[derive(Debug, Clone)]
struct Block {
    text: String,
    /// Lines held whose text is in this block.
    live: u32,
}

#[derive(Debug, Clone, Default)]
pub struct LineBuffer {
    slots: VecDeque<Slot>,
    blocks: VecDeque<Block>,
    /// The number of `blocks[0]`; block numbers only grow (wrapping), so `block - first_block`
    /// is a block's place in `blocks`.
    first_block: u32,
}

impl LineBuffer {
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Forgets every line; the blocks' memory goes back too.
    pub fn clear(&mut self) {
        self.slots.clear();
        self.blocks.clear();
        self.first_block = 0;
    }

    /// Room for `lines` without growing (the bookkeeping only: text blocks come as needed).
    pub fn reserve(&mut self, lines: usize) {
        self.slots.reserve(lines.saturating_sub(self.slots.len()));
    }

    pub fn get(&self, index: usize) -> Option<Line<'_>> {
        self.slots.get(index).map(|slot| self.line(slot))
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Line<'_>> + ExactSizeIterator {
        self.slots.iter().map(|slot| self.line(slot))
    }

    /// Adds a line at the end.
    pub fn push_back(&mut self, pod: u32, ts: Option<i64>, text: &str) {
        let (block, start) = self.store(text);
        self.slots.push_back(Slot {
            ts: ts.unwrap_or(NO_TIME),
            block,
            pod,
            start,
            len: text.len() as u32,
        });
    }

    /// Drops the oldest lines until at most `keep` are held.
    pub fn keep_newest(&mut self, keep: usize) {
        while self.slots.len() > keep {
            if let Some(slot) = self.slots.pop_front() {
                self.release(slot.block);
            }
        }
        self.free_front_blocks();
    }

    /// Appends `piece` to line `index` (None: no such line).
    pub fn extend(&mut self, index: usize, piece: &str) -> Option<()> {
        let slot = *self.slots.get(index)?;
        let last = self.blocks.len().checked_sub(1)?;
        let in_last_block = self.place(slot.block) == Some(last);
        if let Some(block) = self.blocks.get_mut(last)
            && in_last_block
            && (slot.start + slot.len) as usize == block.text.len()
            && block.text.len() + piece.len() <= block.text.capacity()
        {
            block.text.push_str(piece);
        } else {
            let mut text = String::with_capacity(slot.len as usize + piece.len());
            text.push_str(self.line(&slot).text);
            text.push_str(piece);
            let (block, start) = self.store(&text);
            self.release(slot.block);
            let moved = self.slots.get_mut(index)?;
            moved.block = block;
            moved.start = start;
            moved.len += piece.len() as u32;
            self.free_front_blocks();
            return Some(());
        }
        let grown = self.slots.get_mut(index)?;
        grown.len += piece.len() as u32;
        Some(())
    }

    fn line(&self, slot: &Slot) -> Line<'_> {
        let text = self
            .place(slot.block)
            .and_then(|at| self.blocks.get(at))
            .and_then(|b| {
                b.text
                    .get(slot.start as usize..(slot.start + slot.len) as usize)
            })
            .unwrap_or("");
        Line {
            pod: slot.pod,
            ts: (slot.ts != NO_TIME).then_some(slot.ts),
            text,
        }
    }

    fn place(&self, block: u32) -> Option<usize> {
        let at = block.wrapping_sub(self.first_block) as usize;
        (at < self.blocks.len()).then_some(at)
    }

    /// Writes `text` at the end of the last block (a new one when it does not fit); returns the
    /// block's number and where the text starts in it.
    fn store(&mut self, text: &str) -> (u32, u32) {
        let fits = self
            .blocks
            .back()
            .is_some_and(|b| b.text.len() + text.len() <= b.text.capacity());
        if !fits {
            // A newest block whose lines have all gone (or moved on) is not kept: no line points
            // into it, so the new block may take its number. Older blocks may still hold lines.
            if self.blocks.back().is_some_and(|b| b.live == 0) {
                self.blocks.pop_back();
            }
            self.free_front_blocks();
            self.blocks.push_back(Block {
                text: String::with_capacity(BLOCK_BYTES.max(text.len())),
                live: 0,
            });
        }
        let number = self
            .first_block
            .wrapping_add(self.blocks.len().saturating_sub(1) as u32);
        match self.blocks.back_mut() {
            Some(block) => {
                let start = block.text.len() as u32;
                block.text.push_str(text);
                block.live += 1;
                (number, start)
            }
            None => (number, 0),
        }
    }

    fn release(&mut self, block: u32) {
        if let Some(at) = self.place(block)
            && let Some(b) = self.blocks.get_mut(at)
        {
            b.live = b.live.saturating_sub(1);
        }
    }

    /// Frees the oldest blocks no line points into (the newest stays: text is written there).
    fn free_front_blocks(&mut self) {
        while self.blocks.len() > 1 && self.blocks.front().is_some_and(|b| b.live == 0) {
            self.blocks.pop_front();
            self.first_block = self.first_block.wrapping_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(buffer: &LineBuffer) -> Vec<&str> {
        buffer.iter().map(|l| l.text).collect()
    }

    #[test]
    fn lines_come_back_as_written_with_their_pod_and_time() {
        let mut buffer = LineBuffer::default();
        buffer.push_back(3, Some(42), "first");
        buffer.push_back(1, None, "");
        buffer.push_back(0, Some(NO_TIME + 1), "thïrd ✓");
        assert_eq!(texts(&buffer), ["first", "", "thïrd ✓"]);
        assert_eq!(
            buffer.get(0),
            Some(Line {
                pod: 3,
                ts: Some(42),
                text: "first"
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
            buffer.push_back(i, None, &line);
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
        buffer.push_back(0, None, "a-start");
        assert_eq!(buffer.extend(0, "+more"), Some(()));
        buffer.push_back(1, None, "b");
        // No longer the last text written: copied to the end.
        assert_eq!(buffer.extend(0, "+again"), Some(()));
        assert_eq!(texts(&buffer), ["a-start+more+again", "b"]);
        assert_eq!(buffer.extend(5, "x"), None);
        buffer.keep_newest(1);
        assert_eq!(texts(&buffer), ["b"]);
    }

    #[test]
    fn a_moved_line_keeps_its_block_alive() {
        let mut buffer = LineBuffer::default();
        let filler = "f".repeat(BLOCK_BYTES / 4);
        buffer.push_back(0, None, "old");
        for _ in 0..8 {
            buffer.push_back(1, None, &filler);
        }
        // Line 0 moves into the newest block; the first block must go, the newest stay.
        buffer.extend(0, "-grown");
        buffer.keep_newest(9);
        assert_eq!(buffer.get(0).map(|l| l.text), Some("old-grown"));
        buffer.keep_newest(1);
        assert_eq!(texts(&buffer), [filler.as_str()]);
        assert_eq!(buffer.blocks.len(), 1);
        buffer.clear();
        assert!(buffer.is_empty() && buffer.blocks.is_empty());
        buffer.push_back(2, None, "again");
        assert_eq!(texts(&buffer), ["again"]);
    }

    #[test]
    fn an_emptied_newest_block_goes_without_taking_older_lines() {
        let mut buffer = LineBuffer::default();
        let big = "b".repeat(60_000);
        buffer.push_back(0, None, "old");
        buffer.push_back(1, None, &big);
        // Line 0 grows past the block's room: moved into a second block.
        buffer.extend(0, &"g".repeat(10_000));
        // It leaves; the second block is empty, the first still holds the big line.
        buffer.keep_newest(1);
        buffer.push_back(2, None, &big);
        assert_eq!(texts(&buffer), [big.as_str(), big.as_str()]);
        let live: u32 = buffer.blocks.iter().map(|b| b.live).sum();
        assert_eq!(live, 2);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Push(u32, String),
        Extend(usize, String),
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
            6 => (0u32..4, text.clone()).prop_map(|(p, t)| Op::Push(p, t)),
            2 => (0usize..64, text).prop_map(|(i, t)| Op::Extend(i, t)),
            1 => (0usize..40).prop_map(Op::Keep),
        ]
    }

    proptest::proptest! {
        /// Whatever is pushed, grown and dropped, the buffer reads as a plain list of strings
        /// would, and never keeps a block no line needs (beyond the one being written).
        #[test]
        fn reads_as_a_list_of_strings(ops in proptest::collection::vec(op(), 1..120)) {
            let mut buffer = LineBuffer::default();
            let mut model: VecDeque<(u32, String)> = VecDeque::new();
            for op in ops {
                match op {
                    Op::Push(pod, text) => {
                        buffer.push_back(pod, None, &text);
                        model.push_back((pod, text));
                    }
                    Op::Extend(i, text) => {
                        let done = buffer.extend(i, &text);
                        proptest::prop_assert_eq!(done.is_some(), i < model.len());
                        if let Some((_, line)) = model.get_mut(i) {
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
                let held: Vec<(u32, &str)> = buffer.iter().map(|l| (l.pod, l.text)).collect();
                let want: Vec<(u32, &str)> = model.iter().map(|(p, t)| (*p, t.as_str())).collect();
                proptest::prop_assert_eq!(held, want);
                let live: u32 = buffer.blocks.iter().map(|b| b.live).sum();
                proptest::prop_assert_eq!(live as usize, buffer.len());
                proptest::prop_assert!(buffer.blocks.front().is_none_or(|b| b.live > 0 || buffer.blocks.len() == 1));
            }
        }
    }
}
