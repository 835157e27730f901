//! The transcriber's audio in (L5): the microphone capture it holds (one at a time; a later one
//! replaces it) and the app's own frames, both fed to the core as PCM16 little-endian bytes.
//! Shared by `LiveTranscriber` and `VoiceSession`.

use super::errors::{aborted, dom_error};
use super::io::{input, read, AnyTranscriberHost, TranscriberIo};
use alloc::boxed::Box;
use alloc::vec::Vec;
// The hosts' methods, for a build with one host (not `dyn`; see `AnyTranscriberHost`).
#[cfg_attr(feature = "voice", allow(unused_imports))]
use super::io::TranscriberHost as _;
use crate::web::convert::coded_error;
#[cfg_attr(feature = "voice", allow(unused_imports))]
use crate::web::driver::Host as _;
use crate::web::glue::delay;
use crate::web::js_object::JsObject;
use crate::web::microphone::{self, Capture, LostHandlers, WorkletSource};
use js_sys::{Int16Array, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{spawn_local, JsFuture};

/// Waits before each try to open the microphone again after it was lost: at once, then backing
/// off to a try every 5 s while the transcriber runs (a device may be plugged back in).
const REACQUIRE_DELAYS_MS: [i32; 6] = [0, 250, 500, 1000, 2000, 5000];

impl TranscriberIo {
    /// Captures `stream` (the default microphone when `undefined`) through the worklet from
    /// `worklet`: see `LiveTranscriber.attachMicrophone`.
    pub(crate) fn attach_microphone(
        &self,
        host: &AnyTranscriberHost,
        stream: JsValue,
        worklet: WorkletSource,
    ) -> Promise {
        if !accepts_audio(host) {
            return Promise::reject(&dom_error(
                "InvalidStateError",
                "the transcriber has stopped",
            ));
        }
        let id = {
            let mut io = self.io.borrow_mut();
            io.capture_id = io.capture_id.wrapping_add(1);
            io.capture_id
        };
        // Only a microphone the transcriber opened itself is opened again when lost; an app's
        // stream is the app's.
        let reopen = stream.is_undefined().then(|| worklet.clone());
        let (on_frame, on_capture, on_blocked, on_lost, on_moved) = (
            host.weak_host(),
            host.weak_host(),
            host.weak_host(),
            host.weak_host(),
            host.weak_host(),
        );
        let follow = reopen.clone();
        microphone::start(
            stream,
            self.sample_rate,
            worklet,
            move |bytes| {
                if let Some(host) = on_frame.upgrade() {
                    push_bytes(host.as_ref(), bytes);
                }
            },
            move |capture| {
                // Dropping `capture` on any error path stops it.
                let host = on_capture.upgrade().ok_or_else(aborted)?;
                match host.transcriber_io() {
                    Some(io) => io.adopt_capture(host.as_ref(), id, capture),
                    None => Err(aborted()),
                }
            },
            move |error| {
                if let Some(host) = on_blocked.upgrade() {
                    host.report_error(error);
                }
            },
            LostHandlers {
                on_lost: Box::new(move || {
                    if let Some(host) = on_lost.upgrade() {
                        if let Some(io) = host.transcriber_io() {
                            io.capture_lost(host.as_ref(), id, reopen);
                        }
                    }
                }),
                on_default_moved: Box::new(move || {
                    if let (Some(host), Some(worklet)) = (on_moved.upgrade(), follow) {
                        if let Some(io) = host.transcriber_io() {
                            io.follow_default(host.as_ref(), id, worklet);
                        }
                    }
                }),
            },
        )
    }

    /// The browser's default microphone is another device now, and the capture was opened on
    /// the default: the new default is opened, and replaces the old capture once it runs (no
    /// gap: the old one captures until then). Where it cannot be opened, the old capture is
    /// released and the microphone counts as lost (opened again with backoff).
    fn follow_default(&self, host: &AnyTranscriberHost, id: u32, worklet: WorkletSource) {
        if self.io.borrow().capture_id != id || !accepts_audio(host) {
            return;
        }
        let opening = self.attach_microphone(host, JsValue::UNDEFINED, worklet.clone());
        let opened_id = self.io.borrow().capture_id;
        let weak = host.weak_host();
        let asked_at = js_sys::Date::now();
        spawn_local(async move {
            let opened = JsFuture::from(opening).await;
            let Some(host) = weak.upgrade() else { return };
            let Some(io) = host.transcriber_io() else {
                return;
            };
            match opened {
                Ok(_) => host.report_event(JsObject::new().set("type", "microphone_changed").set(
                    "switchMs",
                    libm::round((js_sys::Date::now() - asked_at).max(0.0)),
                )),
                Err(_) if accepts_audio(host.as_ref()) => {
                    io.capture_lost(host.as_ref(), opened_id, Some(worklet));
                }
                Err(_) => {}
            }
        });
    }

    /// The capture's tracks ended: a non-terminal `microphone_lost`, the capture released, and a
    /// microphone the transcriber opened itself opened again, with backoff, while it runs.
    fn capture_lost(&self, host: &AnyTranscriberHost, id: u32, reopen: Option<WorkletSource>) {
        if self.io.borrow().capture_id != id {
            return; // replaced or released meanwhile
        }
        let lost = self.io.borrow_mut().capture.take();
        drop(lost);
        let lost_at = js_sys::Date::now();
        let message = match reopen {
            Some(_) => "the microphone was lost (unplugged, revoked or taken): opening it again",
            None => "the microphone's stream ended: attach a new one with attachMicrophone()",
        };
        host.report_error(&coded_error(message, None, "microphone_lost", false));
        let Some(worklet) = reopen else {
            return;
        };
        let weak = host.weak_host();
        spawn_local(async move {
            let mut expected = id;
            for (attempt, wait) in
                (0..).zip(REACQUIRE_DELAYS_MS.iter().chain(core::iter::repeat(&5000)))
            {
                let _ = JsFuture::from(delay(*wait)).await;
                let Some(host) = weak.upgrade() else { return };
                let Some(io) = host.transcriber_io() else {
                    return;
                };
                // The app attached or released a microphone, or the transcriber ended: stop.
                if io.io.borrow().capture_id != expected || !accepts_audio(host.as_ref()) {
                    return;
                }
                let opening =
                    io.attach_microphone(host.as_ref(), JsValue::UNDEFINED, worklet.clone());
                expected = io.io.borrow().capture_id;
                drop(host);
                match JsFuture::from(opening).await {
                    Ok(_) => {
                        let Some(host) = weak.upgrade() else { return };
                        let gap_ms = libm::round((js_sys::Date::now() - lost_at).max(0.0));
                        host.report_event(
                            JsObject::new()
                                .set("type", "microphone_restored")
                                .set("gapMs", gap_ms)
                                .set("attempts", f64::from(attempt + 1)),
                        );
                        return;
                    }
                    Err(error) if is_denied(&error) => {
                        if let Some(host) = weak.upgrade() {
                            host.report_error(&coded_error(
                                "the microphone permission was denied: allow the microphone for this site in the browser's address bar, then attach it again",
                                Some(&error),
                                "microphone_denied",
                                true,
                            ));
                        }
                        return;
                    }
                    Err(_) => {}
                }
            }
        });
    }

    fn adopt_capture(
        &self,
        host: &AnyTranscriberHost,
        id: u32,
        capture: Capture,
    ) -> Result<(), JsValue> {
        if self.io.borrow().capture_id != id || !accepts_audio(host) {
            return Err(aborted());
        }
        if let Some(on) = capture.echo_cancellation() {
            host.capture_echo_cancellation(on);
        }
        let previous = self.io.borrow_mut().capture.replace(capture);
        drop(previous);
        Ok(())
    }

    /// Stops the capture (its tracks, if it opened them); a capture still starting is refused.
    pub(crate) fn release_microphone(&self) {
        let capture = {
            let mut io = self.io.borrow_mut();
            io.capture_id = io.capture_id.wrapping_add(1);
            io.capture.take()
        };
        drop(capture);
    }
}

/// A `getUserMedia` refusal no retry changes.
fn is_denied(error: &JsValue) -> bool {
    let name = Reflect::get(error, &"name".into())
        .ok()
        .and_then(|name| name.as_string());
    matches!(name.as_deref(), Some("NotAllowedError" | "SecurityError"))
}

/// One frame of the app's PCM16 audio (`sendAudio`).
pub(crate) fn push_audio(host: &AnyTranscriberHost, pcm: &Int16Array) {
    // The samples' bytes as they lie in memory: little-endian in every browser, as the wire wants.
    let bytes = Uint8Array::new_with_byte_offset_and_length(
        &pcm.buffer(),
        pcm.byte_offset(),
        pcm.byte_length(),
    )
    .to_vec();
    push_bytes(host, bytes);
}

fn push_bytes(host: &AnyTranscriberHost, bytes: Vec<u8>) {
    if let Some(bytes) = host.take_audio(bytes) {
        input(host, |stt, now| {
            stt.send_audio(bytes, now);
        });
    }
}

/// Whether audio is still wanted: not disposed, not over, not stopping.
pub(crate) fn accepts_audio(host: &AnyTranscriberHost) -> bool {
    !host.is_disposed()
        && read(host, |stt| !stt.state().is_terminal() && !stt.is_stopping()).unwrap_or(false)
}
