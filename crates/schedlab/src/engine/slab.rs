//! SLUB as the 6.x kernels run it (mm/slub.c of 6.8 to 6.18), for the
//! skbs of AF_UNIX messages: each CPU allocates from its active slab and
//! keeps a short list of partial slabs; what overflows that list goes to
//! its node's partial list, from which any CPU of the node refills. With
//! two CPUs messaging at once slabs pass between them, and three kinds of
//! line then move between cores: a recycled object's lines (the CPU that
//! freed it wrote them), a slab's own line (its freelist and counters,
//! written by every CPU that frees into it or takes it), and the node
//! list's lock. The model reports each move (from which CPU, how many
//! lines), which the engine prices (`cost::CostModel::slab_moved`), and
//! the waits for a node list's lock another CPU holds.

use std::collections::VecDeque;

use crate::cost::Moved;
use crate::topology::{SkbSlabs, SlabCache};

/// An allocation or a free as it goes: the time of what it takes from
/// other cores (each move priced by the engine's `price`) and of its waits
/// for a node list's lock, from `now`, when the engine starts it.
pub(crate) struct SlabOp<'a> {
    now: u64,
    /// Time since `now`, ns.
    pub elapsed: u64,
    /// Of it, waiting for a node list's lock held by another CPU.
    pub lock_wait: u64,
    price: &'a mut dyn FnMut(u32, Moved) -> u64,
}

impl<'a> SlabOp<'a> {
    pub fn new(now: u64, price: &'a mut dyn FnMut(u32, Moved) -> u64) -> Self {
        SlabOp {
            now,
            elapsed: 0,
            lock_wait: 0,
            price,
        }
    }

    fn moved(&mut self, from: u32, what: Moved) {
        self.elapsed += (self.price)(from, what);
    }

    fn at(&self) -> u64 {
        self.now + self.elapsed
    }
}

/// No CPU: an object never freed, a line no CPU has written yet.
const NO_CPU: u32 = u32::MAX;

/// Where a slab is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// A CPU's active slab (frozen: frees by other CPUs go to its own
    /// freelist, which that CPU takes when its per-CPU freelist runs out).
    Active(u32),
    /// On a CPU's partial list.
    CpuPartial(u32),
    /// On its node's partial list.
    NodePartial,
    /// Every object allocated, on no list (SLUB keeps no full list).
    Full,
    /// Given back to the page allocator; its id is free for a new slab.
    Discarded,
}

#[derive(Debug, Clone)]
struct Slab {
    node: usize,
    place: Place,
    /// The slab's own freelist: objects freed into it while it was not the
    /// freeing CPU's active slab.
    free: Vec<u32>,
    /// Objects allocated or on a CPU's freelist (SLUB's `inuse`).
    inuse: u32,
    /// The CPU that last wrote the slab's own line.
    line_cpu: u32,
}

#[derive(Debug, Clone, Default)]
struct CpuSlabs {
    active: Option<u32>,
    /// The active slab's objects freed on this CPU (the lockless freelist).
    freelist: Vec<u32>,
    /// Partial slabs, newest last.
    partial: Vec<u32>,
}

#[derive(Debug, Clone)]
struct NodeSlabs {
    partial: VecDeque<u32>,
    /// The CPU that last took the list's lock, and when it let it go.
    lock_cpu: u32,
    lock_free_at: u64,
}

/// One cache's slabs, objects and lists.
#[derive(Debug, Clone)]
pub(crate) struct SlabCacheModel {
    objs_per_slab: u32,
    /// slub_set_cpu_partial: `cpu_partial` objects, counted as slabs half full.
    cpu_partial_slabs: usize,
    min_partial: usize,
    slabs: Vec<Slab>,
    discarded: Vec<u32>,
    /// Per object (slab x objs_per_slab + index): the CPU that freed it last.
    freed_on: Vec<u32>,
    cpus: Vec<CpuSlabs>,
    nodes: Vec<NodeSlabs>,
    /// Objects allocated and not freed.
    live: u64,
}

