//! The browser's word on the network (W): `navigator.onLine` when the transcriber starts, then
//! the `online` and `offline` events of the page (or worker), each fed to the core's
//! `set_online`; and the page's stay in the back-forward cache (`pagehide` and `pageshow` with
//! `persisted`), fed to `park` and `unpark`. Where the global has no events (Node), nothing is
//! watched.

use super::io::{input, AnyTranscriberHost};
use crate::core::stt::transcriber::Transcriber;
use crate::core::time::Millis;
use alloc::rc::Weak;
use js_sys::{Function, Reflect};
use wasm_bindgen::prelude::*;
use web_sys::EventTarget;

/// The page's listeners, removed when dropped (at the transcriber's end or `free()`). They are
/// JS-owned functions, so removing them from inside one of their own calls is safe.
pub(crate) struct NetworkWatch {
    global: EventTarget,
    listeners: [(&'static str, Function); 4],
}

impl NetworkWatch {
    /// Listens for `online`/`offline`, and for `pagehide`/`pageshow` of a page that goes into the
    /// back-forward cache and comes back (`persisted`), on the global; `None` where it takes no
    /// listeners.
    pub(crate) fn start(host: Weak<AnyTranscriberHost>) -> Option<Self> {
        let global = js_sys::global();
        if !Reflect::has(&global, &JsValue::from_str("addEventListener")).unwrap_or(false) {
            return None;
        }
        let global: EventTarget = global.unchecked_into();
        let listener = |change: fn(&mut Transcriber, Millis)| {
            let host = host.clone();
            Closure::<dyn FnMut(JsValue)>::new(move |event: JsValue| {
                let cached = || {
                    Reflect::get(&event, &JsValue::from_str("persisted"))
                        .is_ok_and(|persisted| persisted.is_truthy())
                };
                let page_event =
                    Reflect::has(&event, &JsValue::from_str("persisted")).unwrap_or(false);
                // A page that is unloaded for good stops with the transcriber's end.
                if page_event && !cached() {
                    return;
                }
                if let Some(host) = host.upgrade() {
                    input(host.as_ref(), change);
                }
            })
            .into_js_value()
            .unchecked_into::<Function>()
        };
        let watch = NetworkWatch {
            global,
            listeners: [
                ("online", listener(|stt, now| stt.set_online(true, now))),
                ("offline", listener(|stt, now| stt.set_online(false, now))),
                ("pagehide", listener(Transcriber::park)),
                ("pageshow", listener(Transcriber::unpark)),
            ],
        };
        for (kind, listener) in &watch.listeners {
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
        for (kind, listener) in &self.listeners {
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
