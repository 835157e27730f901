//! A chat completion's response body as a `ReadableStream` of answer text: the bytes go through
//! the core's SSE decoder (src/core/sse.rs), and the body's reader is cancelled as soon as no
//! more text can come (`[DONE]`, an error event) or the stream's reader stops wanting it (the
//! ladder cancels it when the attempt has ended), which releases the connection.
//!
//! Each body read is chained with `then` (src/web/promise.rs) to one callback made per stream.

use crate::core::turn::sse::{ChatDelta, ChatStreamDecoder};
use crate::web::convert::type_error;
use crate::web::promise::{discard, then};
use alloc::rc::Rc;
use alloc::vec::Vec;
use core::cell::RefCell;
use js_sys::{Function, Uint8Array};
use wasm_bindgen::prelude::*;
use web_sys::{
    ReadableStream, ReadableStreamDefaultController, ReadableStreamDefaultReader,
    ReadableStreamReadResult, UnderlyingSource,
};

/// The state behind one answer stream, shared by its `pull`, its `cancel` and its read callback.
struct Source {
    body: ReadableStreamDefaultReader,
    /// The route's `ignore` callback (src/web/promise.rs), for the promise of the body's cancel.
    ignore: JsValue,
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
pub(crate) fn text_stream(
    body: &ReadableStream,
    ignore: &JsValue,
) -> Result<ReadableStream, JsValue> {
    let source = Rc::new(RefCell::new(Source {
        body: ReadableStreamDefaultReader::new(body)?,
        ignore: ignore.clone(),
        decoder: ChatStreamDecoder::new(),
        bytes: Vec::new(),
        released: false,
        failed: false,
    }));
    let read_source = source.clone();
    let on_read = Closure::<
        dyn Fn(
            Function,
            ReadableStreamDefaultController,
            ReadableStreamReadResult,
        ) -> Result<JsValue, JsValue>,
    >::new(move |on_read, controller, result| {
        on_read_result(&read_source, &on_read, &controller, &result)
    })
    .into_js_value()
    .unchecked_into::<Function>();
    let pull_source = source.clone();
    let pull =
        Closure::<dyn Fn(ReadableStreamDefaultController) -> JsValue>::new(move |controller| {
            pull(&pull_source, controller, &on_read)
        });
    let cancel = Closure::<dyn Fn()>::new(move || release(&source));
    let underlying = UnderlyingSource::new();
    underlying.set_pull(pull.into_js_value().unchecked_ref::<Function>());
    underlying.set_cancel(cancel.into_js_value().unchecked_ref::<Function>());
    ReadableStream::new_with_underlying_source(&underlying)
}

/// The stream wants more: the next body read, or the error held back for the queued text. A
/// failed read (network error, the attempt's signal) rejects the promise returned, which errors
/// the answer stream with the same error.
///
/// The controller (and the callback itself, to read again) go to the read's callback bound to
/// it, not kept in `Source`: the stream holds `Source` through its callbacks, so `Source` holding
/// them would be a cycle through wasm that the garbage collector cannot free.
fn pull(
    source: &RefCell<Source>,
    controller: ReadableStreamDefaultController,
    on_read: &Function,
) -> JsValue {
    if source.borrow().failed {
        controller.error_with_e(&stream_error());
        return JsValue::UNDEFINED;
    }
    read_next(source, on_read, &controller)
}

/// Reads the body (unless it was released) and chains `on_read(on_read, controller, result)`
/// to the read. No borrow is held while `read()` runs: a body of the app's own may run its
/// code there.
fn read_next(
    source: &RefCell<Source>,
    on_read: &Function,
    controller: &ReadableStreamDefaultController,
) -> JsValue {
    let body = {
        let source = source.borrow();
        if source.released {
            return JsValue::UNDEFINED;
        }
        source.body.clone()
    };
    then(
        &body.read(),
        &on_read.bind2(&JsValue::UNDEFINED, on_read, controller),
    )
    .into()
}

/// One body read: its text is queued; `[DONE]`, an error event or the body's end end the
/// stream. A read that completed no text (a keep-alive, half an event) is followed by the next
/// one within the same pull: the stream would not pull again by itself.
fn on_read_result(
    source: &RefCell<Source>,
    on_read: &Function,
    controller: &ReadableStreamDefaultController,
    result: &ReadableStreamReadResult,
) -> Result<JsValue, JsValue> {
    let body_ended = result.get_done().unwrap_or(false);
    let chunk = match (!body_ended).then(|| result.get_value().dyn_into::<Uint8Array>()) {
        Some(Err(_)) => {
            release(source);
            return Err(type_error(
                "the response body gave something other than bytes",
            ));
        }
        Some(Ok(chunk)) => Some(chunk),
        None => None,
    };
    {
        let mut source = source.borrow_mut();
        if source.released {
            // Cancelled while the read was pending.
            return Ok(JsValue::UNDEFINED);
        }
        if let Some(chunk) = chunk {
            let Source { bytes, decoder, .. } = &mut *source;
            bytes.resize(chunk.length() as usize, 0);
            chunk.copy_to(bytes);
            decoder.push(bytes);
        } else {
            source.released = true;
            source.decoder.finish();
        }
    }
    let (enqueued, failed) = enqueue_text(source, controller);
    if !body_ended && !source.borrow().decoder.is_ended() {
        if enqueued {
            return Ok(JsValue::UNDEFINED);
        }
        return Ok(read_next(source, on_read, controller));
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
    Ok(JsValue::UNDEFINED)
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
    let (body, ignore) = {
        let mut source = source.borrow_mut();
        if source.released {
            return;
        }
        source.released = true;
        (source.body.clone(), source.ignore.clone())
    };
    discard(&body.cancel(), &ignore);
}

/// The answer stream's error when the chat completion reported one inside the stream.
fn stream_error() -> JsValue {
    let error = js_sys::Error::new("chat completion reported an error in the stream");
    error.set_name("StreamError");
    error.into()
}
