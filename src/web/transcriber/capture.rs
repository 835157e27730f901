//! The transcriber's audio in (L5): the microphone capture it holds (one at a time; a later one
//! replaces it) and the app's own frames, both fed to the core as PCM16 little-endian bytes.
//! Shared by `LiveTranscriber` and `VoiceSession`.

use super::errors::{aborted, dom_error};
use super::io::{input, read, AnyTranscriberHost, TranscriberIo};
// The hosts' methods, for a build with one host (not `dyn`; see `AnyTranscriberHost`).
#[cfg_attr(feature = "voice", allow(unused_imports))]
use super::io::TranscriberHost as _;
#[cfg_attr(feature = "voice", allow(unused_imports))]
use crate::web::driver::Host as _;
use crate::web::microphone::{self, Capture, WorkletSource};
use js_sys::{Int16Array, Promise, Uint8Array};
use wasm_bindgen::prelude::*;

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
        let (on_frame, on_capture, on_blocked) =
            (host.weak_host(), host.weak_host(), host.weak_host());
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
        )
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
