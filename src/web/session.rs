//! `VoiceSession`: the whole agent in one object (V1–V4, P2). Transcriber finals become turns of
//! the ladder; its accepted sentences go through the app's `synthesize` to the speech engine; the
//! user's speech over the agent is a barge-in, and the history keeps what was heard.
//!
//! One machine, one driver, one timer: the sans-IO [`SessionCore`] holds the transcriber, the
//! turn ladder and the voice core and passes what one tells another inside, in Rust. This shell
//! performs what is left — the ladder's route calls and the transcriber's socket and `provision()`
//! through the very I/O code `TurnController` and `LiveTranscriber` use, the speech path through
//! the engine ([`AudioOut`]) — and calls the app, never with a borrow held.

use crate::core::stt::transcriber::Transcriber;
use crate::core::time::Millis;
use crate::core::turn::TurnLadder;
use crate::core::voice::session::{SessionAction, SessionCore};
use crate::core::voice::{VoiceCore, VoiceState};
use crate::web::audio::{AudioOut, PlayerEvent, Watches};
use crate::web::callbacks::{AppCallbacks, Args};
use crate::web::controller::{ladder_io, AnyLadderHost, LadderIo};
use crate::web::convert::{range_error, type_error};
use crate::web::driver::{self, Driver, Handle, Machine};
use crate::web::glue::promise;
use crate::web::transcriber::options::parse_microphone_args;
use crate::web::transcriber::{push_audio, stats_object, TranscriberIo};
use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::rc::{Rc, Weak};
use alloc::string::String;
use core::cell::{Cell, RefCell};
use js_sys::{Function, Promise, Reflect};
use options::{parse_session_options, SessionCallbacks};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::DomException;

mod events;
mod hosts;
mod id;
mod options;
mod perform;
mod speech;

use speech::SpeechIo;

impl Machine for SessionCore {
    type Action = SessionAction;
    fn poll_action(&mut self) -> Option<SessionAction> {
        SessionCore::poll_action(self)
    }
    fn poll_timeout(&self) -> Option<Millis> {
        SessionCore::poll_timeout(self)
    }
    fn handle_timeout(&mut self, now: Millis) {
        SessionCore::handle_timeout(self, now)
    }
}

struct Shared {
    this: Weak<Shared>,
    driver: Driver<SessionCore>,
    /// Routes, attempts and their `AbortController`s (`TurnController`'s I/O).
    ladder: LadderIo,
    /// `provision()`, the socket, the microphone (`LiveTranscriber`'s I/O); `None`: typed input.
    stt: Option<TranscriberIo>,
    /// The speech engine; a new one when its context was closed under it.
    engine: RefCell<Rc<AudioOut>>,
    callbacks: SessionCallbacks,
    /// `onError` and `onEvent`, and the one rule for a callback that throws.
    app: AppCallbacks,
    /// The `synthesize` calls and the audio on its way to the engine.
    speech: RefCell<SpeechIo>,
    /// Set while the shell stops the engine: that stop reports its own `playback_ended`.
    stopping: Cell<bool>,
    /// `start()` was called: a second one opens no second microphone.
    started: Cell<bool>,
}

/// A voice agent in one object: listens, runs turns, speaks, falls silent when the user talks
/// over it, and remembers what the user actually heard. See DESIGN.md §3.
#[wasm_bindgen]
pub struct VoiceSession {
    /// Taken by `free()`: a freed session holds nothing.
    shared: Handle<Shared>,
    session_id: String,
}

