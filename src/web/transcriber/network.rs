//! The browser's word on the network (W): `navigator.onLine` when the transcriber starts, then
//! the `online` and `offline` events of the page (or worker), each fed to the core's
//! `set_online`. Where the global has no events (Node), nothing is watched.

use super::io::{input, AnyTranscriberHost};
use js_sys::{Function, Reflect};
use std::rc::Weak;
use wasm_bindgen::prelude::*;
use web_sys::EventTarget;

/// The two listeners, removed when dropped (at the transcriber's end or `free()`). They are
/// JS-owned functions, so removing them from inside one of their own calls is safe.
pub(crate) struct NetworkWatch {
    global: EventTarget,
    online: Function,
    offline: Function,
}

impl NetworkWatch {
    /// Listens for `online`/`offline` on the global; `None` where it takes no listeners.
    pub(crate) fn start(host: Weak<AnyTranscriberHost>) -> Option<Self> {
        let global = js_sys::global();
        if !Reflect::has(&global, &JsValue::from_str("addEventListener")).unwrap_or(false) {
            return None;
        }
        let global: EventTarget = global.unchecked_into();
        let listener = |online: bool| {
            let host = host.clone();
            Closure::<dyn FnMut()>::new(move || {
                if let Some(host) = host.upgrade() {
                    input(host.as_ref(), |stt, now| stt.set_online(online, now));
                }
            })
            .into_js_value()
            .unchecked_into::<Function>()
        };
        let watch = NetworkWatch {
            global,
            online: listener(true),
            offline: listener(false),
        };
        for (kind, listener) in [("online", &watch.online), ("offline", &watch.offline)] {
            watch
                .global
                .add_event_listener_with_callback(kind, listener)
                .ok()?;
        }
        Some(watch)
    }
}

impl Drop for NetworkWatch {
    fn drop(&mut self) {
        for (kind, listener) in [("online", &self.online), ("offline", &self.offline)] {
            let _ = self
                .global
                .remove_event_listener_with_callback(kind, listener);
        }
    }
}

/// `navigator.onLine`; true where there is no such thing to ask.
pub(crate) fn is_online() -> bool {
    Reflect::get(&js_sys::global(), &JsValue::from_str("navigator"))
        .ok()
        .filter(|navigator| navigator.is_object())
        .and_then(|navigator| Reflect::get(&navigator, &JsValue::from_str("onLine")).ok())
        .and_then(|online| online.as_bool())
        .unwrap_or(true)
}
