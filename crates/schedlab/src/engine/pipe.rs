//! A pipe's pages: fs/pipe.c keeps a ring of page-sized pipe_buffer
//! slots, and which writes fit and which reads wake a writer depend on
//! the slots, not on the bytes alone.

use std::collections::VecDeque;

/// One pipe_buffer's page.
pub(crate) const PIPE_PAGE: u64 = 4096;

#[derive(Debug, Clone)]
pub(crate) struct PipePages {
    /// Bytes left to read in each occupied slot, oldest first.
    lens: VecDeque<u64>,
    /// Where the newest slot's data ends in its page: a write merges into
    /// it while that leaves room (pipe_write's CAN_MERGE path).
    tail_end: u64,
    /// The ring's size (pipe->max_usage): 16 for a default 64 KiB pipe.
    slots: usize,
}

/// A pipe's size for a requested `capacity`, as round_pipe_size makes it
/// (F_SETPIPE_SZ): at least a page, and a power of two.
pub(crate) fn round_pipe_size(capacity: u64) -> u64 {
    capacity.max(PIPE_PAGE).next_power_of_two()
}

impl PipePages {
    /// A pipe of `size` bytes ([`round_pipe_size`]): one slot per page.
    pub fn new(size: u64) -> Self {
        let slots = (size / PIPE_PAGE).max(1) as usize;
        PipePages {
            lens: VecDeque::with_capacity(slots),
            tail_end: 0,
            slots,
        }
    }

    /// Every slot in use (pipe_full).
    pub fn full(&self) -> bool {
        self.lens.len() >= self.slots
    }

    /// Whether pipe_write finds room for `bytes` now: the part past whole
    /// pages merges into the newest slot if it fits there, and the rest
    /// takes free slots, a page each.
    pub fn fits(&self, bytes: u64) -> bool {
        let rest = bytes - self.merged(bytes);
        self.lens.len() + rest.div_ceil(PIPE_PAGE) as usize <= self.slots
    }

    fn merged(&self, bytes: u64) -> u64 {
        let part = bytes % PIPE_PAGE;
        if part > 0 && !self.lens.is_empty() && self.tail_end + part <= PIPE_PAGE {
            part
        } else {
            0
        }
    }

    /// Queues a write [`Self::fits`] allowed.
    pub fn write(&mut self, bytes: u64) {
        let merged = self.merged(bytes);
        if let Some(newest) = self.lens.back_mut() {
            *newest += merged;
            self.tail_end += merged;
        }
        let mut rest = bytes - merged;
        while rest > 0 {
            let n = rest.min(PIPE_PAGE);
            self.lens.push_back(n);
            self.tail_end = n;
            rest -= n;
        }
    }

    /// Takes `bytes` from the oldest slots; returns how many it emptied
    /// and released.
    pub fn read(&mut self, mut bytes: u64) -> usize {
        let mut freed = 0;
        while bytes > 0 {
            let Some(oldest) = self.lens.front_mut() else {
                break;
            };
            let take = bytes.min(*oldest);
            *oldest -= take;
            bytes -= take;
            if *oldest == 0 {
                self.lens.pop_front();
                freed += 1;
            }
        }
        freed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pipe_write (v4.15 and v6.x alike): 100-byte writes merge into one
    /// page until the next would cross it (40 to a page, 4000 bytes), so
    /// a 64 KiB pipe holds 16 x 40 of them, not 655.
    #[test]
    fn pipe_write_merges_small_writes_into_the_newest_page() {
        let mut p = PipePages::new(65_536);
        let mut n = 0;
        while p.fits(100) {
            p.write(100);
            n += 1;
        }
        assert_eq!(n, 640);
        assert!(p.full());
        // A read of one message frees no page, so the pipe stays full;
        // 40 reads empty the oldest page and release it.
        assert_eq!(p.read(100), 0);
        assert!(!p.fits(100));
        let freed: usize = (0..39).map(|_| p.read(100)).sum();
        assert_eq!(freed, 1);
        assert!(!p.full() && p.fits(100));
    }

    #[test]
    fn round_pipe_size_gives_at_least_a_page_in_a_power_of_two() {
        assert_eq!(round_pipe_size(1), 4096);
        assert_eq!(round_pipe_size(65_536), 65_536);
        assert_eq!(round_pipe_size(100_000), 131_072);
    }

    #[test]
    fn a_write_past_a_page_takes_whole_pages_after_its_merged_part() {
        let mut p = PipePages::new(4 * PIPE_PAGE);
        p.write(1000);
        // 5096 = 1000 merged into the first page + one new page.
        assert!(p.fits(5096));
        p.write(5096);
        assert_eq!(p.lens, [2000, 4096]);
        // The newest page is full: 1 byte needs a slot, and 2 are left.
        assert!(p.fits(2 * PIPE_PAGE));
        assert!(!p.fits(2 * PIPE_PAGE + 1));
        assert_eq!(p.read(6000), 1);
        assert_eq!(p.lens, [96]);
    }
}
