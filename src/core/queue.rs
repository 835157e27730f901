//! A first-in, first-out queue: a `Vec` read from a head that moves.
//!
//! `VecDeque` compiles its ring buffer (growing, wrapping copies, draining) once per element type,
//! and the crate queues a dozen types: actions, frames, windows of recent values. This queue is a
//! `Vec` of slots taken from the front: what it compiles per type is a push, a slot read and a
//! rare compaction. Every queue here is small or drained often, and the compaction keeps the
//! taken slots at most as many as the live ones (or 32), so it is as fast and never grows without bound.

use alloc::vec::Vec;

/// Taken slots a queue keeps before it drops them (a queue drained after each input seldom has as many).
const COMPACT_AFTER: usize = 32;

#[derive(Debug, Clone)]
pub(crate) struct Queue<T> {
    /// Taken slots (`None`) before `head`, live ones from it.
    slots: Vec<Option<T>>,
    head: usize,
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Queue<T> {
    pub(crate) const fn new() -> Self {
        Queue {
            slots: Vec::new(),
            head: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.len().saturating_sub(self.head)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn push_back(&mut self, item: T) {
        self.slots.push(Some(item));
    }

    pub(crate) fn pop_front(&mut self) -> Option<T> {
        let item = self.slots.get_mut(self.head)?.take();
        self.head = self.head.saturating_add(1);
        if self.head == self.slots.len() {
            self.clear();
        } else if self.head >= COMPACT_AFTER && self.head >= self.slots.len() / 2 {
            // As many taken slots as live ones: drop them (amortised over the pops that took them).
            self.slots = self.slots.split_off(self.head);
            self.head = 0;
        }
        item
    }

    /// Puts an item first: into the last taken slot if there is one.
    pub(crate) fn push_front(&mut self, item: T) {
        match self.head.checked_sub(1) {
            Some(before) => {
                if let Some(slot) = self.slots.get_mut(before) {
                    *slot = Some(item);
                    self.head = before;
                }
            }
            None => self.slots.insert(0, Some(item)),
        }
    }

    /// Removes and returns the item at `index` from the front.
    pub(crate) fn remove(&mut self, index: usize) -> Option<T> {
        let at = self.head.checked_add(index)?;
        if at >= self.slots.len() {
            return None;
        }
        let item = self.slots.remove(at);
        if self.head == self.slots.len() {
            self.clear();
        }
        item
    }

    /// Takes every item out, front to back, leaving the queue empty.
    pub(crate) fn take_all(&mut self) -> impl Iterator<Item = T> {
        self.head = 0;
        core::mem::take(&mut self.slots).into_iter().flatten()
    }

    pub(crate) fn get(&self, index: usize) -> Option<&T> {
        self.slots.get(self.head.checked_add(index)?)?.as_ref()
    }

    pub(crate) fn get_mut(&mut self, index: usize) -> Option<&mut T> {
        self.slots.get_mut(self.head.checked_add(index)?)?.as_mut()
    }

    pub(crate) fn front(&self) -> Option<&T> {
        self.slots.get(self.head)?.as_ref()
    }

    pub(crate) fn back_mut(&mut self) -> Option<&mut T> {
        self.slots.last_mut()?.as_mut()
    }

    pub(crate) fn clear(&mut self) {
        self.slots.clear();
        self.head = 0;
    }

    /// Keeps the items `keep` says to, in order.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        self.slots
            .retain(|slot| slot.as_ref().is_some_and(&mut keep));
        self.head = 0;
    }

    /// The items, front to back.
    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + Clone + '_ {
        self.slots.iter().flatten()
    }

    pub(crate) fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut T> + '_ {
        self.slots.iter_mut().flatten()
    }
}

/// Equal items in order, wherever the heads are.
impl<T: PartialEq> PartialEq for Queue<T> {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl<T> Extend<T> for Queue<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        self.slots.extend(items.into_iter().map(Some));
    }
}

impl<'a, T> IntoIterator for &'a mut Queue<T> {
    type Item = &'a mut T;
    type IntoIter = core::iter::Flatten<core::slice::IterMut<'a, Option<T>>>;

    fn into_iter(self) -> Self::IntoIter {
        self.slots.iter_mut().flatten()
    }
}

impl<T> FromIterator<T> for Queue<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        Queue {
            slots: items.into_iter().map(Some).collect(),
            head: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::VecDeque;

    #[test]
    fn it_matches_a_vec_deque_through_any_mix_of_pushes_pops_and_retains() {
        let mut queue = Queue::new();
        let mut model = VecDeque::new();
        let mut seed = 7u32;
        for step in 0..20_000u32 {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let index = (seed >> 8) as usize % (model.len() + 1);
            match (seed >> 16) % 10 {
                0..=2 => {
                    queue.push_back(step);
                    model.push_back(step);
                }
                3..=5 => assert_eq!(queue.pop_front(), model.pop_front()),
                6 => {
                    queue.push_front(step);
                    model.push_front(step);
                }
                7 => assert_eq!(queue.remove(index), model.remove(index)),
                8 => {
                    if let (Some(item), Some(expected)) =
                        (queue.get_mut(index), model.get_mut(index))
                    {
                        *item += 1;
                        *expected += 1;
                    }
                    assert_eq!(queue.get(index), model.get(index));
                }
                _ => {
                    let odd = step % 2 == 1;
                    queue.retain(|item| (item % 3 == 0) == odd);
                    model.retain(|item| (item % 3 == 0) == odd);
                }
            }
            assert_eq!(queue.len(), model.len());
            assert_eq!(queue.front(), model.front());
            assert_eq!(queue.iter().next_back(), model.back());
            assert!(queue.iter().eq(model.iter()));
            assert!(
                queue.slots.len() <= 2 * queue.len() + COMPACT_AFTER,
                "taken slots are dropped"
            );
        }
    }

    #[test]
    fn queues_are_equal_by_their_items() {
        let mut popped: Queue<u8> = (0..4).collect();
        popped.pop_front();
        assert_eq!(popped, (1..4).collect());
        assert_ne!(popped, (0..4).collect());
        assert_eq!(popped.take_all().collect::<Vec<_>>(), [1, 2, 3]);
        assert!(popped.is_empty());
    }

    #[test]
    fn a_drained_queue_holds_nothing() {
        let mut queue: Queue<u8> = (0..10).collect();
        while queue.pop_front().is_some() {}
        assert!(queue.is_empty());
        assert_eq!(queue.slots.len(), 0);
        assert_eq!(queue.pop_front(), None);
    }
}
