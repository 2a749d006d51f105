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

use crate::sanitize::sgr::Run;

/// Bytes of text per block: many lines each, and any line the pane keeps fits in one.
const BLOCK_BYTES: usize = 64 * 1024;
/// `Slot::ts` of a line the server gave no time for.
const NO_TIME: i64 = i64::MIN;
/// In `Slot::pod`: the line has colours of its own, kept in `LineBuffer::styles`.
const STYLED: u32 = 1 << 31;

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
    /// Its colours, as the container set them (most lines have none).
    pub runs: &'a [Run],
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    ts: i64,
    /// Number of the block holding the text (wrapping; see `LineBuffer::first_block`).
    block: u32,
    /// With [`STYLED`] set when the line has runs.
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
    /// The colours of the few lines that have any, by line number, oldest first: a plain line
    /// costs nothing for them.
    styles: VecDeque<(u64, Box<[Run]>)>,
    /// The number of `slots[0]`: lines ever dropped from the front.
    dropped: u64,
    /// The last block freed, emptied, for the next one: a full buffer frees a block for each
    /// it fills, and the allocator need not hand back (and fault in again) the same pages.
    spare: Option<String>,
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
        self.styles.clear();
        self.dropped = 0;
        self.spare = None;
    }

    /// Room for `lines` without growing (the bookkeeping only: text blocks come as needed).
    pub fn reserve(&mut self, lines: usize) {
        self.slots.reserve(lines.saturating_sub(self.slots.len()));
    }

    pub fn get(&self, index: usize) -> Option<Line<'_>> {
        self.slots.get(index).map(|slot| self.styled(index, slot))
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Line<'_>> + ExactSizeIterator {
        self.slots
            .iter()
            .enumerate()
            .map(|(index, slot)| self.styled(index, slot))
    }

    fn styled(&self, index: usize, slot: &Slot) -> Line<'_> {
        let mut line = self.line(slot);
        if slot.pod & STYLED != 0 {
            line.runs = self.runs(index);
        }
        line
    }

    /// Adds a line at the end, with its colours (runs within `text`).
    pub fn push_back(&mut self, pod: u32, ts: Option<i64>, text: &str, runs: &[Run]) {
        let (block, start) = self.store(text);
        let runs = within(runs, text.len());
        if !runs.is_empty() {
            let number = self.dropped + self.slots.len() as u64;
            self.styles.push_back((number, runs.into()));
        }
        self.slots.push_back(Slot {
            ts: ts.unwrap_or(NO_TIME),
            block,
            pod: (pod & !STYLED) | if runs.is_empty() { 0 } else { STYLED },
            start,
            len: text.len() as u32,
        });
    }

    /// Drops the oldest lines until at most `keep` are held.
    pub fn keep_newest(&mut self, keep: usize) {
        while self.slots.len() > keep {
            if let Some(slot) = self.slots.pop_front() {
                self.release(slot.block);
                self.dropped += 1;
            }
        }
        while self.styles.front().is_some_and(|(n, _)| *n < self.dropped) {
            self.styles.pop_front();
        }
        self.free_front_blocks();
    }

    /// Appends `piece` to line `index`, with its colours (None: no such line).
    pub fn extend(&mut self, index: usize, piece: &str, runs: &[Run]) -> Option<()> {
        let slot = *self.slots.get(index)?;
        self.extend_runs(index, slot.len, within(runs, piece.len()));
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

    /// Adds a grown line's new runs after its own (the piece's offsets moved by `len`, the
    /// line's length before).
    fn extend_runs(&mut self, index: usize, len: u32, runs: &[Run]) {
        if runs.is_empty() {
            return;
        }
        let shifted = runs.iter().map(|r| Run {
            start: r.start.saturating_add(len),
            ink: r.ink,
        });
        let number = self.dropped + index as u64;
        match self.styles.binary_search_by_key(&number, |(n, _)| *n) {
            Ok(at) => {
                let (_, held) = &mut self.styles[at];
                *held = held.iter().copied().chain(shifted).collect();
            }
            Err(at) => {
                self.styles.insert(at, (number, shifted.collect()));
                if let Some(slot) = self.slots.get_mut(index) {
                    slot.pod |= STYLED;
                }
            }
        }
    }

    fn runs(&self, index: usize) -> &[Run] {
        let number = self.dropped + index as u64;
        match self.styles.binary_search_by_key(&number, |(n, _)| *n) {
            Ok(at) => &self.styles[at].1,
            Err(_) => &[],
        }
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
            pod: slot.pod & !STYLED,
            ts: (slot.ts != NO_TIME).then_some(slot.ts),
            text,
            runs: &[],
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
            let text = match self.spare.take() {
                Some(spare) if spare.capacity() >= text.len() => spare,
                _ => String::with_capacity(BLOCK_BYTES.max(text.len())),
            };
            self.blocks.push_back(Block { text, live: 0 });
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
            if let Some(mut freed) = self.blocks.pop_front().map(|b| b.text)
                && freed.capacity() == BLOCK_BYTES
            {
                freed.clear();
                self.spare = Some(freed);
            }
            self.first_block = self.first_block.wrapping_add(1);
        }
    }
}

/// The runs that start inside a text of `len` bytes (a cut line loses the rest).
fn within(runs: &[Run], len: usize) -> &[Run] {
    let keep = runs.partition_point(|r| (r.start as usize) < len);
    &runs[..keep]
}

#[cfg(test)]
#[path = "log_lines_tests.rs"]
mod tests;
