//! A map kept as a vector sorted by each key's hash and then the key, for the ladder's and the
//! controller's maps of turns and attempts (hundreds of entries at most: the turns in flight and
//! `history_limit` settled records). One small generic replaces a hash table's code per value
//! type (performance.md, issue 26). The hash comes first so that a binary search compares
//! integers: turn ids share long prefixes (`turn-41`, `turn-42`), and comparing them as strings
//! was a fifth of a turn's time with 500 in flight (performance.md, "A turn's cost").

use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::borrow::Borrow;
use core::cell::Cell;
use core::cmp::Ordering;

/// A key's 32-bit hash; a key and what it borrows as hash the same.
pub(crate) trait KeyHash {
    fn key_hash(&self) -> u32;
}

impl KeyHash for str {
    /// FNV-1a: a few instructions a byte, for ids of a few dozen bytes.
    fn key_hash(&self) -> u32 {
        self.bytes().fold(0x811c_9dc5, |hash, byte| {
            (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
        })
    }
}

impl KeyHash for Rc<str> {
    fn key_hash(&self) -> u32 {
        str::key_hash(self)
    }
}

impl KeyHash for String {
    fn key_hash(&self) -> u32 {
        str::key_hash(self)
    }
}

impl KeyHash for u32 {
    /// Itself: attempt ids count up, so a new one goes at the end.
    fn key_hash(&self) -> u32 {
        *self
    }
}

#[derive(Debug)]
pub(crate) struct SortedMap<K, V> {
    entries: Vec<(u32, K, V)>,
    /// Where the last key was found: a turn's steps look its id up several times in a row, and
    /// one comparison with this entry saves the search (a tenth of a turn at 500 in flight).
    last: Cell<usize>,
}

impl<K, V> Default for SortedMap<K, V> {
    fn default() -> Self {
        SortedMap {
            entries: Vec::new(),
            last: Cell::new(0),
        }
    }
}

impl<K: Ord + KeyHash, V> SortedMap<K, V> {
    /// Where `key` is (`Ok`) or would go (`Err`).
    fn find<Q: Ord + KeyHash + ?Sized>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        self.find_hashed(key.key_hash(), key)
    }

    /// [`find`](Self::find) with `key`'s hash already known. A loop of its own rather than
    /// `binary_search_by`: at `opt-level = "z"` its comparison closure stays a call per probe.
    fn find_hashed<Q: Ord + ?Sized>(&self, hash: u32, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        let last = self.last.get();
        if let Some((probe_hash, probe, _)) = self.entries.get(last) {
            if *probe_hash == hash && probe.borrow() == key {
                return Ok(last);
            }
        }
        let (mut low, mut high) = (0, self.entries.len());
        while low < high {
            let middle = low + (high - low) / 2;
            let Some((probe_hash, probe, _)) = self.entries.get(middle) else {
                break;
            };
            let order = match probe_hash.cmp(&hash) {
                Ordering::Equal => probe.borrow().cmp(key),
                order => order,
            };
            match order {
                Ordering::Less => low = middle + 1,
                Ordering::Greater => high = middle,
                Ordering::Equal => {
                    self.last.set(middle);
                    return Ok(middle);
                }
            }
        }
        Err(low)
    }

    /// Sets `key`'s value; returns the one it replaced.
    pub(crate) fn insert(&mut self, key: K, value: V) -> Option<V> {
        let hash = key.key_hash();
        match self.find_hashed(hash, &key) {
            Ok(index) => self
                .entries
                .get_mut(index)
                .map(|(_, _, slot)| core::mem::replace(slot, value)),
            Err(index) => {
                self.entries.insert(index, (hash, key, value));
                self.last.set(index);
                None
            }
        }
    }

    pub(crate) fn get<Q: Ord + KeyHash + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        let index = self.find(key).ok()?;
        self.entries.get(index).map(|(_, _, value)| value)
    }

    pub(crate) fn get_mut<Q: Ord + KeyHash + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        let index = self.find(key).ok()?;
        self.entries.get_mut(index).map(|(_, _, value)| value)
    }

    pub(crate) fn contains_key<Q: Ord + KeyHash + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.find(key).is_ok()
    }

    /// Takes `key` out with its value.
    pub(crate) fn remove_entry<Q: Ord + KeyHash + ?Sized>(&mut self, key: &Q) -> Option<(K, V)>
    where
        K: Borrow<Q>,
    {
        let index = self.find(key).ok()?;
        let (_, key, value) = self.entries.remove(index);
        Some((key, value))
    }

    pub(crate) fn remove<Q: Ord + KeyHash + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.remove_entry(key).map(|(_, value)| value)
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The values, in the map's own order (by hash).
    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        self.entries.iter().map(|(_, _, value)| value)
    }
}

#[cfg(test)]
mod tests {
    use super::{KeyHash, SortedMap};
    use alloc::collections::BTreeMap;
    use alloc::rc::Rc;
    use alloc::string::String;
    use alloc::vec::Vec;

    /// Keys whose hashes are all equal: the map falls back on their order.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
    struct Colliding(u32);

    impl KeyHash for Colliding {
        fn key_hash(&self) -> u32 {
            7
        }
    }

    /// Inserts, replaces and removes as a `BTreeMap` does, for string keys sharing prefixes and
    /// for keys whose hashes collide.
    #[test]
    fn agrees_with_a_btree_map() {
        let mut strings: SortedMap<String, u32> = SortedMap::default();
        let mut colliding: SortedMap<Colliding, u32> = SortedMap::default();
        let (mut string_model, mut colliding_model) = (BTreeMap::new(), BTreeMap::new());
        let mut state = 1u32;
        for step in 0..4_000u32 {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let n = (state >> 8) % 300;
            let key = ["turn-", &n.to_string()].concat();
            if state % 3 == 0 {
                assert_eq!(strings.remove(key.as_str()), string_model.remove(&key));
                assert_eq!(colliding.remove(&Colliding(n)), colliding_model.remove(&n));
            } else {
                assert_eq!(
                    strings.insert(key.clone(), step),
                    string_model.insert(key, step)
                );
                assert_eq!(
                    colliding.insert(Colliding(n), step),
                    colliding_model.insert(n, step)
                );
            }
            let probe = ["turn-", &((state >> 16) % 300).to_string()].concat();
            assert_eq!(strings.get(probe.as_str()), string_model.get(&probe));
            assert_eq!(strings.len(), string_model.len());
            assert_eq!(colliding.len(), colliding_model.len());
        }
        for (n, value) in &colliding_model {
            assert_eq!(colliding.get(&Colliding(*n)), Some(value));
        }
    }

    #[test]
    fn keys_in_any_order_are_found_replaced_and_removed() {
        let mut map: SortedMap<Rc<str>, u32> = SortedMap::default();
        for (value, key) in ["t-2", "t-10", "t-1", "a"].into_iter().enumerate() {
            assert_eq!(map.insert(Rc::from(key), value as u32), None);
        }
        assert_eq!(map.insert(Rc::from("t-10"), 7), Some(1));
        let mut values: Vec<u32> = map.values().copied().collect();
        values.sort_unstable();
        assert_eq!(values, [0, 2, 3, 7]);
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
