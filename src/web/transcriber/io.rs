//! The transcriber's I/O, shared by `LiveTranscriber` and `VoiceSession`: `provision()` calls
//! (guarded, abortable, one current at a time) and the WebSocket (one current socket; events of
//! any other are ignored). Each result goes to the core through its host, the class that owns the
//! machine the transcriber is (or is part of).

use super::errors::{aborted, dom_error, error_to_js};
use super::network::{self, NetworkWatch};
use super::provision::{self, Provisioned};
use super::socket::{Socket, SocketEvent};
use crate::core::stt::transcriber::{Action, State, Transcriber, TranscriberError};
use crate::core::time::Millis;
use crate::web::driver::Host;
use crate::web::js_object::JsObject;
use crate::web::microphone::Capture;
use alloc::rc::Weak;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{Ref, RefCell, RefMut};
use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;
use web_sys::AbortController;

/// The class a transcriber runs in: it owns the machine the transcriber is (or is part of).
pub(crate) trait TranscriberHost: Host {
    /// The transcriber's I/O (`None`: a session that takes typed input only).
    fn transcriber_io(&self) -> Option<&TranscriberIo>;
    /// The host, held weakly by callbacks that come later (a socket event, a settled provision).
    fn weak_host(&self) -> Weak<AnyTranscriberHost>;
    /// The transcriber, lent for one input at the current time.
    fn transcriber_mut(&self) -> Option<(RefMut<'_, Transcriber>, Millis)>;
    /// The transcriber, lent for reading.
    fn transcriber(&self) -> Option<Ref<'_, Transcriber>>;
    /// A `provision()` call settled: `None` when it gave a session, else the HTTP status of its
    /// failure (0 for none).
    fn provision_settled(&self, _failure: Option<u16>) {}
    /// An error that is not the core's (the capture worklet could not load).
    /// Captured audio for the transcriber: `Some` gives it back for the transcriber as it is; a
    /// session takes it, to hear it first (its voice detector).
    fn take_audio(&self, pcm: Vec<u8>) -> Option<Vec<u8>> {
        Some(pcm)
    }

    fn report_error(&self, error: &JsValue);
    /// The capture's echo canceller is on or off, as the browser says (a session measures the
    /// echo with it).
    fn capture_echo_cancellation(&self, _on: bool) {}
    /// An event that is not the core's (the microphone came back), to `onEvent`.
    fn report_event(&self, event: crate::web::js_object::JsObject);
}

/// The host the I/O code is written against. Where `VoiceSession` is built too there are two
/// hosts and the code is there once, behind `dyn`; a build of the transcriber alone has one host,
/// `LiveTranscriber`'s, and dispatches to it statically: no vtables, calls inlined (a smaller
/// wasm for `turnguard/transcriber`).
#[cfg(feature = "voice")]
pub(crate) type AnyTranscriberHost = dyn TranscriberHost;
#[cfg(not(feature = "voice"))]
pub(crate) type AnyTranscriberHost = super::Shared;

/// Feeds the transcriber one input and performs what it queued.
pub(crate) fn input(host: &AnyTranscriberHost, input: impl FnOnce(&mut Transcriber, Millis)) {
    update(host, input);
    host.pump();
}

/// Feeds the transcriber one input; the running pump performs what it queued.
fn update(host: &AnyTranscriberHost, input: impl FnOnce(&mut Transcriber, Millis)) {
    if let Some((mut stt, now)) = host.transcriber_mut() {
        input(&mut stt, now);
    }
}

/// Reads the transcriber: `None` when it is out of reach.
pub(crate) fn read<R>(
    host: &AnyTranscriberHost,
    read: impl FnOnce(&Transcriber) -> R,
) -> Option<R> {
    host.transcriber().map(|stt| read(&stt))
}

/// The transcriber's state; `Stopped` when out of reach.
pub(crate) fn state(host: &AnyTranscriberHost) -> State {
    read(host, Transcriber::state).unwrap_or(State::Stopped)
}

/// Browser resources and waiting promises.
#[derive(Default)]
pub(super) struct Io {
    /// The current socket; events of any other are ignored.
    pub(super) socket: Option<Socket>,
    pub(super) socket_id: u32,
    /// The `provision()` call whose result counts, and its abort.
    pub(super) provision_id: u32,
    pub(super) provision_abort: Option<AbortController>,
    /// `id` of the current session, as `provision()` gave it.
    pub(super) session_id: JsValue,
    /// The socket's subprotocols, as `provision()` gave them.
    pub(super) protocols: JsValue,
    pub(super) capture: Option<Capture>,
    pub(super) capture_id: u32,
    /// `start()` promises: resolved at the first `open`, rejected at `stopped`/`failed`.
    pub(super) start_waiters: Vec<(Function, Function)>,
    /// `stop()` promises: resolved at `stopped`/`failed`.
    pub(super) stop_waiters: Vec<Function>,
    /// The terminal error, once failed.
    pub(super) failure: JsValue,
    /// `online`/`offline` listeners, from `start()` to the end.
    pub(super) network: Option<NetworkWatch>,
}

/// What a transcriber needs besides its core: the app's `provision`, the capture settings and
/// the browser resources.
pub(crate) struct TranscriberIo {
    provision: Function,
    pub(super) sample_rate: u32,
    /// Longest server text message read, in UTF-8 bytes (checked before any copy into wasm).
    max_message_bytes: f64,
    /// `workletUrl`: where `attachMicrophone` loads its worklet unless told otherwise.
    worklet: Option<String>,
    pub(super) io: RefCell<Io>,
}

impl TranscriberIo {
    pub(crate) fn new(
        provision: Function,
        sample_rate: u32,
        max_message_bytes: u64,
        worklet: Option<String>,
    ) -> Self {
        TranscriberIo {
            provision,
            sample_rate,
            max_message_bytes: max_message_bytes as f64,
            worklet,
            io: RefCell::new(Io::default()),
        }
    }

