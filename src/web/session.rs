//! `VoiceSession`: the whole agent in one object (V1–V4, P2). Transcriber finals become turns of
//! a `TurnController`; its accepted sentences go through the app's `synthesize` to the speech
//! engine; the user's speech over the agent is a barge-in, and the history keeps what was heard.
//!
//! The decisions are the sans-IO [`VoiceCore`]'s; this shell composes the crate's own
//! `TurnController`, `LiveTranscriber` and speech engine ([`AudioOut`]) and performs the core's
//! actions on them through the shared driver, so no JS callback runs with a borrow held.

use crate::core::time::Millis;
use crate::core::voice::playback::ChunkHeard;
use crate::core::voice::{VoiceAction, VoiceCore, VoiceError, VoiceState};
use crate::web::audio::{AudioOut, PlayerEvent};
use crate::web::controller::TurnController;
use crate::web::convert::{range_error, type_error};
use crate::web::driver::{self, Driver, Handle, Machine, Shell};
use crate::web::transcriber::LiveTranscriber;
use js_sys::{Function, Promise, Reflect};
use options::{parse_session_options, SessionCallbacks};
use rustc_hash::FxHashMap;
use speech::abort;
use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};
use web_sys::{AbortController, AudioBuffer, DomException};

mod events;
mod id;
mod options;
mod speech;
mod wiring;

impl Machine for VoiceCore {
    type Action = VoiceAction;
    fn poll_action(&mut self) -> Option<VoiceAction> {
        VoiceCore::poll_action(self)
    }
    fn poll_timeout(&self) -> Option<Millis> {
        VoiceCore::poll_timeout(self)
    }
    fn handle_timeout(&mut self, now: Millis) {
        VoiceCore::handle_timeout(self, now)
    }
}

/// One `synthesize` call: its abort, and its audio once it came.
struct Job {
    abort: AbortController,
    audio: Option<JsValue>,
}

#[derive(Default)]
struct Io {
    jobs: FxHashMap<u64, Job>,
    /// The engine's sequence number of each job's chunk, for what played of it.
    chunks: FxHashMap<u64, u64>,
    /// The recovery text's decoded audio: synthesized once per session.
    recovery_audio: Option<AudioBuffer>,
    /// The `synthesize` signal of each job whose audio stream still arrives.
    streams: FxHashMap<u64, AbortController>,
}

struct Shared {
    driver: Driver<VoiceCore>,
    controller: TurnController,
    transcriber: Option<LiveTranscriber>,
    engine: Rc<AudioOut>,
    callbacks: SessionCallbacks,
    io: RefCell<Io>,
    /// Set while the shell stops the engine: that stop reports its own `playback_ended`.
    stopping: Cell<bool>,
}

/// A voice agent in one object: listens, runs turns, speaks, falls silent when the user talks
/// over it, and remembers what the user actually heard. See DESIGN.md §3.
#[wasm_bindgen]
pub struct VoiceSession {
    /// Taken by `free()`: a freed session holds nothing.
    shared: Handle<Shared>,
    session_id: String,
}

