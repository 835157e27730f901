//! `new VoiceSession(options)`: the options, checked, with errors that name the field where the
//! app wrote it (`options.controller.turnDeadlineMs`, `options.transcriber.bufferMs`,
//! `options.bargeIn.minPartialChars`). The `controller` and `transcriber` options are read by the
//! same code as `TurnController`'s and `LiveTranscriber`'s, on a copy holding the session's own
//! values where the session decides.

use crate::core::stt::transcriber::TranscriberConfig;
use crate::core::text::{decimal, replace_all};
use crate::core::turn::TurnConfig;
use crate::core::voice::backchannel::Backchannels;
use crate::core::voice::VoiceConfig;
use crate::web::controller_options::{parse_config, parse_routes, JsRoute};
use crate::web::convert::{range_error, type_error, with_message, Fields};
use crate::web::player::audio_options;
use crate::web::transcriber::options::{parse_options, ParsedOptions};
use alloc::string::String;
use alloc::vec::Vec;
use js_sys::{Function, Object, Reflect};
use wasm_bindgen::prelude::*;
use web_sys::{AudioContext, AudioNode};

/// The app's callbacks (`onError` and `onEvent` go to the session's `AppCallbacks`).
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
    /// `options.controller.onEvent`: served before `onEvent`, with the same event object.
    pub(crate) controller_on_event: Option<Function>,
    /// `options.transcriber.onEvent`: the transcriber's own events (its closes, turn hints).
    pub(crate) transcriber_on_event: Option<Function>,
}

/// The transcriber's part of the options: its core's config, `provision`, the worklet's URL.
pub(crate) struct TranscriberOptions {
    pub(crate) config: TranscriberConfig,
    pub(crate) provision: Function,
    pub(crate) worklet: Option<String>,
}

pub(crate) struct SessionOptions {
    pub(crate) config: VoiceConfig,
    pub(crate) callbacks: SessionCallbacks,
    pub(crate) routes: Vec<JsRoute>,
    pub(crate) turns: TurnConfig,
    /// `None` without `provision` (typed input only).
    pub(crate) transcriber: Option<TranscriberOptions>,
    pub(crate) audio_context: Option<AudioContext>,
    pub(crate) destination: Option<AudioNode>,
    /// `Some(eager_silence_ms)` when preemptive attempts are on (T17).
    pub(crate) preemptive: Option<u64>,
}

/// How long a partial must stay the same before the session guesses the turn ended (T17). Mock
/// recognizers and the real ones this was tried with send a changed partial at least every
/// 250 ms while words come; see docs/semantics.md (T17).
pub(crate) const DEFAULT_EAGER_SILENCE_MS: u64 = 300;

/// `backchannels`: an array of strings (`[]` turns the filter off).
fn parse_backchannels(value: &JsValue) -> Result<Backchannels, JsValue> {
    let array = value
        .dyn_ref::<js_sys::Array>()
        .ok_or_else(|| type_error("options.backchannels must be an array of strings"))?;
    let mut phrases = Vec::new();
    for (index, item) in array.iter().enumerate() {
        let phrase = item.as_string().ok_or_else(|| {
            type_error(
                &[
                    "options.backchannels[",
                    &decimal(index as u64),
                    "] must be a string",
                ]
                .concat(),
            )
        })?;
        phrases.push(phrase);
    }
    Ok(Backchannels::new(phrases))
}

/// `preemptive`: `true`, `false`, or `{ eagerSilenceMs }`.
fn parse_preemptive(fields: &Fields<'_>) -> Result<Option<u64>, JsValue> {
    let value = fields.get("preemptive")?;
    if value.is_undefined() {
        return Ok(None);
    }
    if let Some(on) = value.as_bool() {
        return Ok(on.then_some(DEFAULT_EAGER_SILENCE_MS));
    }
    if !value.is_object() || value.is_function() {
        return Err(type_error(
            "options.preemptive must be a boolean or { eagerSilenceMs }",
        ));
    }
    for key in Object::keys(value.unchecked_ref::<Object>()).iter() {
        if key.as_string().as_deref() != Some("eagerSilenceMs") {
            let name = key.as_string().unwrap_or_default();
            return Err(type_error(
                &[
                    "options.preemptive.",
                    &name,
                    " is not an option (known: eagerSilenceMs)",
                ]
                .concat(),
            ));
        }
    }
    let preemptive = Fields::of(&value, "options.preemptive")?;
    Ok(Some(
        preemptive.positive_ms("eagerSilenceMs", DEFAULT_EAGER_SILENCE_MS)?,
    ))
}

/// The transcriber's callbacks the session answers itself: the app's values for them (which
/// `options.transcriber` may carry, copied from a `LiveTranscriber`'s) are not read.
const SESSION_TRANSCRIBER_CALLBACKS: [&str; 5] = [
    "onPartial",
    "onFinal",
    "onSpeechStart",
    "onStateChange",
    "onError",
];

