//! One timer per state machine, armed for its next deadline.

use crate::core::time::Millis;
use gloo_timers::callback::Timeout;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// Calls its callback no later than the deadline it was last asked for. An armed timer that is
/// early enough is kept, so a turn rarely re-arms it: a timer firing early is harmless, since
/// `handle_timeout` of the core ignores what is not due. Cleared on drop.
pub(crate) struct Timer {
    callback: Rc<dyn Fn()>,
    armed: Cell<Option<Millis>>,
    /// The browser timeout; dropping it clears it.
    pending: RefCell<Option<Timeout>>,
}

impl Timer {
    pub(crate) fn new(callback: impl FnMut() + 'static) -> Self {
        let callback = RefCell::new(callback);
        Timer {
            callback: Rc::new(move || {
                if let Ok(mut callback) = callback.try_borrow_mut() {
                    callback();
                }
            }),
            armed: Cell::new(None),
            pending: RefCell::new(None),
        }
    }

    /// Makes sure the callback runs by `at`; `now` is read only when the timer must be re-armed.
    pub(crate) fn ensure(&self, at: Millis, now: impl FnOnce() -> Millis) {
        if self.armed.get().is_some_and(|armed| armed <= at) {
            return;
        }
        // Browsers fire a delay over 2^31 - 1 ms at once: cap it there.
        let delay =
            u32::try_from(at.since(now())).map_or(i32::MAX as u32, |ms| ms.min(i32::MAX as u32));
        let callback = Rc::clone(&self.callback);
        // Replacing the earlier timeout drops it, which clears it.
        self.pending
            .replace(Some(Timeout::new(delay, move || callback())));
        self.armed.set(Some(at));
    }

    /// Call first thing in the callback: the timer is no longer armed.
    pub(crate) fn fired(&self) {
        self.armed.set(None);
        // Released while it runs: wasm-bindgen frees a closure only once its call returns.
        drop(self.pending.take());
    }

    pub(crate) fn cancel(&self) {
        self.armed.set(None);
        drop(self.pending.take());
    }
}
