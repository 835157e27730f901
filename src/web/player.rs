//! `SpeechPlayer`: speech audio of turns through Web Audio, gapless, silenced within one render
//! quantum, with heard time measured on the audio clock (P1, P3, P4). The engine is
//! [`crate::web::audio::AudioOut`]; this class adds the JS options, arguments and callbacks.

use crate::web::audio::{AudioOut, PlayerEvent, Watches};
use crate::web::audio_stream::StreamSpec;
use crate::web::callbacks::{AppCallbacks, Args};
use crate::web::clock::Clock;
use crate::web::convert::{range_error, type_error, Fields};
use crate::web::driver::Handle;
use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::rc::Rc;
use alloc::string::String;
use js_sys::{ArrayBuffer, Function, Promise};
use wasm_bindgen::prelude::*;
use web_sys::{AudioBuffer, AudioContext, AudioNode, DomException};

/// How long a stream may bring no bytes before its chunk is skipped, by default.
const STREAM_IDLE_MS: u64 = 8000;

struct Callbacks {
    on_playback_start: Option<Function>,
    on_playback_end: Option<Function>,
    on_needs_gesture: Option<Function>,
    on_underrun: Option<Function>,
    /// `onError`, and the one rule for a callback that throws (a player has no `onEvent`).
    app: AppCallbacks,
}

impl Callbacks {
    /// The app's callback for one engine event.
    fn on(&self, event: PlayerEvent) {
        let call =
            |name: &str, callback: &Option<Function>, args: Args, turn_id: Option<&JsValue>| {
                self.app
                    .call_optional(name, callback.as_ref(), args, turn_id);
            };
        match event {
            PlayerEvent::Start(turn_id) => {
                let turn_id = JsValue::from_str(&turn_id);
                let args = Args::One(&turn_id);
                call(
                    "onPlaybackStart",
                    &self.on_playback_start,
                    args,
                    Some(&turn_id),
                );
            }
            PlayerEvent::End(turn_id, heard_ms) => {
                let (turn_id, heard_ms) = (JsValue::from_str(&turn_id), JsValue::from(heard_ms));
                let args = Args::Two(&turn_id, &heard_ms);
                call("onPlaybackEnd", &self.on_playback_end, args, Some(&turn_id));
            }
            PlayerEvent::NeedsGesture => {
                call("onNeedsGesture", &self.on_needs_gesture, Args::None, None);
            }
            PlayerEvent::Underrun(turn_id, gap_ms) => {
                let (turn_id, gap_ms) = (JsValue::from_str(&turn_id), JsValue::from(gap_ms));
                let args = Args::Two(&turn_id, &gap_ms);
                call("onUnderrun", &self.on_underrun, args, Some(&turn_id));
            }
            _ => {}
        }
    }
}

/// Plays the speech of turns: `enqueue(turnId, audio)`, `stop()` (returns heard milliseconds),
/// `resume()` after a user gesture. See DESIGN.md §3.
#[wasm_bindgen]
pub struct SpeechPlayer {
    /// Taken by `free()`: a freed player holds nothing and every method is inert.
    engine: Handle<AudioOut>,
    /// `streamIdleTimeoutMs`.
    stream_idle_ms: u64,
}

