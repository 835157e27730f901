//! A map kept as a vector sorted by key, for the ladder's and the controller's maps of turns and
//! attempts (hundreds of entries at most: the turns in flight and `history_limit` settled
//! records). Binary search finds a key in as few comparisons as a hash table's probe costs a
//! hash; one small generic replaces a hash table's code per value type (performance.md, issue 26).

use alloc::vec::Vec;
use core::borrow::Borrow;

#[derive(Debug)]
pub(crate) struct SortedMap<K, V> {
    entries: Vec<(K, V)>,
}

impl<K, V> Default for SortedMap<K, V> {
    fn default() -> Self {
        SortedMap {
            entries: Vec::new(),
        }
    }
}

impl<K: Ord, V> SortedMap<K, V> {
    /// Where `key` is (`Ok`) or would go (`Err`).
    fn find<Q: Ord + ?Sized>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        self.entries
            .binary_search_by(|(probe, _)| probe.borrow().cmp(key))
    }

    /// Sets `key`'s value; returns the one it replaced.
    pub(crate) fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(index) => self
                .entries
                .get_mut(index)
                .map(|(_, slot)| core::mem::replace(slot, value)),
            Err(index) => {
                self.entries.insert(index, (key, value));
                None
            }
        }
    }

    pub(crate) fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        let index = self.find(key).ok()?;
        self.entries.get(index).map(|(_, value)| value)
    }

    pub(crate) fn get_mut<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        let index = self.find(key).ok()?;
        self.entries.get_mut(index).map(|(_, value)| value)
    }

    pub(crate) fn contains_key<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.find(key).is_ok()
    }

    /// Takes `key` out with its value.
    pub(crate) fn remove_entry<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<(K, V)>
    where
        K: Borrow<Q>,
    {
        let index = self.find(key).ok()?;
        Some(self.entries.remove(index))
    }

    pub(crate) fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.remove_entry(key).map(|(_, value)| value)
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The values, in key order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        self.entries.iter().map(|(_, value)| value)
    }
}

#[cfg(test)]
mod tests {
    use super::SortedMap;
    use alloc::rc::Rc;
    use alloc::vec::Vec;

    #[test]
    fn keys_in_any_order_are_found_replaced_and_removed() {
        let mut map: SortedMap<Rc<str>, u32> = SortedMap::default();
        for (value, key) in ["t-2", "t-10", "t-1", "a"].into_iter().enumerate() {
            assert_eq!(map.insert(Rc::from(key), value as u32), None);
        }
        assert_eq!(map.insert(Rc::from("t-10"), 7), Some(1));
        assert_eq!(map.values().copied().collect::<Vec<_>>(), [3, 2, 7, 0]);
        assert_eq!((map.get("t-1"), map.get("t-3")), (Some(&2), None));
        if let Some(value) = map.get_mut("a") {
            *value += 10;
        }
        assert_eq!(
            map.remove_entry("a")
                .map(|(key, value)| (key.to_string(), value)),
            Some(("a".into(), 13))
        );
        assert_eq!(
            (map.remove("a"), map.remove("t-2"), map.len()),
            (None, Some(0), 2)
        );
        assert!(map.contains_key("t-10") && !map.contains_key("t-2"));
    }
}
