//! A chat completion's response body as a `ReadableStream` of answer text: the bytes go through
//! the core's SSE decoder (src/core/sse.rs), and the body's reader is cancelled as soon as no
//! more text can come (`[DONE]`, an error event) or the stream's reader stops wanting it (the
//! ladder cancels it when the attempt has ended), which releases the connection.
//!
//! Each body read is chained with `then` to one callback made per stream, rather than awaited in
//! a `wasm-bindgen-futures` task: no executor in the wasm, and no closures made per chunk.

use crate::core::sse::{ChatDelta, ChatStreamDecoder};
use crate::web::convert::type_error;
use js_sys::{Function, Promise, Uint8Array};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use web_sys::{
    ReadableStream, ReadableStreamDefaultController, ReadableStreamDefaultReader,
    ReadableStreamReadResult, UnderlyingSource,
};

#[wasm_bindgen]
extern "C" {
    // `promise.then(onFulfilled)`: what `onFulfilled` returns or throws settles the result.
    #[wasm_bindgen(js_namespace = ["Promise", "prototype", "then"], js_name = call)]
    pub(crate) fn then(promise: &Promise, on_fulfilled: &JsValue) -> Promise;
    #[wasm_bindgen(js_namespace = ["Promise", "prototype", "then"], js_name = call)]
    fn then_either(promise: &Promise, on_fulfilled: &JsValue, on_rejected: &JsValue) -> Promise;
}

/// A callback that ignores its argument: the handler of promises whose outcome is moot. Made
/// once per route and shared by its requests.
pub(crate) fn ignore() -> JsValue {
    Closure::<dyn Fn()>::new(|| {}).into_js_value()
}

/// The state behind one answer stream, shared by its `pull`, its `cancel` and its read callback.
struct Source {
    body: ReadableStreamDefaultReader,
    /// [`ignore`], for the promise of the body's cancel.
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
    let read = {
        let source = source.borrow();
        if source.failed {
            controller.error_with_e(&stream_error());
            return JsValue::UNDEFINED;
        }
        if source.released {
            return JsValue::UNDEFINED;
        }
        source.body.read()
    };
    read_next(read, on_read, &controller)
}

/// Chains `on_read(on_read, controller, result)` to a body read.
fn read_next(
    read: Promise,
    on_read: &Function,
    controller: &ReadableStreamDefaultController,
) -> JsValue {
    then(
        &read,
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
    if !body_ended && !source.borrow().decoder.is_ended() {
        if enqueued {
            return Ok(JsValue::UNDEFINED);
        }
        let read = {
            let source = source.borrow();
            if source.released {
                return Ok(JsValue::UNDEFINED);
            }
            source.body.read()
        };
        return Ok(read_next(read, on_read, controller));
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

/// Handles a promise whose outcome does not matter with [`ignore`], so that its rejection is
/// not reported as unhandled.
pub(crate) fn discard(promise: &Promise, ignore: &JsValue) {
    let _ = then_either(promise, ignore, ignore);
}

/// The answer stream's error when the chat completion reported one inside the stream.
fn stream_error() -> JsValue {
    let error = js_sys::Error::new("chat completion reported an error in the stream");
    error.set_name("StreamError");
    error.into()
}
