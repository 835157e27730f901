//! `LiveTranscriber`: live speech-to-text in the page that never loops and loses nothing
//! (DESIGN.md §2, L1–L6). The sans-IO [`Transcriber`] decides; this shell performs its actions
//! with the app's `provision()`, a browser `WebSocket`, one timer and the microphone.
//!
//! It runs on the shared [`driver`](crate::web::driver): every JS callback — the app's and
//! `provision()` — runs with no borrow held, a call made from inside a callback (say `stop()` from
//! `onFinal`) only queues and the outer pump performs what it queued, re-checked against the core
//! (a queued `provision()` or connect is skipped once the transcriber stopped). `free()` is
//! idempotent and works from any callback.
//!
//! Server messages go to the core as text: `core::stt::gladia` reads them with the crate's own small
//! JSON reader.

mod dev_provisioner;
mod errors;
mod io;
mod options;
mod provision;
mod socket;

pub use options::gladia_provisioner;

use crate::core::stt::transcriber::{Action, State, Stats, Transcriber};
use crate::core::time::Millis;
use crate::web::convert::type_error;
use crate::web::driver::{self, Driver, Handle, Machine, Shell};
use crate::web::js_object::JsObject;
use crate::web::microphone::{self, Capture};
use errors::{aborted, callback_error, dom_error, error_to_js, freed};
use js_sys::{Function, Int16Array, Promise, Uint8Array};
use options::{parse_options, Callbacks, ParsedOptions};
use socket::Socket;
use std::cell::RefCell;
use std::rc::{Rc, Weak};
use wasm_bindgen::prelude::*;
use web_sys::AbortController;

impl Machine for Transcriber {
    type Action = Action;
    fn poll_action(&mut self) -> Option<Action> {
        Transcriber::poll_action(self)
    }
    fn poll_timeout(&self) -> Option<Millis> {
        Transcriber::poll_timeout(self)
    }
    fn handle_timeout(&mut self, now: Millis) {
        Transcriber::handle_timeout(self, now)
    }
}

/// Browser resources and waiting promises.
#[derive(Default)]
struct Io {
    /// The current socket; events of any other are ignored.
    socket: Option<Socket>,
    socket_id: u32,
    /// The `provision()` call whose result counts, and its abort.
    provision_id: u32,
    provision_abort: Option<AbortController>,
    /// `id` of the current session, as `provision()` gave it.
    session_id: JsValue,
    /// The socket's subprotocols, as `provision()` gave them.
    protocols: JsValue,
    capture: Option<Capture>,
    capture_id: u32,
    /// `start()` promises: resolved at the first `open`, rejected at `stopped`/`failed`.
    start_waiters: Vec<(Function, Function)>,
    /// `stop()` promises: resolved at `stopped`/`failed`.
    stop_waiters: Vec<Function>,
    /// The terminal error, once failed.
    failure: JsValue,
}

struct Shared {
    driver: Driver<Transcriber>,
    callbacks: Callbacks,
    /// `options.workletUrl`: where `attachMicrophone` loads its worklet unless told otherwise.
    worklet: Option<String>,
    sample_rate: u32,
    io: RefCell<Io>,
    /// Longest server text message read, in UTF-8 bytes (checked before any copy into wasm).
    max_message_bytes: f64,
}

/// Live speech-to-text over one provider's wire protocol (`options.protocol`, default Gladia live
/// v2): provisions through the app, reconnects as the reconnect policy says (R1–R6), buffers audio
/// while disconnected (L4) and reports transcripts. See DESIGN.md §2.
#[wasm_bindgen]
pub struct LiveTranscriber {
    /// Taken by `free()`: a freed transcriber holds nothing and every method is inert.
    shared: Handle<Shared>,
    /// State and counters at `free()`, for the getters of a freed transcriber.
    last: RefCell<(State, Stats)>,
}