impl SlabCacheModel {
    pub fn new(spec: &SlabCache, ncpus: usize, nnodes: usize) -> Self {
        let objs = spec.objs_per_slab.max(1);
        SlabCacheModel {
            objs_per_slab: objs,
            cpu_partial_slabs: (spec.cpu_partial as usize * 2).div_ceil(objs as usize),
            min_partial: spec.min_partial as usize,
            slabs: Vec::new(),
            discarded: Vec::new(),
            freed_on: Vec::new(),
            cpus: vec![CpuSlabs::default(); ncpus],
            nodes: vec![
                NodeSlabs {
                    partial: VecDeque::new(),
                    lock_cpu: NO_CPU,
                    lock_free_at: 0,
                };
                nnodes.max(1)
            ],
            live: 0,
        }
    }

    pub fn live(&self) -> u64 {
        self.live
    }

    /// Allocates an object on `cpu` (of `node`); `obj_lines` of it are
    /// written by the allocation and its user. `op` gets the time of each
    /// line taken from another CPU's cache and of any wait for a node
    /// list's lock. ___slab_alloc:
    /// the per-CPU freelist, then the active slab's own freelist
    /// (get_freelist), then the CPU's partial list, then the node's
    /// (get_partial_node, which also refills the CPU's list up to half its
    /// limit), then a new slab.
    pub fn alloc(&mut self, cpu: usize, node: usize, obj_lines: u32, op: &mut SlabOp) -> u32 {
        let me = cpu as u32;
        loop {
            if let Some(obj) = self.cpus[cpu].freelist.pop() {
                let from = self.freed_on[obj as usize];
                if from != NO_CPU && from != me {
                    op.moved(from, Moved::Object(obj_lines));
                }
                self.live += 1;
                return obj;
            }
            if let Some(active) = self.cpus[cpu].active.take() {
                if !self.slabs[active as usize].free.is_empty() {
                    self.freeze(active, cpu, op);
                    continue;
                }
                // Exhausted: the CPU lets it go, full, onto no list.
                self.slabs[active as usize].place = Place::Full;
            }
            if let Some(partial) = self.cpus[cpu].partial.pop() {
                self.freeze(partial, cpu, op);
                continue;
            }
            if !self.nodes[node].partial.is_empty() {
                self.lock(node, me, op);
                let first = self.node_pop_front(node, me, op);
                self.touch(first, me, op);
                if self.cpu_partial_slabs > 0 {
                    let mut taken = 0;
                    while !self.nodes[node].partial.is_empty() {
                        let more = self.node_pop_front(node, me, op);
                        self.touch(more, me, op);
                        self.slabs[more as usize].place = Place::CpuPartial(me);
                        self.cpus[cpu].partial.push(more);
                        taken += 1;
                        if taken > self.cpu_partial_slabs / 2 {
                            break;
                        }
                    }
                }
                self.unlock(node, op);
                self.freeze(first, cpu, op);
                continue;
            }
            let fresh = self.new_slab(node, me);
            self.freeze(fresh, cpu, op);
        }
    }

    /// Frees `obj` on `cpu`, its time in `op` as [`Self::alloc`]'s.
    /// do_slab_free's fast path into the CPU's active slab, else
    /// __slab_free: the object joins its slab's freelist (a write of the
    /// slab's line); a slab that was full goes onto this CPU's partial
    /// list (put_cpu_partial), and one on its node's list that empties is
    /// given back while the node keeps `min_partial` others.
    pub fn free(&mut self, cpu: usize, obj: u32, op: &mut SlabOp) {
        let me = cpu as u32;
        let slab = obj / self.objs_per_slab;
        self.freed_on[obj as usize] = me;
        self.live -= 1;
        if self.cpus[cpu].active == Some(slab) {
            self.cpus[cpu].freelist.push(obj);
            return;
        }
        self.touch(slab, me, op);
        let s = &mut self.slabs[slab as usize];
        s.free.push(obj);
        s.inuse -= 1;
        match s.place {
            Place::Active(_) | Place::CpuPartial(_) => {}
            Place::Full => self.put_cpu_partial(slab, cpu, op),
            Place::NodePartial => {
                if s.inuse == 0 {
                    let node = s.node;
                    self.lock(node, me, op);
                    if self.nodes[node].partial.len() >= self.min_partial {
                        self.node_remove(node, slab, me, op);
                        self.discard(slab);
                    }
                    self.unlock(node, op);
                }
            }
            Place::Discarded => unreachable!("an object of a discarded slab was live"),
        }
    }

