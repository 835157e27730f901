//! `new VoiceSession(options)`: the options, checked, with errors that name the field where the
//! app wrote it (`options.controller.turnDeadlineMs`, `options.bargeIn.minPartialChars`).

use crate::core::voice::VoiceConfig;
use crate::web::convert::{range_error, type_error, Fields};
use crate::web::player::audio_options;
use js_sys::{Function, Object};
use wasm_bindgen::prelude::*;
use web_sys::{AudioContext, AudioNode};

/// The app's callbacks.
pub(crate) struct SessionCallbacks {
    pub(crate) synthesize: Function,
    pub(crate) on_state_change: Option<Function>,
    pub(crate) on_caption: Option<Function>,
    pub(crate) on_turn: Option<Function>,
    pub(crate) on_error: Option<Function>,
    pub(crate) on_needs_gesture: Option<Function>,
    pub(crate) on_event: Option<Function>,
    pub(crate) on_speech: Option<Function>,
    pub(crate) on_heard: Option<Function>,
}

pub(crate) struct SessionOptions {
    pub(crate) config: VoiceConfig,
    pub(crate) callbacks: SessionCallbacks,
    pub(crate) routes: JsValue,
    /// `options.controller` copied: the session adds its own callbacks to the copy.
    pub(crate) controller: Object,
    /// `options.transcriber` copied, with `provision`; `None` without `provision` (typed input).
    pub(crate) transcriber: Option<Object>,
    pub(crate) audio_context: Option<AudioContext>,
    pub(crate) destination: Option<AudioNode>,
}

pub(crate) fn parse_session_options(options: &JsValue) -> Result<SessionOptions, JsValue> {
    let fields = Fields::of(options, "options")?;
    let recovery_text = fields.string("recoveryText")?;
    if recovery_text.trim().is_empty() {
        return Err(range_error("options.recoveryText must not be blank"));
    }
    let callbacks = SessionCallbacks {
        synthesize: fields.function("synthesize")?,
        on_state_change: fields.optional_function("onStateChange")?,
        on_caption: fields.optional_function("onCaption")?,
        on_turn: fields.optional_function("onTurn")?,
        on_error: fields.optional_function("onError")?,
        on_needs_gesture: fields.optional_function("onNeedsGesture")?,
        on_event: fields.optional_function("onEvent")?,
        on_speech: fields.optional_function("onSpeech")?,
        on_heard: fields.optional_function("onHeard")?,
    };
    let mut config = VoiceConfig::new(recovery_text);
    config.session_id = Some(super::id::session_id(&fields)?);
    config.tts_timeout_ms = fields.positive_ms("ttsTimeoutMs", config.tts_timeout_ms)?;
    let barge_in = fields.get("bargeIn")?;
    if !barge_in.is_undefined() {
        let barge_in = Fields::of(&barge_in, "options.bargeIn")?;
        let min = barge_in.count("minPartialChars", 1, 1)?;
        config.min_partial_chars = usize::try_from(min).unwrap_or(usize::MAX);
        config.echo_guard_ms = barge_in.non_negative_ms("echoGuardMs", 0)?;
    }
    let controller = copy_object(&fields, "controller")?;
    let provision = fields.optional_function("provision")?;
    let transcriber = copy_object(&fields, "transcriber")?;
    let transcriber = provision.map(|provision| {
        let _ = js_sys::Reflect::set(&transcriber, &"provision".into(), &provision);
        transcriber
    });
    let (audio_context, destination) = audio_options(&fields)?;
    Ok(SessionOptions {
        config,
        callbacks,
        routes: fields.get("routes")?,
        controller,
        transcriber,
        audio_context,
        destination,
    })
}

/// A shallow copy of the optional object `options.<key>` (an empty object when absent).
fn copy_object(fields: &Fields<'_>, key: &str) -> Result<Object, JsValue> {
    let value = fields.get(key)?;
    if value.is_undefined() {
        return Ok(Object::new());
    }
    if !value.is_object() {
        return Err(type_error(&format!("options.{key} must be an object")));
    }
    Ok(Object::assign(&Object::new(), value.unchecked_ref()))
}

/// An error of a nested class's constructor, renamed to where the app wrote the field:
/// `options.x` → `options.<key>.x`, and `routes…` → `options.routes…`.
pub(crate) fn renamed(error: JsValue, key: &str) -> JsValue {
    let message = js_sys::Reflect::get(&error, &JsValue::from_str("message"))
        .ok()
        .and_then(|message| message.as_string());
    let Some(message) = message else {
        return error;
    };
    let message = if message.starts_with("routes") {
        format!("options.{message}")
    } else {
        message.replace("options.", &format!("options.{key}."))
    };
    if error.is_instance_of::<js_sys::RangeError>() {
        range_error(&message)
    } else if error.is_instance_of::<js_sys::TypeError>() {
        type_error(&message)
    } else {
        error
    }
}