#[wasm_bindgen]
impl LiveTranscriber {
    /// `new LiveTranscriber(options)`. Throws a `TypeError`/`RangeError` naming a bad option.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "LiveTranscriberOptions")] options: JsValue,
    ) -> Result<LiveTranscriber, JsValue> {
        let ParsedOptions {
            config,
            callbacks,
            worklet,
        } = parse_options(&options)?;
        let shared = Rc::new_cyclic(|weak: &Weak<Shared>| Shared {
            worklet,
            sample_rate: config.sample_rate,
            max_message_bytes: config.max_message_bytes as f64,
            driver: Driver::new(Transcriber::new(config), weak),
            callbacks,
            io: RefCell::new(Io::default()),
        });
        Ok(LiveTranscriber {
            shared: Handle::new(shared),
            last: RefCell::new((State::Stopped, Stats::default())),
        })
    }

    /// Every protocol's name, as `options.protocol` takes it.
    #[wasm_bindgen(getter, unchecked_return_type = "TranscriberProtocol[]")]
    pub fn protocols() -> js_sys::Array {
        crate::core::stt::protocols::ALL
            .iter()
            .map(|profile| JsValue::from_str(profile.name))
            .collect()
    }

    /// Provisions a session and connects. Resolves once the socket first opens; rejects with the
    /// terminal error if the transcriber fails first, or an `AbortError` if it is stopped first.
    /// Calling it again is harmless.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn start(&self) -> Promise {
        let Some(shared) = self.shared() else {
            return Promise::reject(&freed());
        };
        let shared = &shared;
        match shared.state() {
            State::Open => Promise::resolve(&JsValue::UNDEFINED),
            State::Failed => Promise::reject(&shared.io.borrow().failure),
            State::Stopped => Promise::reject(&dom_error(
                "InvalidStateError",
                "the transcriber has stopped; create a new one",
            )),
            _ => {
                let promise = Promise::new(&mut |resolve, reject| {
                    shared.io.borrow_mut().start_waiters.push((resolve, reject));
                });
                driver::input(shared, |core, now| core.start(now));
                promise
            }
        }
    }

    /// Captures `stream`, or the default microphone when absent, as 20 ms PCM16 frames at
    /// `sampleRate` that go through `sendAudio`. Resolves once capture runs; rejects with the
    /// browser's error (e.g. `NotAllowedError`), a `TypeError` for a non-`MediaStream`, an
    /// `AbortError` when stopped meanwhile, or turnguard's `worklet_blocked` error (also given to
    /// `onError`) when the capture worklet cannot load. `options.workletUrl` loads the worklet from
    /// that URL (a same-origin copy of `capture-worklet.js`) instead of a `blob:` URL; the options
    /// may also come first, with the stream as `options.stream`. A later call replaces the earlier
    /// capture. Every failure releases the microphone it opened.
    #[wasm_bindgen(js_name = attachMicrophone, unchecked_return_type = "Promise<void>")]
    pub fn attach_microphone_with(
        &self,
        #[wasm_bindgen(
            js_name = streamOrOptions,
            unchecked_optional_param_type = "MediaStream | AttachMicrophoneOptions"
        )]
        stream_or_options: Option<JsValue>,
        #[wasm_bindgen(unchecked_optional_param_type = "AttachMicrophoneOptions")] options: Option<
            JsValue,
        >,
    ) -> Promise {
        let default_worklet = self.shared().and_then(|shared| shared.worklet.clone());
        let (stream, worklet) = match options::parse_microphone_args(
            stream_or_options,
            options,
            default_worklet.as_deref(),
        ) {
            Ok(parsed) => parsed,
            Err(error) => return Promise::reject(&error),
        };
        let Some(shared) = self.shared() else {
            return Promise::reject(&freed());
        };
        let shared = &shared;
        if !shared.accepts_audio() {
            return Promise::reject(&dom_error(
                "InvalidStateError",
                "the transcriber has stopped",
            ));
        }
        let id = {
            let mut io = shared.io.borrow_mut();
            io.capture_id = io.capture_id.wrapping_add(1);
            io.capture_id
        };
        let weak = Rc::downgrade(shared);
        let on_blocked = Rc::downgrade(shared);
        let on_frame = Rc::downgrade(shared);
        microphone::start(
            stream,
            shared.sample_rate,
            worklet,
            move |bytes| {
                if let Some(shared) = on_frame.upgrade() {
                    shared.push_bytes(bytes);
                }
            },
            move |capture| {
                // Dropping `capture` on any error path stops it.
                match weak.upgrade() {
                    Some(shared) => shared.adopt_capture(id, capture),
                    None => Err(aborted()),
                }
            },
            move |error| {
                if let Some(shared) = on_blocked.upgrade() {
                    shared.call1(&shared.callbacks.on_error, "onError", error);
                }
            },
        )
    }

    /// One frame of PCM16 mono audio at `sampleRate`: sent at once when connected, buffered
    /// otherwise (up to `bufferMs`), ignored after `stop()`. Throws a `TypeError` unless `pcm` is
    /// an `Int16Array`.
    #[wasm_bindgen(js_name = sendAudio)]
    pub fn send_audio(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Int16Array")] pcm: JsValue,
    ) -> Result<(), JsValue> {
        let pcm = pcm
            .dyn_into::<Int16Array>()
            .map_err(|_| type_error("pcm must be an Int16Array"))?;
        if let Some(shared) = self.shared() {
            shared.push_audio(&pcm);
        }
        Ok(())
    }

    /// Detaches for good (R4): releases the microphone, sends `stop_recording` if connected and
    /// waits for the last transcripts (up to `stopTimeoutMs`), then closes. Nothing connects or
    /// provisions afterwards. Resolves once `stopped` (or at once if already over); idempotent.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn stop(&self) -> Promise {
        let Some(shared) = self.shared() else {
            return Promise::resolve(&JsValue::UNDEFINED);
        };
        let shared = &shared;
        shared.release_microphone();
        if shared.state().is_terminal() {
            return Promise::resolve(&JsValue::UNDEFINED);
        }
        let promise = Promise::new(&mut |resolve, _reject| {
            shared.io.borrow_mut().stop_waiters.push(resolve);
        });
        driver::input(shared, |core, now| core.stop(now));
        promise
    }

    /// Detaches at once (R4) — `stop_recording` if connected, close, release the microphone —
    /// without waiting for the last transcripts; a `start()` under way rejects with an
    /// `AbortError`. Idempotent, and safe from inside any callback, `provision()` included, even
    /// one that runs inside a method of this transcriber. Also `[Symbol.dispose]()`.
    ///
    /// This replaces the `free()` wasm-bindgen generates, which throws when called twice or from
    /// inside a method; the small handle left behind is freed when JS collects the object.
    pub fn free(&self) {
        if let Some(shared) = self.shared.take() {
            shared.dispose();
            if let (Some(snapshot), Ok(mut last)) = (
                shared.driver.read(|core| (core.state(), core.stats())),
                self.last.try_borrow_mut(),
            ) {
                *last = snapshot;
            }
        }
    }

    /// `"idle" | "provisioning" | "connecting" | "open" | "backoff" | "stopped" | "failed"`.
    #[wasm_bindgen(getter, unchecked_return_type = "TranscriberState")]
    pub fn state(&self) -> String {
        self.snapshot().0.as_str().to_owned()
    }

    /// The `id` of the current session as `provision()` gave it, if any.
    #[wasm_bindgen(getter = sessionId, unchecked_return_type = "string | undefined")]
    pub fn session_id(&self) -> JsValue {
        self.shared().map_or(JsValue::UNDEFINED, |shared| {
            shared.io.borrow().session_id.clone()
        })
    }

    /// Counters since creation.
    #[wasm_bindgen(getter, unchecked_return_type = "TranscriberStats")]
    pub fn stats(&self) -> JsValue {
        let stats = self.snapshot().1;
        let number = |value: u64| value as f64;
        JsObject::new()
            .set("framesSent", number(stats.frames_sent))
            .set("framesResent", number(stats.frames_resent))
            .set("framesBuffered", number(stats.frames_buffered))
            .set("framesDropped", number(stats.frames_dropped))
            .set("framesDiscarded", number(stats.frames_discarded))
            .set("connections", number(stats.connections))
            .set("provisions", number(stats.provisions))
            .set("malformedMessages", number(stats.malformed_messages))
            .set("unknownMessages", number(stats.unknown_messages))
            .build()
    }
}

