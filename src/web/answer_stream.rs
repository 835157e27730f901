//! A chat completion's response body as a `ReadableStream` of answer text: the bytes go through
//! the core's SSE decoder (src/core/sse.rs), and the body's reader is cancelled as soon as no
//! more text can come (`[DONE]`, an error event) or the stream's reader stops wanting it (the
//! ladder cancels it when the attempt has ended), which releases the connection.

use crate::core::sse::{ChatDelta, ChatStreamDecoder};
use crate::web::convert::type_error;
use js_sys::{Function, Promise, Uint8Array};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};
use web_sys::{
    ReadableStream, ReadableStreamDefaultController, ReadableStreamDefaultReader,
    ReadableStreamReadResult, UnderlyingSource,
};

/// The state behind one answer stream, shared by its `pull` and `cancel`.
struct Source {
    body: ReadableStreamDefaultReader,
    decoder: ChatStreamDecoder,
    /// The last network chunk, copied out of JS; the allocation is reused.
    bytes: Vec<u8>,
    /// The body is finished with: read to its end, or cancelled.
    released: bool,
    /// The stream reported an error after text that is still queued: the answer stream errors
    /// once that text has been read.
    failed: bool,
}

/// Reads `body` (a fresh response body) through the decoder as a `ReadableStream` of strings.
pub(crate) fn text_stream(body: &ReadableStream) -> Result<ReadableStream, JsValue> {
    let source = Rc::new(RefCell::new(Source {
        body: ReadableStreamDefaultReader::new(body)?,
        decoder: ChatStreamDecoder::new(),
        bytes: Vec::new(),
        released: false,
        failed: false,
    }));
    let pulled = source.clone();
    let pull =
        Closure::<dyn Fn(ReadableStreamDefaultController) -> Promise>::new(move |controller| {
            let source = pulled.clone();
            future_to_promise(async move { pull(&source, &controller).await })
        });
    let cancel = Closure::<dyn Fn()>::new(move || release(&source));
    let underlying = UnderlyingSource::new();
    underlying.set_pull(pull.into_js_value().unchecked_ref::<Function>());
    underlying.set_cancel(cancel.into_js_value().unchecked_ref::<Function>());
    ReadableStream::new_with_underlying_source(&underlying)
}

/// Reads the body until the answer stream has new text or has ended. A failed read (network
/// error, the attempt's signal) rejects, which errors the answer stream with the same error.
async fn pull(
    source: &RefCell<Source>,
    controller: &ReadableStreamDefaultController,
) -> Result<JsValue, JsValue> {
    loop {
        let read = {
            let source = source.borrow();
            if source.failed {
                controller.error_with_e(&stream_error());
                return Ok(JsValue::UNDEFINED);
            }
            if source.released {
                return Ok(JsValue::UNDEFINED);
            }
            source.body.read()
        };
        let result: ReadableStreamReadResult = JsFuture::from(read).await?.unchecked_into();
        let body_ended = result.get_done().unwrap_or(false);
        {
            let mut source = source.borrow_mut();
            if source.released {
                // Cancelled while the read was pending.
                return Ok(JsValue::UNDEFINED);
            }
            if body_ended {
                source.released = true;
                source.decoder.finish();
            } else {
                let chunk = result
                    .get_value()
                    .dyn_into::<Uint8Array>()
                    .map_err(|_| type_error("the response body gave something other than bytes"))?;
                let Source { bytes, decoder, .. } = &mut *source;
                bytes.resize(chunk.length() as usize, 0);
                chunk.copy_to(bytes);
                decoder.push(bytes);
            }
        }
        let (enqueued, failed) = enqueue_text(source, controller);
        let ended = body_ended || source.borrow().decoder.is_ended();
        if !ended {
            if enqueued {
                return Ok(JsValue::UNDEFINED);
            }
            continue;
        }
        // `[DONE]` or an error event before the body's end: the rest is not read.
        release(source);
        if failed && enqueued {
            // Erroring now would drop the text just queued: the next pull errors instead.
            source.borrow_mut().failed = true;
        } else if failed {
            controller.error_with_e(&stream_error());
        } else {
            // Fails only when the stream was cancelled meanwhile: nothing is left to close.
            let _ = controller.close();
        }
        return Ok(JsValue::UNDEFINED);
    }
}

/// Queues the decoder's text; returns whether any was queued and whether an error event came.
fn enqueue_text(
    source: &RefCell<Source>,
    controller: &ReadableStreamDefaultController,
) -> (bool, bool) {
    let (mut enqueued, mut failed) = (false, false);
    loop {
        // Borrowed for one delta at a time: `enqueue` runs no app code, but nothing is held.
        let delta = source.borrow_mut().decoder.next_delta();
        match delta {
            None => return (enqueued, failed),
            Some(ChatDelta::Text(text)) => {
                // Fails only when the stream was cancelled meanwhile: the text is unwanted.
                enqueued |= controller
                    .enqueue_with_chunk(&JsValue::from_str(&text))
                    .is_ok();
            }
            Some(ChatDelta::Error(_)) => failed = true,
            Some(ChatDelta::Done) => {}
        }
    }
}

/// Cancels the body once (ending the request) unless it was read to its end.
fn release(source: &RefCell<Source>) {
    let body = {
        let mut source = source.borrow_mut();
        if source.released {
            return;
        }
        source.released = true;
        source.body.clone()
    };
    discard(body.cancel());
}

/// Awaits a promise whose outcome does not matter, so that its rejection is not reported as
/// unhandled.
pub(crate) fn discard(promise: Promise) {
    wasm_bindgen_futures::spawn_local(async move {
        let _ = JsFuture::from(promise).await;
    });
}

/// The answer stream's error when the chat completion reported one inside the stream.
fn stream_error() -> JsValue {
    let error = js_sys::Error::new("chat completion reported an error in the stream");
    error.set_name("StreamError");
    error.into()
}
