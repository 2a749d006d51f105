//! Giving freed memory back to the system while the screen is busy.
//!
//! glibc's allocator keeps what Gantry frees in per-thread arenas, resident, for the next
//! allocation there. Following thousands of pods frees a lot in bursts (watch lists, streams
//! starting and yielding, batches of lines handed over): several MB that sit unused until some
//! later allocation of the right size comes along. `malloc_trim(0)` hands whole free pages back
//! (on Linux with `MADV_DONTNEED`), so resident memory follows what is held, not the worst burst.
//! It is called at most once a second, after a frame: an idle screen draws nothing and trims
//! nothing.

use std::time::Duration;

use tokio::time::Instant;

/// The least time between two trims: a trim walks every arena's free lists.
const INTERVAL: Duration = Duration::from_secs(1);

pub struct Trimmer {
    last: Instant,
}

impl Trimmer {
    pub fn new() -> Self {
        Self {
            last: Instant::now(),
        }
    }

    /// Trims if the last trim is at least `INTERVAL` old.
    pub fn after_frame(&mut self) {
        if self.last.elapsed() >= INTERVAL {
            trim();
            self.last = Instant::now();
        }
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    // SAFETY: malloc_trim has no preconditions; it only returns free pages to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Other allocators return memory on their own terms.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}
