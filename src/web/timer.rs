//! One timer per state machine, armed for its next deadline.

use crate::core::time::Millis;
use crate::web::glue::{clear_timeout, set_timeout};
use core::cell::Cell;
use wasm_bindgen::prelude::*;

/// Calls its callback no later than the deadline it was last asked for. The callback closure is
/// made once, not per arming, and an armed timer that is early enough is kept: a timer firing
/// early is harmless, since `handle_timeout` of the core ignores what is not due. Cleared on drop.
pub(crate) struct Timer {
    callback: Closure<dyn FnMut()>,
    armed: Cell<Option<Millis>>,
    id: Cell<JsValue>,
}

impl Timer {
    pub(crate) fn new(callback: impl FnMut() + 'static) -> Self {
        Timer {
            callback: Closure::new(callback),
            armed: Cell::new(None),
            id: Cell::new(JsValue::UNDEFINED),
        }
    }

    /// Makes sure the callback runs by `at`; `now` is read only when the timer must be re-armed.
    pub(crate) fn ensure(&self, at: Millis, now: impl FnOnce() -> Millis) {
        if self.armed.get().is_some_and(|armed| armed <= at) {
            return;
        }
        self.cancel();
        let delay = i32::try_from(at.since(now())).unwrap_or(i32::MAX);
        self.id
            .set(set_timeout(self.callback.as_ref().unchecked_ref(), delay));
        self.armed.set(Some(at));
    }

    /// Call first thing in the callback: the timer is no longer armed.
    pub(crate) fn fired(&self) {
        self.armed.set(None);
        self.id.set(JsValue::UNDEFINED);
    }

    pub(crate) fn cancel(&self) {
        if self.armed.take().is_some() {
            clear_timeout(&self.id.replace(JsValue::UNDEFINED));
        }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        self.cancel();
    }
}
