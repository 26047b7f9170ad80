//! A fixed-size CPU bitmask, like the kernel's cpumask.
//!
//! Fixed at [`crate::limits::CPUS`] bits so it is `Copy` and needs no
//! allocation; iteration is always in ascending CPU order (determinism).

use std::fmt;

const WORDS: usize = 16;
/// The number of CPUs a set can hold; equals the CPU limit.
pub const CAPACITY: usize = WORDS * 64;

#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct CpuSet {
    words: [u64; WORDS],
}

impl CpuSet {
    pub const fn new() -> Self {
        CpuSet { words: [0; WORDS] }
    }

    /// The set {0, 1, ..., n-1}.
    pub fn first_n(n: usize) -> Self {
        (0..n).collect()
    }

    pub fn single(cpu: usize) -> Self {
        let mut s = Self::new();
        s.insert(cpu);
        s
    }

    pub fn insert(&mut self, cpu: usize) {
        self.words[cpu / 64] |= 1 << (cpu % 64);
    }

    pub fn remove(&mut self, cpu: usize) {
        self.words[cpu / 64] &= !(1 << (cpu % 64));
    }

    pub fn contains(&self, cpu: usize) -> bool {
        cpu < CAPACITY && self.words[cpu / 64] & (1 << (cpu % 64)) != 0
    }

    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    pub fn union(&self, other: &CpuSet) -> CpuSet {
        let mut out = *self;
        for (a, b) in out.words.iter_mut().zip(other.words.iter()) {
            *a |= b;
        }
        out
    }

    pub fn intersection(&self, other: &CpuSet) -> CpuSet {
        let mut out = *self;
        for (a, b) in out.words.iter_mut().zip(other.words.iter()) {
            *a &= b;
        }
        out
    }

    pub fn is_subset(&self, other: &CpuSet) -> bool {
        self.intersection(other) == *self
    }

    pub fn first(&self) -> Option<usize> {
        self.first_from(0)
    }

    /// The first CPU at or after `cpu`.
    pub fn first_from(&self, cpu: usize) -> Option<usize> {
        let w = cpu / 64;
        if w >= WORDS {
            return None;
        }
        let head = self.words[w] & (u64::MAX << (cpu % 64));
        if head != 0 {
            return Some(w * 64 + head.trailing_zeros() as usize);
        }
        (w + 1..WORDS)
            .find(|&i| self.words[i] != 0)
            .map(|i| i * 64 + self.words[i].trailing_zeros() as usize)
    }

    /// How many CPUs of the set are below `cpu`.
    pub fn count_below(&self, cpu: usize) -> usize {
        let w = cpu.min(CAPACITY) / 64;
        let full: usize = self.words[..w]
            .iter()
            .map(|x| x.count_ones() as usize)
            .sum();
        let part = if w < WORDS {
            (self.words[w] & ((1u64 << (cpu % 64)) - 1)).count_ones() as usize
        } else {
            0
        };
        full + part
    }

    /// CPUs in ascending order.
    pub fn iter(&self) -> Cpus<'_> {
        // Which words hold CPUs, found once: most sets live in the first
        // word, and the walk then never looks at the other fifteen.
        let nonzero = (0..WORDS).fold(0u16, |m, i| m | (((self.words[i] != 0) as u16) << i));
        Cpus {
            words: &self.words,
            nonzero,
            word: 0,
            bits: 0,
        }
    }

    /// Linux's cpulist format: "0-3,8,10-11".
    pub fn to_list_string(&self) -> String {
        let cpus: Vec<usize> = self.iter().collect();
        let mut parts = Vec::new();
        let mut i = 0;
        while i < cpus.len() {
            let start = cpus[i];
            let mut end = start;
            while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
                i += 1;
                end = cpus[i];
            }
            parts.push(if start == end {
                start.to_string()
            } else {
                format!("{start}-{end}")
            });
            i += 1;
        }
        parts.join(",")
    }
}

/// The CPUs of a set in ascending order ([`CpuSet::iter`]).
pub struct Cpus<'a> {
    words: &'a [u64; WORDS],
    /// Bit i: word i holds CPUs not yet reached.
    nonzero: u16,
    /// The word `bits` came from.
    word: usize,
    /// The CPUs of `word` not yet returned.
    bits: u64,
}

impl Iterator for Cpus<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.bits == 0 {
            if self.nonzero == 0 {
                return None;
            }
            self.word = self.nonzero.trailing_zeros() as usize;
            self.nonzero &= self.nonzero - 1;
            self.bits = self.words[self.word];
        }
        let b = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(self.word * 64 + b)
    }
}

impl FromIterator<usize> for CpuSet {
    fn from_iter<I: IntoIterator<Item = usize>>(iter: I) -> Self {
        let mut s = CpuSet::new();
        for cpu in iter {
            s.insert(cpu);
        }
        s
    }
}

impl fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CpuSet({})", self.to_list_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_string_groups_ranges() {
        let s: CpuSet = [0, 1, 2, 3, 8, 10, 11, 1023].into_iter().collect();
        assert_eq!(s.to_list_string(), "0-3,8,10-11,1023");
        assert_eq!(s.len(), 8);
        assert!(s.contains(1023));
        assert!(!s.contains(4));
    }

    #[test]
    fn first_from_and_count_below_agree_with_iteration() {
        let s: CpuSet = [0, 3, 63, 64, 130, 1023].into_iter().collect();
        for cpu in 0..=CAPACITY {
            assert_eq!(s.first_from(cpu), s.iter().find(|&c| c >= cpu), "{cpu}");
            assert_eq!(s.count_below(cpu), s.iter().filter(|&c| c < cpu).count());
        }
    }

    #[test]
    fn set_algebra() {
        let a = CpuSet::first_n(4);
        let b: CpuSet = [2, 3, 4].into_iter().collect();
        assert_eq!(a.intersection(&b).to_list_string(), "2-3");
        assert_eq!(a.union(&b).to_list_string(), "0-4");
        assert!(CpuSet::single(2).is_subset(&a));
        assert!(!b.is_subset(&a));
    }
}