    /// put_cpu_partial with drain: a full list first goes to the node
    /// lists (__put_partials, newest first, each to its node's tail; an
    /// empty slab is given back while the node keeps `min_partial`).
    fn put_cpu_partial(&mut self, slab: u32, cpu: usize, op: &mut SlabOp) {
        let me = cpu as u32;
        if !self.cpus[cpu].partial.is_empty()
            && self.cpus[cpu].partial.len() >= self.cpu_partial_slabs
        {
            let spill = std::mem::take(&mut self.cpus[cpu].partial);
            let mut locked = None;
            for &s in spill.iter().rev() {
                let node = self.slabs[s as usize].node;
                if locked != Some(node) {
                    if let Some(held) = locked {
                        self.unlock(held, op);
                    }
                    self.lock(node, me, op);
                    locked = Some(node);
                }
                self.touch(s, me, op);
                if self.slabs[s as usize].inuse == 0
                    && self.nodes[node].partial.len() >= self.min_partial
                {
                    self.discard(s);
                } else {
                    self.slabs[s as usize].place = Place::NodePartial;
                    self.node_push_back(node, s, me, op);
                }
            }
            if let Some(held) = locked {
                self.unlock(held, op);
            }
            // Keep the list's allocation for the next round.
            let mut spill = spill;
            spill.clear();
            self.cpus[cpu].partial = spill;
        }
        self.slabs[slab as usize].place = Place::CpuPartial(me);
        self.cpus[cpu].partial.push(slab);
    }

    /// list_del of the node list's first slab: the next one's back pointer
    /// (its line) now points at the list head. Under the list's lock.
    fn node_pop_front(&mut self, node: usize, cpu: u32, op: &mut SlabOp) -> u32 {
        let first = self.nodes[node]
            .partial
            .pop_front()
            .expect("a slab on the list");
        if let Some(&next) = self.nodes[node].partial.front() {
            self.touch(next, cpu, op);
        }
        first
    }

    /// list_add_tail: the old tail's forward pointer (its line) now points
    /// at `slab`. Under the list's lock.
    fn node_push_back(&mut self, node: usize, slab: u32, cpu: u32, op: &mut SlabOp) {
        if let Some(&tail) = self.nodes[node].partial.back() {
            self.touch(tail, cpu, op);
        }
        self.nodes[node].partial.push_back(slab);
    }

    /// list_del of `slab` wherever it is: both neighbours' lines. Under the
    /// list's lock.
    fn node_remove(&mut self, node: usize, slab: u32, cpu: u32, op: &mut SlabOp) {
        let list = &self.nodes[node].partial;
        let Some(at) = list.iter().position(|&x| x == slab) else {
            return;
        };
        let before = at.checked_sub(1).map(|i| list[i]);
        let after = list.get(at + 1).copied();
        for n in before.into_iter().chain(after) {
            self.touch(n, cpu, op);
        }
        self.nodes[node].partial.remove(at);
    }

    /// The slab becomes `cpu`'s active one, its own freelist the CPU's.
    fn freeze(&mut self, slab: u32, cpu: usize, op: &mut SlabOp) {
        self.touch(slab, cpu as u32, op);
        let s = &mut self.slabs[slab as usize];
        s.place = Place::Active(cpu as u32);
        s.inuse += s.free.len() as u32;
        let c = &mut self.cpus[cpu];
        debug_assert!(c.freelist.is_empty());
        std::mem::swap(&mut c.freelist, &mut s.free);
        c.active = Some(slab);
    }

