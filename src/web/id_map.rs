//! A map from numeric ids to values, as a vector. The player's and the session's maps hold a
//! handful of entries (jobs in flight, sources scheduled, streams arriving): one small generic
//! costs less wasm than a hash map per value type (docs/maintainers/performance.md, issue 26).
//! It is not the ladder's `SortedMap`: a binary search and a shifting insert per value type made
//! `turnguard` 311 B gzipped larger for maps this small (measured in performance.md).

pub(crate) struct IdMap<V> {
    entries: Vec<(u64, V)>,
}

use alloc::vec::Vec;
impl<V> Default for IdMap<V> {
    fn default() -> Self {
        IdMap {
            entries: Vec::new(),
        }
    }
}

impl<V> IdMap<V> {
    /// Sets `id`'s value; returns the one it replaced.
    pub(crate) fn insert(&mut self, id: u64, value: V) -> Option<V> {
        match self.get_mut(&id) {
            Some(slot) => Some(core::mem::replace(slot, value)),
            None => {
                self.entries.push((id, value));
                None
            }
        }
    }

    pub(crate) fn remove(&mut self, id: &u64) -> Option<V> {
        let index = self.entries.iter().position(|(key, _)| key == id)?;
        Some(self.entries.swap_remove(index).1)
    }

    pub(crate) fn get(&self, id: &u64) -> Option<&V> {
        self.entries
            .iter()
            .find(|(key, _)| key == id)
            .map(|(_, value)| value)
    }

    pub(crate) fn get_mut(&mut self, id: &u64) -> Option<&mut V> {
        self.entries
            .iter_mut()
            .find(|(key, _)| key == id)
            .map(|(_, value)| value)
    }

    pub(crate) fn contains_key(&self, id: &u64) -> bool {
        self.get(id).is_some()
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
    }

    /// Every entry, in no particular order.
    pub(crate) fn iter(&self) -> core::slice::Iter<'_, (u64, V)> {
        self.entries.iter()
    }

    /// Takes every entry out.
    pub(crate) fn drain(&mut self) -> alloc::vec::Drain<'_, (u64, V)> {
        self.entries.drain(..)
    }
}
