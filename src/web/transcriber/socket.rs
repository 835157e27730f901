//! The transcriber's WebSocket as an RAII handle: a `web_sys::WebSocket` and the `Closure` of its
//! `open`, `message` and `close` handlers (one closure for the three, told apart by the event's
//! class: one closure type less in the wasm), which lives exactly as long as the [`Socket`].
//! Dropping it clears the handlers first, so nothing more is reported from that socket, then
//! closes it.
//!
//! There is no `error` handler: a browser fires `close` right after every `error`, and `close`
//! is what the core acts on (its code says how the socket ended).

use alloc::string::String;
use js_sys::{Array, JsString};
use wasm_bindgen::prelude::*;
use web_sys::{BinaryType, Blob, CloseEvent, MessageEvent, WebSocket};

/// What a socket reports.
pub(super) enum SocketEvent {
    Open,
    /// The close code (1006 for a socket that failed or never opened).
    Close(u16),
    /// A text message within `maxMessageBytes`.
    Text(String),
    /// A binary message, which the protocol does not use.
    Binary,
    /// A text message over `maxMessageBytes`: its text never left the JS heap.
    Oversize,
}

/// An open (or opening) socket; closed, silently, when dropped.
pub(super) struct Socket {
    socket: WebSocket,
    _on_event: Closure<dyn FnMut(JsValue)>,
}

/// `readyState` of an open socket (0 is connecting).
const OPEN: u16 = 1;
/// A normal closure, the code the client sends when it leaves.
const NORMAL_CLOSURE: u16 = 1000;

impl Socket {
    /// Connects to `url` with the subprotocols `protocols` (an array of strings, or `undefined`);
    /// every event goes to `on_event`. `None` for a URL or subprotocols the browser refuses (a
    /// `SyntaxError` from the constructor).
    pub(super) fn open(
        url: &str,
        protocols: &JsValue,
        max_message_bytes: f64,
        on_event: impl Fn(SocketEvent) + 'static,
    ) -> Option<Socket> {
        let socket = if protocols.is_undefined() {
            WebSocket::new(url)
        } else {
            WebSocket::new_with_str_sequence(url, protocols)
        }
        .ok()?;
        socket.set_binary_type(BinaryType::Arraybuffer);
        let handler = Closure::new(move |event: JsValue| {
            on_event(if let Some(message) = event.dyn_ref::<MessageEvent>() {
                read_message(&message.data(), max_message_bytes)
            } else if let Some(close) = event.dyn_ref::<CloseEvent>() {
                SocketEvent::Close(close.code())
            } else {
                SocketEvent::Open
            });
        });
        let function = handler.as_ref().unchecked_ref();
        socket.set_onopen(Some(function));
        socket.set_onmessage(Some(function));
        socket.set_onclose(Some(function));
        Some(Socket {
            socket,
            _on_event: handler,
        })
    }

    /// Sends the bytes if the socket is open (the browser copies them before returning).
    pub(super) fn send_bytes(&self, bytes: &[u8]) {
        if self.socket.ready_state() == OPEN {
            let _ = self.socket.send_with_u8_array(bytes);
        }
    }

    /// Sends the text if the socket is open.
    pub(super) fn send_text(&self, text: &str) {
        if self.socket.ready_state() == OPEN {
            let _ = self.socket.send_with_str(text);
        }
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        self.socket.set_onopen(None);
        self.socket.set_onmessage(None);
        self.socket.set_onclose(None);
        // Connecting or open: closing is what tells the server this client left (R4).
        if self.socket.ready_state() <= OPEN {
            let _ = self.socket.close_with_code(NORMAL_CLOSURE);
        }
    }
}

fn read_message(data: &JsValue, max_bytes: f64) -> SocketEvent {
    match data.dyn_ref::<JsString>() {
        None => SocketEvent::Binary,
        Some(text) if oversize(text, max_bytes) => SocketEvent::Oversize,
        Some(text) => SocketEvent::Text(String::from(text)),
    }
}

/// Whether `text` is longer than `max_bytes` in UTF-8, measured without copying it into wasm.
/// UTF-8 never takes fewer bytes than UTF-16 code units, nor more than three per unit, so only
/// lengths in between are encoded to count (by the browser, into a `Blob`).
fn oversize(text: &JsString, max_bytes: f64) -> bool {
    let units = f64::from(text.length());
    if units > max_bytes {
        return true;
    }
    if units * 3.0 <= max_bytes {
        return false;
    }
    Blob::new_with_str_sequence(&Array::of1(text)).map_or(true, |blob| blob.size() > max_bytes)
}