    fn new_slab(&mut self, node: usize, cpu: u32) -> u32 {
        let objs = self.objs_per_slab;
        let id = match self.discarded.pop() {
            Some(id) => id,
            None => {
                self.slabs.push(Slab {
                    node,
                    place: Place::Discarded,
                    free: Vec::with_capacity(objs as usize),
                    inuse: 0,
                    line_cpu: NO_CPU,
                });
                self.freed_on.extend((0..objs).map(|_| NO_CPU));
                (self.slabs.len() - 1) as u32
            }
        };
        let first = id * objs;
        let s = &mut self.slabs[id as usize];
        s.node = node;
        s.place = Place::Full;
        s.inuse = 0;
        s.line_cpu = cpu;
        // Fresh pages: no CPU wrote them. Popped from the end, so the
        // first object goes first.
        s.free.clear();
        s.free.extend((first..first + objs).rev());
        for f in &mut self.freed_on[first as usize..(first + objs) as usize] {
            *f = NO_CPU;
        }
        id
    }

    fn discard(&mut self, slab: u32) {
        let s = &mut self.slabs[slab as usize];
        s.place = Place::Discarded;
        s.free.clear();
        self.discarded.push(slab);
    }

    /// `cpu` writes the slab's own line.
    fn touch(&mut self, slab: u32, cpu: u32, op: &mut SlabOp) {
        let line = &mut self.slabs[slab as usize].line_cpu;
        if *line != NO_CPU && *line != cpu {
            op.moved(*line, Moved::Line);
        }
        *line = cpu;
    }

    /// `cpu` takes the node list's lock: it spins while another CPU holds
    /// it (spin_lock_irqsave), then takes the lock's line.
    fn lock(&mut self, node: usize, cpu: u32, op: &mut SlabOp) {
        let n = &mut self.nodes[node];
        let (holder, free_at) = (n.lock_cpu, n.lock_free_at);
        n.lock_cpu = cpu;
        let at = op.at();
        if free_at > at {
            op.lock_wait += free_at - at;
            op.elapsed += free_at - at;
        }
        if holder != NO_CPU && holder != cpu {
            op.moved(holder, Moved::Line);
        }
    }

    /// `cpu` lets the node list's lock go: whoever takes it next waits
    /// until now.
    fn unlock(&mut self, node: usize, op: &SlabOp) {
        self.nodes[node].lock_free_at = op.at();
    }

    /// Every object is in one place, and `live` counts those allocated.
    pub fn check(&self) -> Result<(), String> {
        let mut allocated = 0u64;
        for (id, s) in self.slabs.iter().enumerate() {
            let on_cpu = match s.place {
                Place::Discarded => continue,
                Place::Active(c) => self.cpus[c as usize].freelist.len() as u32,
                _ => 0,
            };
            let held = s.free.len() as u32 + s.inuse;
            if held != self.objs_per_slab {
                return Err(format!(
                    "slab {id} ({:?}) holds {held} objects of {}",
                    s.place, self.objs_per_slab
                ));
            }
            allocated += u64::from(s.inuse - on_cpu);
        }
        if allocated != self.live {
            return Err(format!(
                "{allocated} objects are allocated in the slabs, {} counted live",
                self.live
            ));
        }
        Ok(())
    }
}

/// The skb caches of [`SkbSlabs`]: an AF_UNIX message's sk_buff from the
/// head cache and its linear data from the smallest kmalloc cache that
/// holds it.
#[derive(Debug, Clone)]
pub(crate) struct SkbAllocator {
    head: SlabCacheModel,
    head_lines: u32,
    data: Vec<(u32, SlabCacheModel)>,
}

/// An skb's objects: its head, and its data's cache and object (u32::MAX
/// when no listed cache holds the data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SkbObjects {
    pub head: u32,
    pub data_cache: u32,
    pub data: u32,
}