#[wasm_bindgen]
impl VoiceSession {
    /// `new VoiceSession(options)`. Throws a `TypeError`/`RangeError` naming a bad option.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "VoiceSessionOptions")] options: JsValue,
    ) -> Result<VoiceSession, JsValue> {
        crate::web::audio::require_web_audio("VoiceSession")?;
        let options = parse_session_options(&options)?;
        let session_id = options.config.session_id.clone().unwrap_or_default();
        // The engine reports to the session, which does not exist yet: through a slot.
        let slot: Rc<RefCell<Weak<Shared>>> = Rc::new(RefCell::new(Weak::new()));
        let engine_slot = slot.clone();
        let sink = Box::new(move |event: PlayerEvent| {
            let shared = engine_slot.borrow().upgrade();
            if let Some(shared) = shared {
                shared.on_player_event(event);
            }
        });
        let engine = AudioOut::new(
            options.audio_context,
            options.destination,
            sink,
            Watches::Session,
        )?;
        let answer_read_chars = options.turns.answer_read_chars();
        let (stt_io, stt_core) = match options.transcriber {
            Some(stt) => {
                let config = &stt.config;
                let io = TranscriberIo::new(
                    stt.provision,
                    config.sample_rate,
                    config.max_message_bytes,
                    stt.worklet,
                );
                (Some(io), Some(Transcriber::new(stt.config)))
            }
            None => (None, None),
        };
        let mut core = SessionCore::new(
            TurnLadder::new(options.turns),
            VoiceCore::new(options.config),
            stt_core,
        );
        if let Some(eager_silence_ms) = options.preemptive {
            core.enable_preemptive(eager_silence_ms);
        }
        let mut callbacks = options.callbacks;
        let routes = options.routes;
        let shared = Rc::new_cyclic(|weak: &Weak<Shared>| {
            let driver = Driver::new(core, weak);
            let app = AppCallbacks::new(
                callbacks.on_error.take(),
                callbacks.on_event.take(),
                driver.clock(),
            );
            let host: Weak<AnyLadderHost> = weak.clone();
            Shared {
                this: weak.clone(),
                driver,
                ladder: LadderIo::new(routes, answer_read_chars, host),
                stt: stt_io,
                engine: RefCell::new(engine),
                callbacks,
                app,
                speech: RefCell::new(SpeechIo::default()),
                stopping: Cell::new(false),
                started: Cell::new(false),
            }
        });
        *slot.borrow_mut() = Rc::downgrade(&shared);
        Ok(VoiceSession {
            shared: Handle::new(shared),
            session_id,
        })
    }

    /// The id in each of this session's turn ids, `<sessionId>:turn-<n>`: `options.sessionId`, or
    /// a random one. Request ids (`<turnId>:attempt:<n>`) are unique across sessions with it.
    #[wasm_bindgen(getter, js_name = sessionId)]
    pub fn session_id(&self) -> String {
        self.session_id.clone()
    }

    /// Starts listening. `microphone`: `true` (default: the default microphone, released by
    /// `stop()`), `false` (no capture: `sendText` and `sendAudio` only) or a `MediaStream` (the
    /// app's: its tracks stay the app's to stop). Resolves once the transcriber is connected and
    /// capturing; rejects with its error.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn start(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "{ microphone?: boolean | MediaStream }")]
        options: Option<JsValue>,
    ) -> Promise {
        let Some(shared) = self.shared() else {
            return Promise::reject(&freed());
        };
        let microphone = match start_microphone(options) {
            Ok(microphone) => microphone,
            Err(error) => return Promise::reject(&error),
        };
        if shared.state().is_terminal() {
            return Promise::reject(&dom_error("InvalidStateError", "the session has stopped"));
        }
        if shared.started.get() {
            // Started already: a second start opens no second microphone.
            return Promise::resolve(&JsValue::UNDEFINED);
        }
        let needs_transcriber = !matches!(microphone, Microphone::None);
        if needs_transcriber && shared.stt.is_none() {
            return Promise::reject(&type_error(
                "options.provision is needed to listen; use start({ microphone: false }) for typed input",
            ));
        }
        shared.started.set(true);
        driver::input(&shared, |core, now| core.start(now));
        let connected = shared.stt.as_ref().map(|stt| {
            stt.start(&*shared, || {
                driver::input(&shared, |core, now| {
                    if let Some(stt) = core.transcriber_at(now) {
                        stt.start(now);
                    }
                });
            })
        });
        promise(async move {
            if let Some(connected) = connected {
                JsFuture::from(connected).await?;
                let stream = match microphone {
                    Microphone::None => None,
                    Microphone::Default => Some(JsValue::UNDEFINED),
                    Microphone::Stream(stream) => Some(stream),
                };
                if let Some(stream) = stream {
                    JsFuture::from(shared.attach(stream)).await?;
                }
            }
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Opens the default microphone (no argument) or captures the app's `MediaStream`, replacing
    /// an earlier capture: for a session started with `{ microphone: false }`, or to switch
    /// devices. Resolves once capturing; rejects once stopped or without `provision`.
    #[wasm_bindgen(js_name = attachMicrophone, unchecked_return_type = "Promise<void>")]
    pub fn attach_microphone(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "MediaStream")] stream: Option<JsValue>,
    ) -> Promise {
        let Some(shared) = self.shared() else {
            return Promise::reject(&freed());
        };
        if shared.state().is_terminal() {
            return Promise::reject(&dom_error("InvalidStateError", "the session has stopped"));
        }
        if shared.stt.is_none() {
            return Promise::reject(&type_error(
                "options.provision is needed to listen to a microphone",
            ));
        }
        shared.attach(stream.unwrap_or(JsValue::UNDEFINED))
    }

    /// A final utterance typed by the user: a barge-in if the agent is busy, then a new turn.
    /// Throws a `TypeError`/`RangeError` naming `text`, or an `InvalidStateError` once stopped.
    #[wasm_bindgen(js_name = sendText)]
    pub fn send_text(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    ) -> Result<(), JsValue> {
        let text = text
            .as_string()
            .ok_or_else(|| type_error("text must be a string"))?;
        if text.trim().is_empty() {
            return Err(range_error("text must not be blank"));
        }
        let shared = self.shared().ok_or_else(freed)?;
        if shared.state().is_terminal() {
            return Err(dom_error("InvalidStateError", "the session has stopped"));
        }
        shared.voice_input(|voice, now| voice.on_final(&text, now));
        Ok(())
    }

    /// Audio the app captured itself (PCM16 mono at the transcriber's `sampleRate`), as
    /// `LiveTranscriber.sendAudio`. Throws a `TypeError` naming `pcm`.
    #[wasm_bindgen(js_name = sendAudio)]
    pub fn send_audio(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Int16Array")] pcm: JsValue,
    ) -> Result<(), JsValue> {
        let shared = self.shared().ok_or_else(freed)?;
        if shared.stt.is_none() {
            return Err(type_error("options.provision is needed to send audio"));
        }
        let pcm = pcm
            .dyn_into::<js_sys::Int16Array>()
            .map_err(|_| type_error("pcm must be an Int16Array"))?;
        push_audio(&*shared, &pcm);
        Ok(())
    }

    /// Barge-in from the app (a button): the turn stops, the agent falls silent.
    pub fn interrupt(&self) {
        if let Some(shared) = self.shared() {
            driver::input(&shared, |core, now| core.interrupt(now));
        }
    }

    /// Resumes audio the browser kept suspended; call it from a user gesture (P4).
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn resume(&self) -> Promise {
        match self.shared() {
            Some(shared) => shared.engine().resume(),
            None => Promise::reject(&freed()),
        }
    }

    /// `"idle" | "listening" | "thinking" | "speaking" | "stopped" | "failed"`.
    #[wasm_bindgen(getter, unchecked_return_type = "VoiceSessionState")]
    pub fn state(&self) -> String {
        self.shared()
            .map_or(VoiceState::Stopped, |shared| shared.state())
            .as_str()
            .to_owned()
    }

    /// The transcriber's state (`LiveTranscriber.state`): `"connecting"`, `"backoff"`, … while
    /// the session may say `listening`; `null` for a session without `provision`.
    #[wasm_bindgen(getter = transcriberState, unchecked_return_type = "TranscriberState | null")]
    pub fn transcriber_state(&self) -> JsValue {
        self.read_transcriber(|stt| JsValue::from_str(stt.state().as_str()))
    }

    /// The transcriber's counters (`LiveTranscriber.stats`); `null` without `provision`.
    #[wasm_bindgen(getter = transcriberStats, unchecked_return_type = "TranscriberStats | null")]
    pub fn transcriber_stats(&self) -> JsValue {
        self.read_transcriber(|stt| stats_object(&stt.stats()))
    }

    /// The chat messages routes with `shareHistory` see: what the user said, and what of each
    /// answer the user heard.
    #[wasm_bindgen(getter, unchecked_return_type = "ChatMessage[]")]
    pub fn history(&self) -> JsValue {
        self.shared()
            .map_or_else(js_sys::Array::new, |shared| {
                ladder_io::history_messages(&*shared)
            })
            .into()
    }

    /// Detaches the transcriber (R4), interrupts, silences, aborts TTS, releases the microphone
    /// it opened; the session ends `stopped` and nothing reconnects. Idempotent.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn stop(&self) -> Promise {
        match self.shared() {
            Some(shared) => shared.stop(),
            None => Promise::resolve(&JsValue::UNDEFINED),
        }
    }

    /// `stop()` without waiting, then releases everything. Idempotent, safe inside callbacks.
    /// Also `[Symbol.dispose]()`.
    pub fn free(&self) {
        if let Some(shared) = self.shared.take() {
            let _ = shared.stop();
            driver::dispose(&shared, |core, now| core.dispose(now));
        }
    }
}