type Slot = Rc<RefCell<Weak<Shared>>>;

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
        let slot: Slot = Rc::new(RefCell::new(Weak::new()));

        let controller =
            wiring::controller(&slot, options.routes, options.controller, &options.config)?;
        let transcriber = wiring::transcriber(&slot, options.transcriber)?;

        let engine_slot = slot.clone();
        let sink = Box::new(move |event: PlayerEvent| {
            wiring::with_session(&engine_slot, |s| s.on_player_event(event));
        });
        let engine = AudioOut::new(options.audio_context, options.destination, sink)?;

        let shared = Rc::new_cyclic(|weak: &Weak<Shared>| Shared {
            driver: Driver::new(VoiceCore::new(options.config), weak),
            controller,
            transcriber,
            engine,
            callbacks: options.callbacks,
            io: RefCell::new(Io::default()),
            stopping: Cell::new(false),
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
        match shared.state() {
            VoiceState::Idle => {}
            state if state.is_terminal() => {
                return Promise::reject(&dom_error("InvalidStateError", "the session has stopped"));
            }
            // Started already: a second start opens no second microphone.
            _ => return Promise::resolve(&JsValue::UNDEFINED),
        }
        let needs_transcriber = !matches!(microphone, Microphone::None);
        if needs_transcriber && shared.transcriber.is_none() {
            return Promise::reject(&type_error(
                "options.provision is needed to listen; use start({ microphone: false }) for typed input",
            ));
        }
        driver::input(&shared, |core, _| core.start());
        future_to_promise(async move {
            if let Some(transcriber) = &shared.transcriber {
                JsFuture::from(transcriber.start()).await?;
                let stream = match microphone {
                    Microphone::None => None,
                    Microphone::Default => Some(None),
                    Microphone::Stream(stream) => Some(Some(stream)),
                };
                if let Some(stream) = stream {
                    JsFuture::from(transcriber.attach_microphone(stream)).await?;
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
        match &shared.transcriber {
            Some(transcriber) => transcriber.attach_microphone(stream),
            None => Promise::reject(&type_error(
                "options.provision is needed to listen to a microphone",
            )),
        }
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
        driver::input(&shared, |core, now| core.on_final(&text, now));
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
        match &shared.transcriber {
            Some(transcriber) => transcriber.send_audio(pcm),
            None => Err(type_error("options.provision is needed to send audio")),
        }
    }

    /// Barge-in from the app (a button): the turn stops, the agent falls silent.
    pub fn interrupt(&self) {
        if let Some(shared) = self.shared() {
            shared.cut(|core, now| core.interrupt(now));
        }
    }

    /// Resumes audio the browser kept suspended; call it from a user gesture (P4).
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn resume(&self) -> Promise {
        match self.shared() {
            Some(shared) => shared.engine.resume(),
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

    /// The chat messages routes with `shareHistory` see: what the user said, and what of each
    /// answer the user heard.
    #[wasm_bindgen(getter, unchecked_return_type = "ChatMessage[]")]
    pub fn history(&self) -> JsValue {
        self.shared()
            .map_or_else(js_sys::Array::new, |shared| {
                shared.controller.history_messages()
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
            driver::dispose(&shared, |_, _| {});
        }
    }
}

impl VoiceSession {
    fn shared(&self) -> Option<Rc<Shared>> {
        self.shared.get()
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

impl Shell for Shared {
    type Machine = VoiceCore;

    fn driver(&self) -> &Driver<VoiceCore> {
        &self.driver
    }

    fn perform(self: &Rc<Self>, action: VoiceAction) {
        match action {
            VoiceAction::StateChanged(state) => {
                let name = JsValue::from_str(state.as_str());
                self.call(&self.callbacks.on_state_change, &[name]);
            }
            VoiceAction::Caption { text, is_final } => {
                let args = [JsValue::from_str(&text), JsValue::from_bool(is_final)];
                self.call(&self.callbacks.on_caption, &args);
            }
            VoiceAction::StartTurn { turn_id, input } => self.start_turn(turn_id, &input),
            VoiceAction::InterruptTurn { turn_id } => {
                let _ = self.controller.interrupt(JsValue::from_str(&turn_id));
            }
            VoiceAction::Synthesize {
                job,
                turn_id,
                text,
                recovery,
            } => self.synthesize(job, &turn_id, &text, recovery),
            VoiceAction::AbortSynthesis { job } => {
                let aborted = self.io.borrow_mut().jobs.remove(&job);
                if let Some(aborted) = aborted {
                    abort(&aborted.abort);
                }
            }
            VoiceAction::Play {
                job,
                turn_id,
                recovery,
            } => self.play(job, &turn_id, recovery),
            VoiceAction::StopPlayback { turn_id } => {
                self.release_streams();
                let stopped = self.stop_engine();
                let chunks: Vec<(u64, ChunkHeard)> = {
                    let mut io = self.io.borrow_mut();
                    let by_seq: FxHashMap<u64, u64> =
                        io.chunks.drain().map(|(job, seq)| (seq, job)).collect();
                    stopped
                        .chunks
                        .iter()
                        .filter_map(|chunk| Some((*by_seq.get(&chunk.seq)?, *chunk)))
                        .collect()
                };
                self.driver
                    .update(|core, _| core.on_playback_stopped(&turn_id, &chunks));
            }
            VoiceAction::SetHeard { turn_id, text } => {
                let (turn_js, text_js) = (JsValue::from_str(&turn_id), JsValue::from_str(&text));
                let _ = self
                    .controller
                    .set_heard_text(turn_js.clone(), text_js.clone());
                self.call(&self.callbacks.on_heard, &[turn_js, text_js]);
            }
            VoiceAction::Error(error) => self.report_error(&voice_error(&error)),
            VoiceAction::Event(event) => self.on_voice_event(event),
            VoiceAction::Detach => {
                let jobs: Vec<Job> = self
                    .io
                    .borrow_mut()
                    .jobs
                    .drain()
                    .map(|(_, job)| job)
                    .collect();
                for job in jobs {
                    abort(&job.abort);
                }
                self.release_streams();
                self.stop_engine();
                if let Some(transcriber) = &self.transcriber {
                    // R4: stop_recording, close, release the microphone; nothing reconnects.
                    let _ = transcriber.stop();
                }
            }
        }
    }
}

impl Shared {
    fn state(&self) -> VoiceState {
        self.driver
            .read(VoiceCore::state)
            .unwrap_or(VoiceState::Stopped)
    }

    fn stop(self: &Rc<Self>) -> Promise {
        self.cut(|core, now| core.stop(now));
        match &self.transcriber {
            Some(transcriber) => transcriber.stop(),
            None => Promise::resolve(&JsValue::UNDEFINED),
        }
    }

    /// Feeds a stop or an interrupt, and interrupts the cut turn in the controller at once (V5).
    /// Called from a callback inside the controller's own `run` (its `onEvent`), the session's
    /// queued `InterruptTurn` would come only after `run` returned, its route already called.
    fn cut(self: &Rc<Self>, input: impl FnOnce(&mut VoiceCore, Millis)) {
        let turn = self
            .driver
            .read(|core| core.current_turn().map(str::to_owned))
            .flatten();
        driver::input(self, input);
        if let Some(turn) = turn {
            // False (and harmless) for a turn the controller never saw or already settled.
            let _ = self.controller.interrupt(JsValue::from_str(&turn));
        }
    }

    fn start_turn(self: &Rc<Self>, turn_id: String, input: &str) {
        let turn_js = JsValue::from_str(&turn_id);
        let run = self.controller.run(turn_js, JsValue::from_str(input));
        let weak = Rc::downgrade(self);
        wasm_bindgen_futures::spawn_local(async move {
            let settled = JsFuture::from(run).await;
            let Some(shared) = weak.upgrade() else {
                return;
            };
            match &settled {
                Ok(record) => shared.call(&shared.callbacks.on_turn, std::slice::from_ref(record)),
                Err(error) => shared.report_error(error),
            }
            driver::input(&shared, |core, now| core.on_turn_settled(&turn_id, now));
        });
    }

    /// Silences the engine and reports what it cut as one `playback_ended` with `cut: true`.
    fn stop_engine(&self) -> crate::core::voice::playback::Stopped {
        self.stopping.set(true);
        let stopped = self.engine.stop();
        self.stopping.set(false);
        self.emit_stopped(&stopped);
        stopped
    }

    fn report_error(&self, error: &JsValue) {
        self.call(&self.callbacks.on_error, std::slice::from_ref(error));
    }

    /// Calls an app callback; a throwing one changes nothing.
    fn call(&self, callback: &Option<Function>, args: &[JsValue]) {
        if let Some(callback) = callback {
            let args: js_sys::Array = args.iter().collect();
            let _ = callback.apply(&JsValue::UNDEFINED, &args);
        }
    }
}

fn voice_error(error: &VoiceError) -> JsValue {
    let js = js_sys::Error::new(&error.to_string());
    let _ = Reflect::set(&js, &"code".into(), &error.code().into());
    let _ = Reflect::set(&js, &"terminal".into(), &JsValue::FALSE);
    let _ = Reflect::set(&js, &"turnId".into(), &error.turn_id().into());
    js.into()
}

fn dom_error(name: &str, message: &str) -> JsValue {
    DomException::new_with_message_and_name(message, name)
        .map(JsValue::from)
        .unwrap_or_else(|_| type_error(message))
}

fn freed() -> JsValue {
    dom_error("InvalidStateError", "the session was freed")
}