#[wasm_bindgen]
impl SpeechPlayer {
    /// `new SpeechPlayer({ audioContext?, destination?, onPlaybackStart?, onPlaybackEnd?,
    /// onNeedsGesture?, onUnderrun?, onError? })`. Throws a `TypeError` naming a bad option.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_optional_param_type = "SpeechPlayerOptions")] options: Option<
            JsValue,
        >,
    ) -> Result<SpeechPlayer, JsValue> {
        crate::web::audio::require_web_audio("SpeechPlayer")?;
        let options = options
            .filter(|options| !options.is_undefined())
            .unwrap_or_else(|| js_sys::Object::new().into());
        let fields = Fields::of(&options, "options")?;
        let (context, output) = audio_options(&fields)?;
        let stream_idle_ms = fields.positive_ms("streamIdleTimeoutMs", STREAM_IDLE_MS)?;
        let callbacks = Callbacks {
            on_playback_start: fields.optional_function("onPlaybackStart")?,
            on_playback_end: fields.optional_function("onPlaybackEnd")?,
            on_needs_gesture: fields.optional_function("onNeedsGesture")?,
            on_underrun: fields.optional_function("onUnderrun")?,
            app: AppCallbacks::new(fields.optional_function("onError")?, None, Clock::new()),
        };
        let sink = Box::new(move |event: PlayerEvent| callbacks.on(event));
        Ok(SpeechPlayer {
            engine: Handle::new(AudioOut::new(context, output, sink, Watches::Playback)?),
            stream_idle_ms,
        })
    }

    /// Plays `audio` (an encoded `ArrayBuffer`, an `AudioBuffer`, or a stream of raw PCM
    /// `{ stream, format: "pcm16" | "f32", sampleRate, channels? }` played as it arrives) after
    /// everything enqueued before it, gapless. Resolves once it has its place in line (or was
    /// dropped because its turn was stopped); rejects with a `TypeError`/`RangeError` naming the
    /// argument.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn enqueue(
        &self,
        #[wasm_bindgen(js_name = turnId, unchecked_param_type = "string")] turn_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "ArrayBuffer | AudioBuffer | SpeechStream")]
        audio: JsValue,
    ) -> Promise {
        let turn_id = match turn_id.as_string() {
            Some(id) if !id.is_empty() => id,
            Some(_) => return Promise::reject(&range_error("turnId must not be empty")),
            None => return Promise::reject(&type_error("turnId must be a string")),
        };
        let Some(engine) = self.engine() else {
            return Promise::reject(&freed());
        };
        if StreamSpec::is_descriptor(&audio) {
            return match StreamSpec::parse(&audio, "audio") {
                Ok(spec) => {
                    engine.enqueue_stream(&turn_id, spec, self.stream_idle_ms);
                    Promise::resolve(&JsValue::UNDEFINED)
                }
                Err(error) => Promise::reject(&error),
            };
        }
        if let Some(buffer) = audio.dyn_ref::<AudioBuffer>() {
            engine.enqueue_buffer(&turn_id, buffer.clone());
            return Promise::resolve(&JsValue::UNDEFINED);
        }
        match audio.dyn_ref::<ArrayBuffer>() {
            Some(bytes) if bytes.byte_length() == 0 => {
                Promise::reject(&range_error("audio must not be empty"))
            }
            Some(bytes) => engine.enqueue_encoded(&turn_id, bytes).1,
            None => Promise::reject(&type_error(
                "audio must be an ArrayBuffer or an AudioBuffer",
            )),
        }
    }

    /// Silences at once (a gain ramp of one render quantum, sources stopped) and returns the
    /// milliseconds of the current turn that played, from the audio clock. Audio of that turn
    /// enqueued later is dropped.
    pub fn stop(&self) -> f64 {
        self.engine().map_or(0.0, |engine| engine.stop().heard_ms)
    }

    /// Resumes a suspended context; call it from a user gesture (P4). Waiting audio then plays.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn resume(&self) -> Promise {
        match self.engine() {
            Some(engine) => engine.resume(),
            None => Promise::reject(&freed()),
        }
    }

    /// `"idle" | "playing" | "suspended"`.
    #[wasm_bindgen(getter, unchecked_return_type = "SpeechPlayerState")]
    pub fn state(&self) -> String {
        self.engine()
            .map_or("idle", |engine| engine.state())
            .to_owned()
    }

    /// The `AudioContext` it plays on.
    #[wasm_bindgen(getter = audioContext)]
    pub fn audio_context(&self) -> Option<AudioContext> {
        self.engine().map(|engine| engine.context().clone())
    }

    /// Silences and releases the player (a context it created is closed). Idempotent, and safe
    /// from inside its callbacks. Also `[Symbol.dispose]()`.
    pub fn free(&self) {
        if let Some(engine) = self.engine.take() {
            engine.stop();
        }
    }
}

impl SpeechPlayer {
    fn engine(&self) -> Option<Rc<AudioOut>> {
        self.engine.get()
    }
}

impl Drop for SpeechPlayer {
    fn drop(&mut self) {
        self.free();
    }
}

fn freed() -> JsValue {
    DomException::new_with_message_and_name("the player was freed", "InvalidStateError")
        .map(JsValue::from)
        .unwrap_or_else(|_| type_error("the player was freed"))
}

/// `audioContext` and `destination` of an options object.
pub(crate) fn audio_options(
    fields: &Fields<'_>,
) -> Result<(Option<AudioContext>, Option<AudioNode>), JsValue> {
    let context = fields.get("audioContext")?;
    let context = if context.is_undefined() {
        None
    } else {
        Some(
            context
                .dyn_into::<AudioContext>()
                .map_err(|_| type_error("options.audioContext must be an AudioContext"))?,
        )
    };
    let output = fields.get("destination")?;
    let output = if output.is_undefined() {
        None
    } else {
        let node = output
            .dyn_into::<AudioNode>()
            .map_err(|_| type_error("options.destination must be an AudioNode"))?;
        if let Some(context) = &context {
            if !JsValue::from(node.context()).eq(&JsValue::from(context.clone())) {
                return Err(type_error(
                    "options.destination must belong to options.audioContext",
                ));
            }
        } else {
            return Err(type_error(
                "options.destination needs options.audioContext, the context it belongs to",
            ));
        }
        Some(node)
    };
    Ok((context, output))
}
