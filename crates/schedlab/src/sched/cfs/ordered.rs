//! The run queue's ordered sets: (key, task) pairs in a sorted vector.
//!
//! A run queue holds a few tasks (tens on a crowded machine), and its set
//! empties and refills on almost every switch. A BTreeSet frees its root
//! node when it empties and allocates one on the next insert: a malloc and
//! a free per switch, about 5% of a ping-pong's time. A sorted vector keeps
//! its capacity, and at these sizes its binary search and short moves cost
//! less than the tree's node walk. The order is the same: (key, id).

#[derive(Debug, Clone, Default)]
pub(super) struct OrderedSet {
    items: Vec<(u64, usize)>,
}

impl OrderedSet {
    /// Adds `item`; false if it was there.
    pub fn insert(&mut self, item: (u64, usize)) -> bool {
        match self.items.binary_search(&item) {
            Ok(_) => false,
            Err(at) => {
                self.items.insert(at, item);
                true
            }
        }
    }

    /// Removes `item`; false if it was not there.
    pub fn remove(&mut self, item: &(u64, usize)) -> bool {
        match self.items.binary_search(item) {
            Ok(at) => {
                self.items.remove(at);
                true
            }
            Err(_) => false,
        }
    }

    pub fn contains(&self, item: &(u64, usize)) -> bool {
        self.items.binary_search(item).is_ok()
    }

    pub fn first(&self) -> Option<&(u64, usize)> {
        self.items.first()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, (u64, usize)> {
        self.items.iter()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        /// Any run of inserts and removes leaves it as a BTreeSet would be.
        #[test]
        fn it_behaves_as_a_btree_set(ops in proptest::collection::vec((any::<bool>(), 0u64..8, 0usize..6), 0..200)) {
            let (mut ours, mut tree) = (OrderedSet::default(), BTreeSet::new());
            for (add, key, id) in ops {
                let item = (key, id);
                if add {
                    prop_assert_eq!(ours.insert(item), tree.insert(item));
                } else {
                    prop_assert_eq!(ours.remove(&item), tree.remove(&item));
                }
                prop_assert_eq!(ours.first(), tree.first());
                prop_assert_eq!(ours.len(), tree.len());
                prop_assert!(ours.iter().eq(tree.iter()));
                prop_assert_eq!(ours.contains(&item), tree.contains(&item));
            }
        }
    }
}
