//! [`SortedMap`] (and [`NameMap`], keyed by name): a small map kept as one
//! sorted vector.
//!
//! Policies (features, tunables, levels, flags, params) and the page's edit
//! errors and machine drawing are maps of a few to a few dozen keys (an
//! insert moves the entries after it, which at that size costs less than a
//! tree's nodes). `BTreeMap` serves them but
//! costs the page's first load about 8 KB of wasm per value type for its
//! node splitting and merging; one sorted vector, searched by bisection,
//! does the same job in a fraction of that. Iteration is in name order and
//! the JSON is the same object `BTreeMap` wrote, so results and links are
//! unchanged. (litemap is such a map, but its `retain` gives no mutable
//! access and its serde reads sequences too and names itself in errors.)
//!
//! Reading JSON is stricter than `BTreeMap`'s: a name given twice is an
//! error that names it, not a silent "the last one wins".

use serde::de::{Deserialize, Deserializer, Error as _, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::borrow::Borrow;
use std::fmt;
use std::marker::PhantomData;

/// Keys to values, in key order (sorted, no key twice).
#[derive(Clone, PartialEq, Eq)]
pub struct SortedMap<K, V>(Vec<(K, V)>);

/// Names to values, in name order.
pub type NameMap<V> = SortedMap<String, V>;

impl<K: Ord, V> SortedMap<K, V> {
    pub fn new() -> Self {
        SortedMap(Vec::new())
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Where `key` is, or where it would go.
    fn find<Q: Ord + ?Sized>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        self.0.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(|i| &self.0[i].1)
    }

    /// Sets `key` to `value`; returns the value it replaced.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                self.0.insert(i, (key, value));
                None
            }
        }
    }

    pub fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(|i| self.0.remove(i).1)
    }

    pub fn clear(&mut self) {
        self.0.clear()
    }

    /// The value under `key`, inserted as `V::default()` if absent.
    pub fn entry_or_default(&mut self, key: K) -> &mut V
    where
        V: Default,
    {
        let i = match self.find(&key) {
            Ok(i) => i,
            Err(i) => {
                self.0.insert(i, (key, V::default()));
                i
            }
        };
        &mut self.0[i].1
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.0.retain_mut(|(k, v)| keep(k, v))
    }

    pub fn iter(&self) -> Iter<'_, K, V> {
        self.0.iter().map(pair)
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> {
        self.0.iter().map(|(k, _)| k)
    }
}

impl<K: Ord + Borrow<Q>, Q: Ord + fmt::Debug + ?Sized, V> std::ops::Index<&Q> for SortedMap<K, V> {
    type Output = V;
    /// Panics if `key` is absent, as `BTreeMap`'s index does.
    fn index(&self, key: &Q) -> &V {
        self.get(key).unwrap_or_else(|| panic!("no entry {key:?}"))
    }
}

/// The pairs in key order, as references.
pub type Iter<'a, K, V> =
    std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> (&'a K, &'a V)>;

fn pair<K, V>((k, v): &(K, V)) -> (&K, &V) {
    (k, v)
}

impl<K: Ord, V> Default for SortedMap<K, V> {
    fn default() -> Self {
        SortedMap::new()
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for SortedMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.0.iter().map(pair)).finish()
    }
}

impl<K: Ord, V> Extend<(K, V)> for SortedMap<K, V> {
    /// Later values win, as with `BTreeMap`.
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl<K: Ord, V> FromIterator<(K, V)> for SortedMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut map = SortedMap::new();
        map.extend(iter);
        map
    }
}

impl<K: Ord, V, const N: usize> From<[(K, V); N]> for SortedMap<K, V> {
    fn from(pairs: [(K, V); N]) -> Self {
        pairs.into_iter().collect()
    }
}

impl<K, V> IntoIterator for SortedMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a, K, V> IntoIterator for &'a SortedMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Iter<'a, K, V>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(pair)
    }
}

impl<K: Serialize, V: Serialize> Serialize for SortedMap<K, V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, K, V> Deserialize<'de> for SortedMap<K, V>
where
    K: Deserialize<'de> + Ord + fmt::Debug,
    V: Deserialize<'de>,
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SortedMapVisitor<K, V>(PhantomData<(K, V)>);
        impl<'de, K, V> Visitor<'de> for SortedMapVisitor<K, V>
        where
            K: Deserialize<'de> + Ord + fmt::Debug,
            V: Deserialize<'de>,
        {
            type Value = SortedMap<K, V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut map = SortedMap::new();
                while let Some((key, value)) = access.next_entry::<K, V>()? {
                    // Written in order (as this crate writes them), each
                    // entry appends; only hand-ordered JSON pays a search.
                    match map.0.last() {
                        Some((last, _)) if *last >= key => match map.find(&key) {
                            Ok(_) => {
                                return Err(A::Error::custom(format!("{key:?} is given twice")))
                            }
                            Err(i) => map.0.insert(i, (key, value)),
                        },
                        _ => map.0.push((key, value)),
                    }
                }
                Ok(map)
            }
        }
        deserializer.deserialize_map(SortedMapVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_names_in_order_and_later_values_win() {
        let mut m: NameMap<u32> = [("b".into(), 1), ("a".into(), 2)].into();
        assert_eq!(m.insert("b".into(), 3), Some(1));
        m.extend([("c".to_string(), 4), ("a".to_string(), 5)]);
        let pairs: Vec<(&str, u32)> = m.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(pairs, [("a", 5), ("b", 3), ("c", 4)]);
        assert_eq!(m.remove("b"), Some(3));
        assert_eq!(m.get("b"), None);
        *m.entry_or_default("d".into()) += 7;
        assert_eq!(m.get("d"), Some(&7));
        m.retain(|k, _| k != "a");
        assert_eq!(m.keys().map(|k| k.as_str()).collect::<Vec<_>>(), ["c", "d"]);
    }

    #[test]
    fn json_is_the_object_a_btreemap_writes() {
        let m: NameMap<bool> = [("WA_WEIGHT".into(), false), ("NEXT_BUDDY".into(), true)].into();
        let b: std::collections::BTreeMap<String, bool> =
            m.iter().map(|(k, v)| (k.clone(), *v)).collect();
        let text = serde_json::to_string(&m).unwrap();
        assert_eq!(text, serde_json::to_string(&b).unwrap());
        assert_eq!(serde_json::from_str::<NameMap<bool>>(&text).unwrap(), m);
    }

    #[test]
    fn reads_any_order_and_rejects_a_name_given_twice() {
        let m: NameMap<u32> = serde_json::from_str(r#"{"z": 1, "a": 2, "m": 3}"#).unwrap();
        assert_eq!(
            m.keys().map(|k| k.as_str()).collect::<Vec<_>>(),
            ["a", "m", "z"]
        );
        let e = serde_json::from_str::<NameMap<u32>>(r#"{"a": 1, "b": 2, "a": 3}"#).unwrap_err();
        assert!(e.to_string().contains(r#""a" is given twice"#), "{e}");
        let e = serde_json::from_str::<NameMap<u32>>("[1]").unwrap_err();
        assert!(e.to_string().contains("expected a map"), "{e}");
    }
}
