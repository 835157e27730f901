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
    /// In a page a pending timer holds nothing up, so one armed when nothing is left due is left
    /// to fire once and find nothing; in Node, Deno or Bun it would keep the process running.
    idle_kept: bool,
}

impl Timer {
    pub(crate) fn new(callback: impl FnMut() + 'static) -> Self {
        Timer {
            callback: Closure::new(callback),
            armed: Cell::new(None),
            id: Cell::new(JsValue::UNDEFINED),
            idle_kept: in_a_page(),
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

    /// Nothing is due. A sequential turn arms the timer for its deadline and settles long
    /// before it: left armed, the next turn's later deadline keeps it, where clearing it would
    /// cost a `clearTimeout` and the next turn a `setTimeout`.
    pub(crate) fn idle(&self) {
        if !self.idle_kept {
            self.cancel();
        }
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

/// A window's document is there: the code runs in a page, not in a process a timer keeps alive.
fn in_a_page() -> bool {
    DOCUMENT.with(JsValue::is_object)
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(thread_local_v2, js_namespace = globalThis, js_name = document)]
    static DOCUMENT: JsValue;
}