pub(crate) fn parse_session_options(options: &JsValue) -> Result<SessionOptions, JsValue> {
    let fields = Fields::of(options, "options")?;
    let recovery_text = fields.string("recoveryText")?;
    if recovery_text.trim().is_empty() {
        return Err(range_error("options.recoveryText must not be blank"));
    }
    let mut callbacks = SessionCallbacks {
        synthesize: fields.function("synthesize")?,
        on_state_change: fields.optional_function("onStateChange")?,
        on_caption: fields.optional_function("onCaption")?,
        on_turn: fields.optional_function("onTurn")?,
        on_error: fields.optional_function("onError")?,
        on_needs_gesture: fields.optional_function("onNeedsGesture")?,
        on_event: fields.optional_function("onEvent")?,
        on_speech: fields.optional_function("onSpeech")?,
        on_heard: fields.optional_function("onHeard")?,
        controller_on_event: None,
        transcriber_on_event: None,
    };
    let mut config = VoiceConfig::new(recovery_text);
    config.session_id = Some(super::id::session_id(&fields)?);
    config.tts_timeout_ms = fields.positive_ms("ttsTimeoutMs", config.tts_timeout_ms)?;
    let barge_in = fields.get("bargeIn")?;
    if !barge_in.is_undefined() {
        let barge_in = Fields::of(&barge_in, "options.bargeIn")?;
        let default_min = u64::try_from(config.min_partial_chars).unwrap_or(u64::MAX);
        let min = barge_in.count("minPartialChars", default_min, 1)?;
        config.min_partial_chars = usize::try_from(min).unwrap_or(usize::MAX);
        config.echo_guard_ms = barge_in.non_negative_ms("echoGuardMs", config.echo_guard_ms)?;
        config.min_speech_ms = barge_in.non_negative_ms("minSpeechMs", config.min_speech_ms)?;
        config.confirm_ms = barge_in.non_negative_ms("confirmMs", config.confirm_ms)?;
        config.false_interruption_ms =
            barge_in.non_negative_ms("falseInterruptionMs", config.false_interruption_ms)?;
    }
    let backchannels = fields.get("backchannels")?;
    if !backchannels.is_undefined() {
        config.backchannels = parse_backchannels(&backchannels)?;
    }
    let controller = copy_object(&fields, "controller")?;
    let transcriber = copy_object(&fields, "transcriber")?;
    let provision = session_provision(&fields, &transcriber)?;
    let (audio_context, destination) = audio_options(&fields)?;
    let preemptive = parse_preemptive(&fields)?;

    // The ladder: `options.routes` and `options.controller`, with the session's recovery text.
    let (routes, specs) =
        parse_routes(&fields.get("routes")?).map_err(|e| renamed(e, "controller"))?;
    set(
        &controller,
        "recoveryText",
        &JsValue::from_str(&config.recovery_text),
    );
    let controller_fields = Fields::of(&controller, "options")?;
    let mut turns = parse_config(&controller_fields, specs)
        .and_then(|turns| {
            callbacks.controller_on_event = controller_fields.optional_function("onEvent")?;
            Ok(turns)
        })
        .map_err(|e| renamed(e, "controller"))?;
    // No one listens: the ladder makes no events, rather than making them for nobody.
    turns.emit_events = callbacks.on_event.is_some() || callbacks.controller_on_event.is_some();

    let transcriber = match provision {
        Some(provision) => {
            for key in SESSION_TRANSCRIBER_CALLBACKS {
                set(&transcriber, key, &JsValue::UNDEFINED);
            }
            set(&transcriber, "provision", &provision);
            let ParsedOptions {
                config,
                callbacks: transcriber_callbacks,
                worklet,
            } = parse_options(&transcriber).map_err(|e| renamed(e, "transcriber"))?;
            callbacks.transcriber_on_event = transcriber_callbacks.on_event;
            Some(TranscriberOptions {
                config,
                provision,
                worklet,
            })
        }
        None => None,
    };
    Ok(SessionOptions {
        config,
        callbacks,
        routes,
        turns,
        transcriber,
        audio_context,
        destination,
        preemptive,
    })
}

/// `provision` at the top level, or in `transcriber` with the protocol it provisions for; one.
fn session_provision(
    fields: &Fields<'_>,
    transcriber: &Object,
) -> Result<Option<Function>, JsValue> {
    if !fields.get("protocol")?.is_undefined() {
        // Silently ignored, it would leave the default protocol speaking to another server.
        return Err(type_error(
            "options.protocol is not a VoiceSession option: give it as options.transcriber.protocol",
        ));
    }
    let top = fields.optional_function("provision")?;
    let nested = Fields::of(transcriber, "options.transcriber")?.optional_function("provision")?;
    match (top, nested) {
        (Some(_), Some(_)) => Err(type_error(
            "options.provision and options.transcriber.provision: give one of them",
        )),
        (top, nested) => Ok(top.or(nested)),
    }
}

fn set(object: &Object, key: &str, value: &JsValue) {
    let _ = Reflect::set(object, &JsValue::from_str(key), value);
}

/// A shallow copy of the optional object `options.<key>` (an empty object when absent).
fn copy_object(fields: &Fields<'_>, key: &str) -> Result<Object, JsValue> {
    let value = fields.get(key)?;
    if value.is_undefined() {
        return Ok(Object::new());
    }
    if !value.is_object() {
        return Err(type_error(
            &["options.", key, " must be an object"].concat(),
        ));
    }
    Ok(Object::assign(&Object::new(), value.unchecked_ref()))
}

/// An error of the options of a part, renamed to where the app wrote the field:
/// `options.x` → `options.<key>.x`, and `routes…` → `options.routes…`.
fn renamed(error: JsValue, key: &str) -> JsValue {
    with_message(error, |message| {
        if message.starts_with("routes") {
            ["options.", message].concat()
        } else {
            replace_all(message, "options.", &["options.", key, "."].concat())
        }
    })
}