impl LiveTranscriber {
    /// `attachMicrophone(stream)` for Rust callers (the voice session): the `blob:` worklet.
    pub fn attach_microphone(&self, stream: Option<JsValue>) -> Promise {
        self.attach_microphone_with(stream, None)
    }

    fn shared(&self) -> Option<Rc<Shared>> {
        self.shared.get()
    }

    /// State and counters, live or as they were at `free()`.
    fn snapshot(&self) -> (State, Stats) {
        let last = || {
            self.last
                .try_borrow()
                .map_or((State::Stopped, Stats::default()), |last| *last)
        };
        match self.shared() {
            Some(shared) => shared
                .driver
                .read(|core| (core.state(), core.stats()))
                .unwrap_or_else(last),
            None => last(),
        }
    }
}

impl Drop for LiveTranscriber {
    /// Collected by JS without `free()`: the same ending.
    fn drop(&mut self) {
        self.free();
    }
}

impl Shell for Shared {
    type Machine = Transcriber;

    fn driver(&self) -> &Driver<Transcriber> {
        &self.driver
    }

    fn perform(self: &Rc<Self>, action: Action) {
        self.perform_action(action);
    }
}

impl Shared {
    fn state(&self) -> State {
        self.driver
            .read(Transcriber::state)
            .unwrap_or(State::Stopped)
    }

