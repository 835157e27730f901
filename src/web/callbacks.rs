//! The one rule for calling the app, kept by every class (`TurnController`, `LiveTranscriber`,
//! `SpeechPlayer`, `VoiceSession`):
//!
//! - A callback runs with no Rust borrow held (the driver's rule: callers make sure), so it may
//!   call any method of the same object, `free()` included.
//! - A callback that throws is reported once, as a non-terminal `callback_error`: to `onError` (an
//!   `Error` with `code: "callback_error"`, `terminal: false`, `callback: "<name>"` and the thrown
//!   value as `cause`) and to `onEvent` as `{ type: "callback_error", callback, at }` (both with
//!   `turnId` when the call was about a turn). It is never swallowed and never stops the machine:
//!   the class goes on as if the callback had returned.
//! - Reporting never loops: a throwing `onError` is reported to `onEvent` only, a throwing
//!   `onEvent` to `onError` only, and a throw made while reporting is not reported again.
//!
//! Adapters that produce a result — a route's `generate`, `provision()`, `synthesize` — are not
//! callbacks: their throw is the failure of what they were asked for, handled where they are called.

use crate::web::clock::Clock;
use crate::web::convert::coded_error;
use crate::web::js_object::JsObject;
use alloc::string::String;
use js_sys::Function;
use wasm_bindgen::JsValue;

/// The arguments of one call (`call0` … `call3`: no array is built for a call).
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "voice"), allow(dead_code))]
pub(crate) enum Args<'a> {
    None,
    One(&'a JsValue),
    Two(&'a JsValue, &'a JsValue),
    Three(&'a JsValue, &'a JsValue, &'a JsValue),
}

const ON_ERROR: &str = "onError";
const ON_EVENT: &str = "onEvent";

/// Where a class reports what its callbacks throw: the app's `onError` and `onEvent`, and the
/// class's clock for the event's `at`.
pub(crate) struct AppCallbacks {
    on_error: Option<Function>,
    on_event: Option<Function>,
    clock: Clock,
}

impl AppCallbacks {
    pub(crate) fn new(
        on_error: Option<Function>,
        on_event: Option<Function>,
        clock: Clock,
    ) -> Self {
        AppCallbacks {
            on_error,
            on_event,
            clock,
        }
    }

    /// Whether the app listens to events (a class makes none for nobody).
    pub(crate) fn wants_events(&self) -> bool {
        self.on_event.is_some()
    }

    /// Calls `callback`, named `name` in a report; `turn_id`: the turn the call is about.
    pub(crate) fn call(
        &self,
        name: &str,
        callback: &Function,
        args: Args,
        turn_id: Option<&JsValue>,
    ) {
        if let Err(thrown) = invoke(callback, args) {
            self.report(name, &thrown, turn_id, true);
        }
    }

    /// [`AppCallbacks::call`] for an optional callback: nothing when the app gave none.
    pub(crate) fn call_optional(
        &self,
        name: &str,
        callback: Option<&Function>,
        args: Args,
        turn_id: Option<&JsValue>,
    ) {
        if let Some(callback) = callback {
            self.call(name, callback, args, turn_id);
        }
    }

    /// `onError(error)`; a throw is reported as an event.
    #[cfg_attr(not(feature = "transcriber"), allow(dead_code))]
    pub(crate) fn error(&self, error: &JsValue) {
        self.call_optional(ON_ERROR, self.on_error.as_ref(), Args::One(error), None);
    }

    /// `onEvent` with `event` stamped with the current time (`at`, epoch ms).
    #[cfg(feature = "transcriber")]
    pub(crate) fn event_now(&self, event: crate::web::js_object::JsObject) {
        self.event(&event.set("at", self.clock.now().0 as f64).build());
    }

    /// `onEvent(event)`; a throw is reported to `onError`.
    pub(crate) fn event(&self, event: &JsValue) {
        self.call_optional(ON_EVENT, self.on_event.as_ref(), Args::One(event), None);
    }

    /// The two reports of one throw. `first`: not itself made while reporting, so a throw of
    /// `onError`/`onEvent` here is reported (once) through the other one.
    fn report(&self, name: &str, thrown: &JsValue, turn_id: Option<&JsValue>, first: bool) {
        if let (Some(on_error), true) = (&self.on_error, name != ON_ERROR) {
            let error = callback_error(name, thrown, turn_id);
            if let (Err(again), true) = (on_error.call1(&JsValue::UNDEFINED, &error), first) {
                self.report(ON_ERROR, &again, turn_id, false);
            }
        }
        if let (Some(on_event), true) = (&self.on_event, name != ON_EVENT) {
            let mut event = JsObject::new()
                .set("type", "callback_error")
                .set("callback", name)
                .set("at", self.clock.now().0 as f64);
            if let Some(turn_id) = turn_id {
                event = event.set("turnId", turn_id.clone());
            }
            if let (Err(again), true) = (on_event.call1(&JsValue::UNDEFINED, &event.build()), first)
            {
                self.report(ON_EVENT, &again, turn_id, false);
            }
        }
    }
}

fn invoke(callback: &Function, args: Args) -> Result<JsValue, JsValue> {
    let this = &JsValue::UNDEFINED;
    match args {
        Args::None => callback.call0(this),
        Args::One(a) => callback.call1(this, a),
        Args::Two(a, b) => callback.call2(this, a, b),
        Args::Three(a, b, c) => callback.call3(this, a, b, c),
    }
}

/// What `onError` gets when the app's `callback` threw `thrown`.
fn callback_error(callback: &str, thrown: &JsValue, turn_id: Option<&JsValue>) -> JsValue {
    let mut message = String::from(callback);
    message.push_str(" threw");
    let error = coded_error(&message, Some(thrown), "callback_error", false);
    let set = |key: &str, value: &JsValue| {
        let _ = js_sys::Reflect::set(&error, &JsValue::from_str(key), value);
    };
    set("callback", &JsValue::from_str(callback));
    if let Some(turn_id) = turn_id {
        set("turnId", turn_id);
    }
    error
}