/// sizeof(struct skb_shared_info) on x86-64, which follows an skb's
/// linear data in its kmalloc'ed buffer (SKB_DATA_ALIGN'ed: 320).
const SKB_SHINFO_BYTES: u64 = 320;
/// unix_stream_sendmsg keeps at most SKB_MAX_HEAD(0) bytes linear (a page
/// less skb_shared_info); the rest go to page fragments.
const SKB_MAX_LINEAR: u64 = 4096 - SKB_SHINFO_BYTES;

impl SkbAllocator {
    pub fn new(spec: &SkbSlabs, ncpus: usize, nnodes: usize) -> Self {
        SkbAllocator {
            head: SlabCacheModel::new(&spec.head, ncpus, nnodes),
            // __alloc_skb clears the sk_buff up to its tail field and
            // fills the rest: every line of the object.
            head_lines: spec.head.object_size.div_ceil(64),
            data: spec
                .data
                .iter()
                .map(|c| (c.object_size, SlabCacheModel::new(c, ncpus, nnodes)))
                .collect(),
        }
    }

    /// Allocates a `bytes`-byte message's skb on `cpu`.
    pub fn alloc(&mut self, cpu: usize, node: usize, bytes: u64, op: &mut SlabOp) -> SkbObjects {
        let head = self.head.alloc(cpu, node, self.head_lines, op);
        let linear = bytes.min(SKB_MAX_LINEAR);
        let size = linear.div_ceil(64) * 64 + SKB_SHINFO_BYTES;
        let fits = self
            .data
            .iter()
            .position(|&(obj, _)| u64::from(obj) >= size);
        let Some(i) = fits else {
            return SkbObjects {
                head,
                data_cache: u32::MAX,
                data: u32::MAX,
            };
        };
        // The data's lines and skb_shared_info's first (dataref,
        // nr_frags), which __alloc_skb initialises.
        let lines = linear.div_ceil(64) as u32 + 1;
        let data = self.data[i].1.alloc(cpu, node, lines, op);
        SkbObjects {
            head,
            data_cache: i as u32,
            data,
        }
    }

    /// Frees a consumed skb on `cpu`.
    pub fn free(&mut self, cpu: usize, skb: SkbObjects, op: &mut SlabOp) {
        self.head.free(cpu, skb.head, op);
        if let Some((_, cache)) = self.data.get_mut(skb.data_cache as usize) {
            cache.free(cpu, skb.data, op);
        }
    }

    /// Live skbs (heads allocated and not freed).
    pub fn live(&self) -> u64 {
        self.head.live()
    }

