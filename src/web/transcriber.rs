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
//! Server messages go to the core as text: the protocol reads them with the crate's own small
//! JSON reader. The I/O (`io`, `capture`) is shared with `VoiceSession`, whose machine has a
//! transcriber inside: this class adds the app's callbacks and `stop()`.

use alloc::borrow::ToOwned;
use alloc::string::String;
mod capture;
#[cfg(turnguard_gladia)]
mod dev_provisioner;
mod errors;
pub(crate) mod io;
mod network;
pub(crate) mod options;
mod provision;
mod socket;

pub(crate) use capture::push_audio;
#[cfg(turnguard_gladia)]
pub use dev_provisioner::gladia_provisioner;
pub(crate) use io::{AnyTranscriberHost, TranscriberHost, TranscriberIo};

use crate::core::stt::transcriber::{Action, State, Stats, Transcriber};
use crate::core::time::Millis;
use crate::web::callbacks::{AppCallbacks, Args};
use crate::web::convert::type_error;
use crate::web::driver::{self, Driver, Handle, Machine, Shell};
use crate::web::js_object::JsObject;
use alloc::rc::{Rc, Weak};
use core::cell::{Ref, RefCell, RefMut};
use errors::freed;
use js_sys::{Function, Int16Array, Promise};
use options::{parse_options, Callbacks, ParsedOptions};
use wasm_bindgen::prelude::*;

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

pub(crate) struct Shared {
    this: Weak<Shared>,
    driver: Driver<Transcriber>,
    callbacks: Callbacks,
    /// `onError` and `onEvent`, and the one rule for a callback that throws.
    app: AppCallbacks,
    /// `provision()`, the socket, the microphone, the waiting promises.
    io: TranscriberIo,
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
            mut callbacks,
            worklet,
        } = parse_options(&options)?;
        let io = TranscriberIo::new(
            callbacks.provision.clone(),
            config.sample_rate,
            config.max_message_bytes,
            worklet,
        );
        let shared = Rc::new_cyclic(|weak: &Weak<Shared>| {
            let driver = Driver::new(Transcriber::new(config), weak);
            let app = AppCallbacks::new(
                callbacks.on_error.take(),
                callbacks.on_event.take(),
                driver.clock(),
            );
            Shared {
                this: weak.clone(),
                driver,
                callbacks,
                app,
                io,
            }
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
        shared.io.start(shared.as_ref(), || {
            driver::input(&shared, |core, now| core.start(now));
        })
    }

    /// Captures `stream`, or the default microphone when absent, as 20 ms PCM16 frames at
    /// `sampleRate` that go through `sendAudio`. Resolves once capture runs; rejects with the
    /// browser's error (e.g. `NotAllowedError`), a `TypeError` for a non-`MediaStream`, an
    /// `AbortError` when stopped meanwhile, or turnguard's `worklet_blocked` error (also given to
    /// `onError`) when the capture worklet cannot load. Chromium's track is read directly
    /// (`MediaStreamTrackProcessor`: no worklet); elsewhere a worklet captures it.
    /// `options.workletUrl` loads the worklet from that URL (a same-origin copy of
    /// `capture-worklet.js`, in every browser) instead of a `blob:` URL; the options
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
        let shared = self.shared();
        let default_worklet = shared.as_ref().and_then(|shared| shared.io.worklet_url());
        let (stream, worklet) =
            match options::parse_microphone_args(stream_or_options, options, default_worklet) {
                Ok(parsed) => parsed,
                Err(error) => return Promise::reject(&error),
            };
        match shared {
            Some(shared) => shared
                .io
                .attach_microphone(shared.as_ref(), stream, worklet),
            None => Promise::reject(&freed()),
        }
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
            push_audio(shared.as_ref(), &pcm);
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
        shared.io.release_microphone();
        let stopped = shared.io.until_stopped(shared.as_ref());
        driver::input(&shared, |core, now| core.stop(now));
        stopped
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
        self.shared()
            .map_or(JsValue::UNDEFINED, |shared| shared.io.session_id())
    }

    /// Counters since creation.
    #[wasm_bindgen(getter, unchecked_return_type = "TranscriberStats")]
    pub fn stats(&self) -> JsValue {
        stats_object(&self.snapshot().1)
    }
}