impl VoiceSession {
    fn shared(&self) -> Option<Rc<Shared>> {
        self.shared.get()
    }

    /// Reads the session's transcriber: `null` without one, or once freed.
    fn read_transcriber(&self, read: impl FnOnce(&Transcriber) -> JsValue) -> JsValue {
        self.shared()
            .and_then(|shared| shared.driver.read(|core| core.transcriber().map(read)))
            .flatten()
            .unwrap_or(JsValue::NULL)
    }
}

impl Drop for VoiceSession {
    fn drop(&mut self) {
        self.free();
    }
}

enum Microphone {
    None,
    Default,
    Stream(JsValue),
}

fn start_microphone(options: Option<JsValue>) -> Result<Microphone, JsValue> {
    let options = options.unwrap_or(JsValue::UNDEFINED);
    if options.is_undefined() {
        return Ok(Microphone::Default);
    }
    if !options.is_object() {
        return Err(type_error("options must be an object"));
    }
    let microphone = Reflect::get(&options, &"microphone".into())?;
    if microphone.is_undefined() || microphone.as_bool() == Some(true) {
        Ok(Microphone::Default)
    } else if microphone.as_bool() == Some(false) {
        Ok(Microphone::None)
    } else if microphone.is_instance_of::<web_sys::MediaStream>() {
        Ok(Microphone::Stream(microphone))
    } else {
        Err(type_error(
            "options.microphone must be a boolean or a MediaStream",
        ))
    }
}