    pub fn check(&self) -> Result<(), String> {
        self.head.check()?;
        for (_, c) in &self.data {
            c.check()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(cpu_partial: u32) -> SlabCacheModel {
        let spec = SlabCache {
            name: "test".into(),
            object_size: 256,
            objs_per_slab: 4,
            cpu_partial,
            min_partial: 1,
        };
        SlabCacheModel::new(&spec, 2, 1)
    }

    /// An operation that must move nothing.
    fn none() -> SlabOp<'static> {
        SlabOp::new(
            0,
            Box::leak(Box::new(|from, what| -> u64 {
                panic!("{what:?} moved from CPU {from}")
            })),
        )
    }

    /// slub_set_cpu_partial (6.x): the per-CPU list holds
    /// DIV_ROUND_UP(cpu_partial * 2, objs_per_slab) slabs.
    #[test]
    fn the_cpu_partial_limit_counts_slabs_half_full() {
        assert_eq!(cache(6).cpu_partial_slabs, 3);
        assert_eq!(cache(0).cpu_partial_slabs, 0);
    }

    /// One CPU allocating and freeing its own objects moves no line: its
    /// slabs, their lines and the node's lock stay in its cache.
    #[test]
    fn one_cpu_alone_moves_nothing() {
        let mut c = cache(2);
        let mut live = Vec::new();
        for round in 0..50 {
            for _ in 0..(round % 7 + 3) {
                live.push(c.alloc(0, 0, 4, &mut none()));
            }
            while live.len() > 2 {
                let o = live.remove(0);
                c.free(0, o, &mut none());
            }
            c.check().unwrap();
        }
    }

    /// ___slab_alloc (6.x) takes the per-CPU freelist last in, first out:
    /// an object freed on another CPU comes back with its lines there.
    #[test]
    fn an_object_freed_on_another_cpu_brings_its_lines() {
        let mut c = cache(2);
        let a = c.alloc(0, 0, 4, &mut none());
        let b = c.alloc(0, 0, 4, &mut none());
        // CPU 1 frees b into CPU 0's active slab (a remote free): the
        // slab's line goes to CPU 1.
        let mut moves = Vec::new();
        c.free(
            1,
            b,
            &mut SlabOp::new(0, &mut |f, l| {
                moves.push((f, l));
                0
            }),
        );
        assert_eq!(moves, vec![(0, Moved::Line)]);
        // CPU 0 uses up its freelist, then takes the slab's own freelist
        // (the line back from CPU 1) and reuses b: its 4 lines from CPU 1.
        let mut moves = Vec::new();
        let mut got = Vec::new();
        for _ in 0..3 {
            got.push(c.alloc(
                0,
                0,
                4,
                &mut SlabOp::new(0, &mut |f, l| {
                    moves.push((f, l));
                    0
                }),
            ));
        }
        assert!(got.contains(&b), "{got:?}");
        assert_eq!(moves, vec![(1, Moved::Line), (1, Moved::Object(4))]);
        c.free(0, a, &mut none());
        c.check().unwrap();
    }

    /// put_cpu_partial (6.x): a full slab that gets a free goes onto the
    /// freeing CPU's list; when the list is at its limit the whole list
    /// goes to the node (__put_partials) under the node's lock, and
    /// get_partial_node hands those slabs to the next CPU that runs dry.
    #[test]
    fn a_full_cpu_list_spills_to_the_node_and_another_cpu_takes_it() {
        let mut c = cache(2); // one slab a CPU
                              // CPU 0 fills three slabs (4 objects each) and lets them go full.
        let objs: Vec<u32> = (0..12).map(|_| c.alloc(0, 0, 4, &mut none())).collect();
        // Freeing one object of the first slab puts it on CPU 0's list;
        // one of the second finds the list full: the first goes to the node.
        c.free(0, objs[0], &mut none());
        assert_eq!(c.cpus[0].partial, vec![0]);
        c.free(0, objs[4], &mut none());
        assert_eq!(c.cpus[0].partial, vec![1]);
        assert_eq!(c.nodes[0].partial, VecDeque::from([0]));
        // CPU 1 has no slab: it takes slab 0 from the node (the lock and
        // the slab's line from CPU 0), and objs[0]'s 4 lines.
        let mut moves = Vec::new();
        let got = c.alloc(
            1,
            0,
            4,
            &mut SlabOp::new(0, &mut |f, l| {
                moves.push((f, l));
                0
            }),
        );
        assert_eq!(got, objs[0]);
        assert_eq!(
            moves,
            vec![(0, Moved::Line), (0, Moved::Line), (0, Moved::Object(4))]
        );
        c.check().unwrap();
    }

    /// __slab_free (6.x): a slab on the node's list that empties is given
    /// back to the page allocator while the node keeps `min_partial`
    /// slabs; with fewer it stays.
    #[test]
    fn an_empty_node_slab_is_given_back_only_above_min_partial() {
        let mut c = cache(0); // every partial slab spills at once
                              // Slabs 0, 1, 2 full, slab 3 CPU 0's active one.
        let objs: Vec<u32> = (0..13).map(|_| c.alloc(0, 0, 4, &mut none())).collect();
        // Slabs 0, 1, 2 get a free each: with a limit of 0 each one pushes
        // the one before to the node.
        for &o in &[objs[0], objs[4], objs[8]] {
            c.free(0, o, &mut none());
        }
        assert_eq!(c.nodes[0].partial, VecDeque::from([0, 1]));
        assert_eq!(c.cpus[0].partial, vec![2]);
        // Emptying slab 0 (the node holds 2, at least min_partial 1): given back.
        for &o in &objs[1..4] {
            c.free(0, o, &mut none());
        }
        assert_eq!(c.nodes[0].partial, VecDeque::from([1]));
        assert_eq!(c.discarded, vec![0]);
        // Emptying slab 1 (the node holds 1, still min_partial): given back.
        for &o in &objs[5..8] {
            c.free(0, o, &mut none());
        }
        assert!(c.nodes[0].partial.is_empty());
        c.check().unwrap();
        // A new slab reuses a given-back id, its objects fresh.
        let again = c.alloc(1, 0, 4, &mut none());
        assert!(again < 8, "{again}");
        c.free(1, again, &mut none());
        c.check().unwrap();
    }

    /// __slab_free (6.x): a node holding fewer than `min_partial` partial
    /// slabs keeps one that empties.
    #[test]
    fn a_node_below_min_partial_keeps_an_empty_slab() {
        let spec = SlabCache {
            name: "test".into(),
            object_size: 256,
            objs_per_slab: 4,
            cpu_partial: 0,
            min_partial: 5,
        };
        let mut c = SlabCacheModel::new(&spec, 2, 1);
        let objs: Vec<u32> = (0..9).map(|_| c.alloc(0, 0, 4, &mut none())).collect();
        c.free(0, objs[0], &mut none());
        c.free(0, objs[4], &mut none()); // slab 0 to the node
        for &o in &objs[1..4] {
            c.free(0, o, &mut none());
        }
        assert_eq!(c.nodes[0].partial, VecDeque::from([0]));
        assert!(c.discarded.is_empty());
        c.check().unwrap();
    }

    /// spin_lock on a node list held by another CPU waits until it is
    /// let go, then takes the lock's line; the holder's own next take
    /// waits for nothing.
    #[test]
    fn a_node_lock_held_by_another_cpu_is_waited_for() {
        let mut c = cache(2);
        let mut price = |_, _| 60;
        let mut holder = SlabOp::new(1_000, &mut price);
        c.lock(0, 0, &mut holder);
        holder.elapsed += 500; // the work under the lock
        c.unlock(0, &holder);
        let mut price = |_, _| 60;
        let mut waiter = SlabOp::new(1_200, &mut price);
        c.lock(0, 1, &mut waiter);
        assert_eq!(waiter.lock_wait, 300);
        assert_eq!(waiter.elapsed, 300 + 60);
        c.unlock(0, &waiter);
        let mut price = |_, _| 60;
        let mut later = SlabOp::new(5_000, &mut price);
        c.lock(0, 1, &mut later);
        assert_eq!((later.lock_wait, later.elapsed), (0, 0));
    }

    /// The skb's data comes from the smallest kmalloc cache that holds its
    /// linear part and skb_shared_info; none listed, the head alone.
    #[test]
    fn an_skb_takes_its_data_from_the_smallest_cache_that_holds_it() {
        let cache = |name: &str, size| SlabCache {
            name: name.into(),
            object_size: size,
            objs_per_slab: 8,
            cpu_partial: 8,
            min_partial: 5,
        };
        let spec = SkbSlabs {
            head: cache("skbuff_head_cache", 224),
            data: vec![cache("kmalloc-512", 512), cache("kmalloc-1k", 1024)],
        };
        let mut a = SkbAllocator::new(&spec, 1, 1);
        let small = a.alloc(0, 0, 100, &mut none()); // 128 + 320 = 448
        assert_eq!(small.data_cache, 0);
        let mid = a.alloc(0, 0, 200, &mut none()); // 256 + 320 = 576
        assert_eq!(mid.data_cache, 1);
        let big = a.alloc(0, 0, 4000, &mut none());
        assert_eq!(big.data_cache, u32::MAX);
        assert_eq!(a.live(), 3);
        for skb in [small, mid, big] {
            a.free(0, skb, &mut none());
        }
        assert_eq!(a.live(), 0);
        a.check().unwrap();
    }
}