/// The counters as JS sees them (`TranscriberStats`).
pub(crate) fn stats_object(stats: &Stats) -> JsValue {
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

impl LiveTranscriber {
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

    fn this(&self) -> Option<Rc<Self>> {
        self.this.upgrade()
    }

    fn perform(self: &Rc<Self>, action: Action) {
        let Some(action) = self.io.perform(self.as_ref(), action) else {
            return;
        };
        match action {
            Action::StateChanged(state) => {
                // `onEvent` gets the close the core just answered, if any, before the state.
                if self.app.wants_events() {
                    if let Some(event) = TranscriberIo::close_event(self.as_ref()) {
                        self.app.event(&event);
                    }
                }
                let name = JsValue::from_str(state.as_str());
                let callback = &self.callbacks.on_state_change;
                self.call("onStateChange", callback, Args::One(&name));
                self.io.state_changed(state);
            }
            Action::Partial { text, utterance } => {
                let (text, meta) = (JsValue::from_str(&text), self.meta(utterance));
                let args = Args::Two(&text, &meta);
                self.call("onPartial", &self.callbacks.on_partial, args);
            }
            Action::Final { text, utterance } => {
                let (text, meta) = (JsValue::from_str(&text), self.meta(utterance));
                self.call("onFinal", &self.callbacks.on_final, Args::Two(&text, &meta));
            }
            Action::SpeechStart { utterance } => {
                let meta = self.meta(utterance);
                let callback = &self.callbacks.on_speech_start;
                self.call("onSpeechStart", callback, Args::One(&meta));
            }
            // The guess's text stays in the page's own code: events carry no conversation text.
            Action::EagerFinal { utterance, .. } => {
                self.report_turn_hint("eager_end_of_turn", utterance)
            }
            Action::Resumed { utterance } => self.report_turn_hint("turn_resumed", utterance),
            Action::Error(error) => self.app.error(&self.io.error_js(&error)),
            // The I/O was performed above.
            _ => {}
        }
    }
}

impl TranscriberHost for Shared {
    fn transcriber_io(&self) -> Option<&TranscriberIo> {
        Some(&self.io)
    }

    fn weak_host(&self) -> Weak<AnyTranscriberHost> {
        self.this.clone()
    }

    fn transcriber_mut(&self) -> Option<(RefMut<'_, Transcriber>, Millis)> {
        self.driver.lend()
    }

    fn transcriber(&self) -> Option<Ref<'_, Transcriber>> {
        self.driver.view()
    }

    fn report_error(&self, error: &JsValue) {
        self.app.error(error);
    }

    fn report_event(&self, event: crate::web::js_object::JsObject) {
        self.app.event_now(event);
    }
}

impl Shared {
    /// Detaches for good, at once (R4): releases the microphone, then the core's `dispose`
    /// (`stop_recording` if connected, close) is performed and the timer cleared. Idempotent.
    fn dispose(self: &Rc<Self>) {
        self.io.release_microphone();
        driver::dispose(self, |core, now| core.dispose(now));
    }

    /// `onEvent` gets the provider's end-of-turn guess, or its withdrawal, for `utterance`.
    fn report_turn_hint(&self, kind: &str, utterance: u64) {
        if self.app.wants_events() {
            let event = JsObject::new()
                .set("type", kind)
                .set("utterance", utterance as f64)
                .build();
            self.app.event(&event);
        }
    }

    fn meta(&self, utterance: u64) -> JsValue {
        JsObject::new()
            .set("sessionId", self.io.session_id())
            .set("utterance", utterance as f64)
            .build()
    }

    /// Calls an app callback by the one rule (`callbacks`).
    fn call(&self, name: &str, callback: &Option<Function>, args: Args) {
        self.app.call_optional(name, callback.as_ref(), args, None);
    }
}