    /// Detaches for good, at once (R4): releases the microphone, then the core's `dispose`
    /// (`stop_recording` if connected, close) is performed and the timer cleared. Idempotent.
    fn dispose(self: &Rc<Self>) {
        self.release_microphone();
        driver::dispose(self, |core, now| core.dispose(now));
    }

    fn perform_action(self: &Rc<Self>, action: Action) {
        match action {
            // Queued work is checked against the core's state right before it is done: a
            // re-entrant stop/free from a callback may have come after it was queued.
            Action::Provision => {
                if self.state() == State::Provisioning {
                    self.provision();
                }
            }
            Action::CancelProvision => self.abort_provision(),
            Action::Connect(url) => {
                if self.state() == State::Connecting {
                    self.connect(&url);
                }
            }
            Action::SendBinary(bytes) => {
                if let Some(socket) = self.io.borrow().socket.as_ref() {
                    socket.send_bytes(&bytes);
                }
            }
            Action::SendText(text) => {
                if let Some(socket) = self.io.borrow().socket.as_ref() {
                    socket.send_text(&text);
                }
            }
            Action::Close => self.close_socket(),
            Action::StateChanged(state) => {
                self.report_close();
                self.state_changed(state);
            }
            Action::Partial { text, utterance } => {
                let meta = self.meta(utterance);
                let callback = &self.callbacks.on_partial;
                self.call2(callback, "onPartial", &JsValue::from_str(&text), &meta);
            }
            Action::Final { text, utterance } => {
                let meta = self.meta(utterance);
                let callback = &self.callbacks.on_final;
                self.call2(callback, "onFinal", &JsValue::from_str(&text), &meta);
            }
            Action::SpeechStart { utterance } => {
                let meta = self.meta(utterance);
                self.call1(&self.callbacks.on_speech_start, "onSpeechStart", &meta);
            }
            // The guess's text stays in the page's own code: events carry no conversation text.
            Action::EagerFinal { utterance, .. } => {
                self.report_turn_hint("eager_end_of_turn", utterance)
            }
            Action::Resumed { utterance } => self.report_turn_hint("turn_resumed", utterance),
            Action::Error(error) => {
                let error_js = error_to_js(&error);
                if error.is_terminal() {
                    self.io.borrow_mut().failure = error_js.clone();
                }
                self.call1(&self.callbacks.on_error, "onError", &error_js);
            }
        }
    }

    fn push_audio(self: &Rc<Self>, pcm: &Int16Array) {
        // The samples' bytes as they lie in memory: little-endian in every browser, as Gladia wants.
        let bytes = Uint8Array::new_with_byte_offset_and_length(
            &pcm.buffer(),
            pcm.byte_offset(),
            pcm.byte_length(),
        )
        .to_vec();
        self.push_bytes(bytes);
    }

    /// One frame as PCM16 little-endian bytes.
    fn push_bytes(self: &Rc<Self>, bytes: Vec<u8>) {
        driver::input(self, |core, now| core.send_audio(bytes, now));
    }

