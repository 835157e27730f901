//! The session's own callbacks on the controller and the transcriber it composes: each feeds the
//! session's core through the driver, found through a weak slot filled once the session exists.

use super::options::renamed;
use super::{Shared, Slot};
use crate::core::voice::VoiceConfig;
use crate::web::callbacks::Args;
use crate::web::controller::TurnController;
use crate::web::driver;
use crate::web::transcriber::LiveTranscriber;
use js_sys::{Function, Object, Promise, Reflect};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

fn set(object: &Object, key: &str, value: &JsValue) {
    let _ = Reflect::set(object, &JsValue::from_str(key), value);
}

/// Runs `with` on the session behind `slot`, if it is still alive.
pub(super) fn with_session(slot: &Slot, with: impl FnOnce(&Rc<Shared>)) {
    let shared = slot.borrow().upgrade();
    if let Some(shared) = shared {
        with(&shared);
    }
}

fn callback2(slot: &Slot, on: fn(&Rc<Shared>, JsValue, JsValue)) -> JsValue {
    let slot = slot.clone();
    Closure::<dyn Fn(JsValue, JsValue)>::new(move |a, b| with_session(&slot, |s| on(s, a, b)))
        .into_js_value()
}

/// The app's `TurnController` options with the session's sentence, answer and recovery callbacks.
pub(super) fn controller(
    slot: &Slot,
    routes: JsValue,
    controller_options: Object,
    config: &VoiceConfig,
) -> Result<TurnController, JsValue> {
    let set = |object: &Object, key: &str, value: &JsValue| {
        let _ = Reflect::set(object, &JsValue::from_str(key), value);
    };
    // The app's own `controller.onEvent` (if a function) is served first, then `options.onEvent`,
    // with the same event object. Anything else is left for the controller to reject.
    let app_on_event =
        Reflect::get(&controller_options, &JsValue::from_str("onEvent")).unwrap_or_default();
    if app_on_event.is_undefined() || app_on_event.is_function() {
        let app_on_event: Option<Function> = app_on_event.dyn_into().ok();
        let slot = slot.clone();
        let on_event = Closure::<dyn Fn(JsValue)>::new(move |event: JsValue| {
            with_session(&slot, |s| {
                s.call("controller.onEvent", &app_on_event, Args::One(&event));
                s.app.event(&event);
            });
        });
        set(&controller_options, "onEvent", &on_event.into_js_value());
    }
    set(
        &controller_options,
        "recoveryText",
        &JsValue::from_str(&config.recovery_text),
    );
    set(
        &controller_options,
        "onSentence",
        &callback2(slot, |s, turn, text| {
            let (turn, text) = (
                turn.as_string().unwrap_or_default(),
                text.as_string().unwrap_or_default(),
            );
            driver::input(s, |core, now| core.on_sentence(&turn, &text, now));
        }),
    );
    set(
        &controller_options,
        "onAcceptedText",
        &callback2(slot, |s, turn, _| {
            let turn = turn.as_string().unwrap_or_default();
            driver::input(s, |core, now| core.on_accepted(&turn, now));
        }),
    );
    set(
        &controller_options,
        "onRecovery",
        &callback2(slot, |s, turn, _| {
            let turn = turn.as_string().unwrap_or_default();
            driver::input(s, |core, now| core.on_recovery(&turn, now));
        }),
    );
    TurnController::new(routes, controller_options.into())
        .map_err(|error| renamed(error, "controller"))
}

/// A `LiveTranscriber` on the app's options with the session's callbacks; `None` without `provision`.
pub(super) fn transcriber(
    slot: &Slot,
    transcriber_options: Option<Object>,
) -> Result<Option<LiveTranscriber>, JsValue> {
    let transcriber = match transcriber_options {
        Some(transcriber_options) => {
            observe_provision(slot, &transcriber_options);
            set(
                &transcriber_options,
                "onPartial",
                &callback2(slot, |s, text, _| {
                    let text = text.as_string().unwrap_or_default();
                    driver::input(s, |core, now| core.on_partial(&text, now));
                }),
            );
            set(
                &transcriber_options,
                "onFinal",
                &callback2(slot, |s, text, _| {
                    let text = text.as_string().unwrap_or_default();
                    driver::input(s, |core, now| core.on_spoken_final(&text, now));
                }),
            );
            set(
                &transcriber_options,
                "onSpeechStart",
                &callback2(slot, |s, _, _| {
                    driver::input(s, |core, now| core.on_speech_start(now));
                }),
            );
            set(
                &transcriber_options,
                "onStateChange",
                &callback2(slot, |s, state, _| {
                    s.emit_transcriber_state(&state);
                    if state.as_string().as_deref() == Some("failed") {
                        driver::input(s, |core, now| core.on_transcriber_failed(now));
                    }
                }),
            );
            set(
                &transcriber_options,
                "onError",
                &callback2(slot, |s, error, _| {
                    s.emit_transcriber_error(&error);
                    s.report_error(&error);
                }),
            );
            Some(
                LiveTranscriber::new(transcriber_options.into())
                    .map_err(|error| renamed(error, "transcriber"))?,
            )
        }
        None => None,
    };
    Ok(transcriber)
}

/// Wraps the app's `provision` so each settled call is a `provision_finished` event.
fn observe_provision(slot: &Slot, transcriber_options: &Object) {
    let provision = Reflect::get(transcriber_options, &JsValue::from_str("provision"))
        .ok()
        .and_then(|provision| provision.dyn_into::<Function>().ok());
    let Some(provision) = provision else {
        return;
    };
    let slot = slot.clone();
    let wrapped = Closure::<dyn Fn(JsValue) -> JsValue>::new(move |request: JsValue| {
        let called = provision.call1(&JsValue::UNDEFINED, &request);
        let slot = slot.clone();
        let settled = future_to_promise(async move {
            let result = match called {
                Ok(value) => JsFuture::from(Promise::resolve(&value)).await,
                Err(error) => Err(error),
            };
            with_session(&slot, |s| s.emit_provisioned(result.as_ref().map(|_| ())));
            result
        });
        settled.into()
    });
    set(transcriber_options, "provision", &wrapped.into_js_value());
}