    /// Performs the core's I/O actions, checked against its state right before they are done (a
    /// re-entrant stop/free from a callback may have come after they were queued). Every other
    /// action is given back: it is the host's to report.
    pub(crate) fn perform(&self, host: &AnyTranscriberHost, action: Action) -> Option<Action> {
        match action {
            Action::Provision => {
                if state(host) == State::Provisioning {
                    self.provision(host);
                }
            }
            Action::CancelProvision => self.abort_provision(),
            Action::Connect(url) => {
                if state(host) == State::Connecting {
                    self.connect(host, &url);
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
            other => return Some(other),
        }
        None
    }

    /// `workletUrl`, the default of `attachMicrophone`'s.
    pub(crate) fn worklet_url(&self) -> Option<&str> {
        self.worklet.as_deref()
    }

    /// The `id` of the current session, as `provision()` gave it.
    pub(crate) fn session_id(&self) -> JsValue {
        self.io.borrow().session_id.clone()
    }

    /// `start()`: resolves once the socket first opens; rejects with the terminal error if the
    /// transcriber fails first, or an `AbortError` if it is stopped first. `start_core` feeds
    /// the start (the host's own input: a session also starts its voice core).
    pub(crate) fn start(&self, host: &AnyTranscriberHost, start_core: impl FnOnce()) -> Promise {
        match state(host) {
            State::Open => Promise::resolve(&JsValue::UNDEFINED),
            State::Failed => Promise::reject(&self.io.borrow().failure),
            State::Stopped => Promise::reject(&dom_error(
                "InvalidStateError",
                "the transcriber has stopped; create a new one",
            )),
            _ => {
                let promise = Promise::new(&mut |resolve, reject| {
                    self.io.borrow_mut().start_waiters.push((resolve, reject));
                });
                if self.io.borrow().network.is_none() {
                    let watch = NetworkWatch::start(host.weak_host());
                    self.io.borrow_mut().network = watch;
                }
                // W: started offline, it provisions once the network is back.
                if !network::is_online() {
                    update(host, |stt, now| stt.set_online(false, now));
                }
                start_core();
                promise
            }
        }
    }

    /// A promise of the transcriber's end (`stopped` or `failed`); resolved at once when over.
    pub(crate) fn until_stopped(&self, host: &AnyTranscriberHost) -> Promise {
        if state(host).is_terminal() {
            return Promise::resolve(&JsValue::UNDEFINED);
        }
        Promise::new(&mut |resolve, _reject| {
            self.io.borrow_mut().stop_waiters.push(resolve);
        })
    }

    /// What a state change means for the waiting promises and the resources: `start()`
    /// resolves at `open`; at the end the microphone and a pending `provision()` are released,
    /// `start()` rejects and `stop()` resolves.
    pub(crate) fn state_changed(&self, state: State) {
        match state {
            State::Open => {
                let waiters = core::mem::take(&mut self.io.borrow_mut().start_waiters);
                for (resolve, _) in waiters {
                    let _ = resolve.call0(&JsValue::UNDEFINED);
                }
            }
            State::Stopped | State::Failed => {
                self.release_microphone();
                self.abort_provision();
                let network = self.io.borrow_mut().network.take();
                drop(network);
                let (starts, stops, failure) = {
                    let mut io = self.io.borrow_mut();
                    let starts = core::mem::take(&mut io.start_waiters);
                    (
                        starts,
                        core::mem::take(&mut io.stop_waiters),
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

    /// The error as `onError` gets it; a terminal one is kept for `start()` to reject with.
    pub(crate) fn error_js(&self, error: &TranscriberError) -> JsValue {
        let error_js = error_to_js(error);
        if error.is_terminal() {
            self.io.borrow_mut().failure = error_js.clone();
        }
        error_js
    }

    /// The close the core just answered, as an `onEvent` event (taken: reported once).
    pub(crate) fn close_event(host: &AnyTranscriberHost) -> Option<JsValue> {
        let report = host.transcriber_mut()?.0.take_close_report()?;
        Some(
            JsObject::new()
                .set("type", "close")
                .set("code", f64::from(report.code))
                .set("class", report.class.as_str())
                .set("next", report.next.as_str())
                .set("delayMs", report.delay_ms as f64)
                .build(),
        )
    }

    fn provision(&self, host: &AnyTranscriberHost) {
        let id = {
            let mut io = self.io.borrow_mut();
            io.provision_id = io.provision_id.wrapping_add(1);
            io.provision_id
        };
        // `AbortController` exists wherever `WebSocket` does; without one, provision() gets no signal.
        let abort = AbortController::new().ok();
        let signal = abort
            .as_ref()
            .map_or(JsValue::UNDEFINED, |abort| abort.signal().into());
        let (reason, attempt) = read(host, |stt| {
            (stt.provision_reason().as_str(), stt.provision_attempt())
        })
        .unwrap_or(("start", 1));
        // The app's code runs here: no borrow is held.
        let settled = provision::call(&self.provision, &signal, reason, attempt);
        let current = self.io.borrow().provision_id == id;
        if current {
            self.io.borrow_mut().provision_abort = abort;
        } else if let Some(abort) = abort {
            abort.abort(); // stopped from inside provision()
        }
        let weak = host.weak_host();
        wasm_bindgen_futures::spawn_local(async move {
            let outcome = provision::outcome(settled).await;
            if let Some(host) = weak.upgrade() {
                if let Some(io) = host.transcriber_io() {
                    io.on_provision_settled(host.as_ref(), id, outcome);
                }
            }
        });
    }

    fn on_provision_settled(&self, host: &AnyTranscriberHost, id: u32, outcome: Provisioned) {
        // Every call the app's `provision()` settled is reported, whether its result still counts.
        host.provision_settled(match &outcome {
            Provisioned::Session { .. } => None,
            Provisioned::Failed { status, .. } => Some(*status),
        });
        {
            let mut io = self.io.borrow_mut();
            if io.provision_id != id {
                return; // aborted, timed out or superseded: its result no longer counts
            }
            // Settled: a later stop has nothing to abort.
            io.provision_id = io.provision_id.wrapping_add(1);
            io.provision_abort = None;
            if let Provisioned::Session { id, protocols, .. } = &outcome {
                io.session_id = id.clone();
                io.protocols = protocols.clone();
            }
        }
        match outcome {
            Provisioned::Session { url, config, .. } => {
                let config = js_sys::JSON::stringify(&config)
                    .ok()
                    .and_then(|json| json.as_string())
                    .filter(|_| config.is_object());
                input(host, |stt, now| {
                    stt.set_start_config(config);
                    stt.on_provisioned(&url, now)
                });
            }
            Provisioned::Failed {
                status: 0,
                unreachable: true,
            } => input(host, |stt, now| stt.on_provision_unreachable(now)),
            Provisioned::Failed { status, .. } => {
                input(host, |stt, now| stt.on_provision_failed(status, now));
            }
        }
    }

    /// Aborts an unfinished `provision()` call; its result will be ignored.
    pub(super) fn abort_provision(&self) {
        let abort = {
            let mut io = self.io.borrow_mut();
            io.provision_id = io.provision_id.wrapping_add(1);
            io.provision_abort.take()
        };
        if let Some(abort) = abort {
            abort.abort();
        }
    }

    fn connect(&self, host: &AnyTranscriberHost, url: &str) {
        self.close_socket();
        let id = {
            let mut io = self.io.borrow_mut();
            io.socket_id = io.socket_id.wrapping_add(1);
            io.socket_id
        };
        let weak = host.weak_host();
        let protocols = self.io.borrow().protocols.clone();
        let socket = Socket::open(url, &protocols, self.max_message_bytes, move |event| {
            if let Some(host) = weak.upgrade() {
                if let Some(io) = host.transcriber_io() {
                    io.on_socket_event(host.as_ref(), id, event);
                }
            }
        });
        match socket {
            Some(socket) => self.io.borrow_mut().socket = Some(socket),
            // A URL the browser refuses. Inside a pump: what this queues is performed by the
            // running pump.
            None => update(host, |stt, now| stt.on_connect_error(now)),
        }
    }

    fn close_socket(&self) {
        let socket = self.io.borrow_mut().socket.take();
        drop(socket); // closes it, outside the borrow
    }

    fn on_socket_event(&self, host: &AnyTranscriberHost, id: u32, event: SocketEvent) {
        let closed = {
            let mut io = self.io.borrow_mut();
            if io.socket_id != id || io.socket.is_none() {
                return;
            }
            match event {
                SocketEvent::Close(_) => io.socket.take(),
                _ => None,
            }
        };
        // A closed socket's handlers are cleared now (this one finishes; its closure is freed after).
        drop(closed);
        input(host, |stt, now| match &event {
            SocketEvent::Open => stt.on_open(now),
            SocketEvent::Close(code) => stt.on_close(*code, now),
            SocketEvent::Oversize => stt.on_oversize_message(now),
            SocketEvent::Text(text) => stt.on_text(text, now),
            SocketEvent::Binary => stt.on_binary_message(now),
        });
    }
}