    fn accepts_audio(&self) -> bool {
        !self.driver.is_disposed()
            && self
                .driver
                .read(|core| !core.state().is_terminal() && !core.is_stopping())
                .unwrap_or(false)
    }

    fn adopt_capture(&self, id: u32, capture: Capture) -> Result<(), JsValue> {
        if self.io.borrow().capture_id != id || !self.accepts_audio() {
            return Err(aborted());
        }
        let previous = self.io.borrow_mut().capture.replace(capture);
        drop(previous);
        Ok(())
    }

    fn release_microphone(&self) {
        let capture = {
            let mut io = self.io.borrow_mut();
            io.capture_id = io.capture_id.wrapping_add(1); // a capture still starting is refused
            io.capture.take()
        };
        drop(capture);
    }

    fn state_changed(&self, state: State) {
        let name = JsValue::from_str(state.as_str());
        self.call1(&self.callbacks.on_state_change, "onStateChange", &name);
        match state {
            State::Open => {
                let waiters = std::mem::take(&mut self.io.borrow_mut().start_waiters);
                for (resolve, _) in waiters {
                    let _ = resolve.call0(&JsValue::UNDEFINED);
                }
            }
            State::Stopped | State::Failed => {
                self.release_microphone();
                self.abort_provision();
                let (starts, stops, failure) = {
                    let mut io = self.io.borrow_mut();
                    let starts = std::mem::take(&mut io.start_waiters);
                    (
                        starts,
                        std::mem::take(&mut io.stop_waiters),
                        io.failure.clone(),
                    )
                };
                let reason = if state == State::Failed {
                    failure
                } else {
                    aborted()
                };
                for (_, reject) in starts {
                    let _ = reject.call1(&JsValue::UNDEFINED, &reason);
                }
                for resolve in stops {
                    let _ = resolve.call0(&JsValue::UNDEFINED);
                }
            }
            _ => {}
        }
    }

    /// `onEvent` gets the close the core just answered, if any, before the state it led to.
    fn report_close(&self) {
        let report = self
            .driver
            .update(|core, _| core.take_close_report())
            .flatten();
        let (Some(report), Some(_)) = (report, &self.callbacks.on_event) else {
            return;
        };
        let event = JsObject::new()
            .set("type", "close")
            .set("code", f64::from(report.code))
            .set("class", report.class.as_str())
            .set("next", report.next.as_str())
            .set("delayMs", report.delay_ms as f64)
            .build();
        self.call1(&self.callbacks.on_event, "onEvent", &event);
    }

    /// `onEvent` gets the provider's end-of-turn guess, or its withdrawal, for `utterance`.
    fn report_turn_hint(&self, kind: &str, utterance: u64) {
        if self.callbacks.on_event.is_some() {
            let event = JsObject::new()
                .set("type", kind)
                .set("utterance", utterance as f64)
                .build();
            self.call1(&self.callbacks.on_event, "onEvent", &event);
        }
    }

    fn meta(&self, utterance: u64) -> JsValue {
        JsObject::new()
            .set("sessionId", self.io.borrow().session_id.clone())
            .set("utterance", utterance as f64)
            .build()
    }

    fn call1(&self, callback: &Option<Function>, name: &str, a: &JsValue) {
        if let Some(callback) = callback {
            let result = callback.call1(&JsValue::UNDEFINED, a);
            self.report_throw(name, result);
        }
    }

    fn call2(&self, callback: &Option<Function>, name: &str, a: &JsValue, b: &JsValue) {
        if let Some(callback) = callback {
            let result = callback.call2(&JsValue::UNDEFINED, a, b);
            self.report_throw(name, result);
        }
    }

    /// A throwing callback changes nothing; it is reported to `onError` (unless it is `onError`).
    fn report_throw(&self, name: &str, result: Result<JsValue, JsValue>) {
        if let (Err(cause), Some(on_error)) = (result, &self.callbacks.on_error) {
            if name != "onError" {
                let _ = on_error.call1(&JsValue::UNDEFINED, &callback_error(name, &cause));
            }
        }
    }
}