impl Shared {
    fn state(&self) -> VoiceState {
        self.driver
            .read(|core| core.voice().state())
            .unwrap_or(VoiceState::Stopped)
    }

    /// Feeds the voice core one input and performs what it queued.
    fn voice_input(self: &Rc<Self>, input: impl FnOnce(&mut VoiceCore, Millis)) {
        self.voice_update(input);
        driver::pump(self);
    }

    /// Feeds the voice core one input; the running pump performs what it queued.
    fn voice_update(&self, input: impl FnOnce(&mut VoiceCore, Millis)) {
        if let Some((mut core, now)) = self.driver.lend() {
            input(core.voice_at(now), now);
        }
    }

    /// Captures `stream` (`undefined`: the default microphone) through the transcriber's I/O.
    fn attach(&self, stream: JsValue) -> Promise {
        let Some(stt) = &self.stt else {
            return Promise::reject(&type_error(
                "options.provision is needed to listen to a microphone",
            ));
        };
        let default = stt.worklet_url();
        match parse_microphone_args(Some(stream), None, default) {
            Ok((stream, worklet)) => stt.attach_microphone(self, stream, worklet),
            Err(error) => Promise::reject(&error),
        }
    }

    /// Feeds the stop (the current turn ends in the voice core and the ladder at once; the
    /// transcriber stops when the voice core's `Detach` is performed) and gives a promise of the
    /// transcriber's end.
    fn stop(self: &Rc<Self>) -> Promise {
        let stopped = self.stt.as_ref().map(|stt| {
            stt.release_microphone();
            stt.until_stopped(&**self)
        });
        driver::input(self, |core, now| core.stop(now));
        stopped.unwrap_or_else(|| Promise::resolve(&JsValue::UNDEFINED))
    }

    fn report_error(&self, error: &JsValue) {
        if !self.driver.is_disposed() {
            self.app.error(error);
        }
    }

    /// Calls an app callback by the one rule (`callbacks`): a throw is a `callback_error`.
    /// Nothing is called once the session was freed.
    fn call(&self, name: &str, callback: &Option<Function>, args: Args, turn_id: Option<&JsValue>) {
        if !self.driver.is_disposed() {
            self.app
                .call_optional(name, callback.as_ref(), args, turn_id);
        }
    }
}

fn dom_error(name: &str, message: &str) -> JsValue {
    DomException::new_with_message_and_name(message, name)
        .map(JsValue::from)
        .unwrap_or_else(|_| type_error(message))
}

fn freed() -> JsValue {
    dom_error("InvalidStateError", "the session was freed")
}
