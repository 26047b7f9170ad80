//! Address spaces as the context switch touches them. A CPU switching from
//! a task to idle keeps the task's mm loaded (lazy TLB) and takes a
//! reference on it (context_switch's mmgrab_lazy_tlb, an atomic on the
//! mm's mm_count line); its next switch to a task drops that reference
//! (finish_task_switch's mmdrop_lazy_tlb), the same line again. Every era
//! does this (2.6.2x with atomic_inc and mmdrop). A process's own tasks
//! keep the line in their CPU's cache; threads of one process sleeping
//! and waking on two CPUs pass it between them on every idle round.

/// Dense address-space ids for the tasks, and the CPU that last wrote each
/// one's mm_count line.
#[derive(Debug, Default)]
pub(super) struct AddressSpaces {
    /// The workload's grouped processes, by process id, and their mm (few:
    /// looked up linearly, once per task created).
    grouped: Vec<(u32, u32)>,
    /// Per mm, the CPU whose cache holds its mm_count line.
    count_line: Vec<Option<u32>>,
}

impl AddressSpaces {
    /// The mm of a new task: its workload process's (created with the
    /// first of them), or one of its own.
    pub fn mm_for(&mut self, process: Option<u32>) -> u32 {
        if let Some(p) = process {
            if let Some(&(_, mm)) = self.grouped.iter().find(|(q, _)| *q == p) {
                return mm;
            }
        }
        let mm = self.count_line.len() as u32;
        self.count_line.push(None);
        if let Some(p) = process {
            self.grouped.push((p, mm));
        }
        mm
    }

    /// `cpu` writes `mm`'s mm_count line; returns the CPU it came from
    /// when another one held it.
    #[inline]
    pub fn write_count(&mut self, mm: u32, cpu: usize) -> Option<usize> {
        let line = &mut self.count_line[mm as usize];
        let from = line.replace(cpu as u32);
        from.filter(|&f| f as usize != cpu).map(|f| f as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_tasks_share_an_mm_and_solo_tasks_get_their_own() {
        let mut mms = AddressSpaces::default();
        let a = mms.mm_for(Some(7));
        let solo = mms.mm_for(None);
        let b = mms.mm_for(Some(7));
        let other = mms.mm_for(Some(8));
        assert_eq!(a, b);
        assert_ne!(a, solo);
        assert_ne!(a, other);
        assert_ne!(solo, mms.mm_for(None));
    }

    #[test]
    fn the_count_line_moves_only_between_cpus() {
        let mut mms = AddressSpaces::default();
        let mm = mms.mm_for(None);
        assert_eq!(mms.write_count(mm, 0), None, "no CPU had it");
        assert_eq!(mms.write_count(mm, 0), None, "still in cpu0's cache");
        assert_eq!(mms.write_count(mm, 1), Some(0));
        assert_eq!(mms.write_count(mm, 0), Some(1));
    }
}
