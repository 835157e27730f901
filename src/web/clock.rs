//! The shell's clock: monotonic milliseconds that line up with epoch time.

use crate::core::time::Millis;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    // Bound on the global `performance`, so the module works in windows and workers alike.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// `performance.now()` shifted by the epoch offset measured once at construction: monotonic like
/// `performance.now()`, and readable as epoch milliseconds in records.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    epoch_offset: f64,
}

impl Clock {
    pub(crate) fn new() -> Self {
        Clock {
            epoch_offset: js_sys::Date::now() - performance_now(),
        }
    }

    pub(crate) fn now(&self) -> Millis {
        // `as` saturates for floats: a NaN or negative value becomes 0, never a trap.
        Millis(libm::floor(self.epoch_offset + performance_now()) as u64)
    }
}
