//! The request side of `openAiCompatibleRoute`: one streaming chat completion POSTed through the
//! global `fetch` with the attempt's `AbortSignal`, its body handed on as a stream of text.

use crate::web::answer_stream::text_stream;
use crate::web::glue;
use crate::web::js_object::JsObject;
use crate::web::promise::{discard, ignore, then};
use alloc::string::String;
use js_sys::{Array, JsString, Object, Promise, Reflect, JSON};
use wasm_bindgen::{intern, prelude::*};
use web_sys::{RequestInit, Response};

#[wasm_bindgen]
extern "C" {
    // `messages.push(...history)`: any iterable, and a throwing one is an error, not a trap.
    #[wasm_bindgen(catch, variadic, js_namespace = ["Array", "prototype", "push"], js_name = call)]
    fn push_each(messages: &Array, items: &JsValue) -> Result<u32, JsValue>;
}

/// What `openAiCompatibleRoute` was configured with, kept as JS values: nothing is copied into
/// wasm per request.
pub(crate) struct ChatSpec {
    pub(crate) url: JsValue,
    pub(crate) model: JsValue,
    /// A non-empty system prompt, or `None`.
    pub(crate) system_prompt: Option<JsValue>,
    /// The app's extra headers: an object, or `undefined`. Read again on every request.
    pub(crate) headers: JsValue,
    /// The app's extra body fields: an object, or `undefined`. Read again on every request.
    pub(crate) body: JsValue,
    /// [`answer`] as a JS function, made once per route: each request chains `fetch` to it.
    pub(crate) on_response: JsValue,
}

/// The callback that turns a `fetch` response into the answer stream, for [`ChatSpec`].
pub(crate) fn on_response() -> JsValue {
    let ignore = ignore();
    Closure::<dyn Fn(Response) -> Result<JsValue, JsValue>>::new(move |response| {
        answer(response, &ignore)
    })
    .into_js_value()
}

/// `generate({ requestId, input, signal, history })`: POSTs the chat completion and resolves with
/// a `ReadableStream` of the answer's text. A non-OK answer rejects with an `HttpError` that
/// carries its `status` (the ladder retries 408, 429 and 5xx, and not 400, 401, 403, 404, 422).
/// Never throws: a bad request or a throwing app getter is a rejection, as from an `async`
/// function.
pub(crate) fn generate(spec: &ChatSpec, request: &JsValue) -> Promise {
    post(spec, request).unwrap_or_else(|error| Promise::reject(&error))
}

fn post(spec: &ChatSpec, request: &JsValue) -> Result<Promise, JsValue> {
    let field = |key: &str| Reflect::get(request, &JsValue::from_str(intern(key)));
    let request_id = field("requestId")?;
    let input = field("input")?;
    let signal = field("signal")?;
    let history = field("history")?;
    let messages = messages(spec, &input, &history)?;

    let init = RequestInit::new();
    init.set_method("POST");
    // Set as given: `undefined` (a direct call without one) is the same as no signal.
    init.set_signal(Some(signal.unchecked_ref()));
    init.set_headers(&headers(spec, &request_id)?.into());
    init.set_body(&body(spec, &messages)?.into());

    Ok(then(&glue::fetch(&spec.url, &init)?, &spec.on_response))
}

/// The response: its body as the answer stream when it is OK, else an `HttpError`.
fn answer(response: Response, ignore: &JsValue) -> Result<JsValue, JsValue> {
    match response.body() {
        Some(body) if response.ok() => text_stream(&body, ignore).map(JsValue::from),
        body => {
            if let Some(body) = body {
                discard(&body.cancel(), ignore);
            }
            Err(http_error(response.status()))
        }
    }
}

/// The system prompt, the shared history, then the user's input.
fn messages(spec: &ChatSpec, input: &JsValue, history: &JsValue) -> Result<Array, JsValue> {
    let messages = Array::new();
    if let Some(prompt) = &spec.system_prompt {
        messages.push(&message("system", prompt));
    }
    if history.is_truthy() {
        push_each(&messages, history)?;
    }
    messages.push(&message("user", input));
    Ok(messages)
}

fn message(role: &str, content: &JsValue) -> JsValue {
    JsObject::new()
        .set("role", role)
        .set("content", content.clone())
        .build()
}

/// Ours first, then the app's (which may override them, as a spread would).
fn headers(spec: &ChatSpec, request_id: &JsValue) -> Result<Object, JsValue> {
    let headers: Object = JsObject::new()
        .set("content-type", "application/json")
        .set("accept", "text/event-stream")
        .set("idempotency-key", request_id.clone())
        .build()
        .unchecked_into();
    // `try_assign`: an app object's getter may throw.
    Object::try_assign(&headers, spec.headers.unchecked_ref())
}

/// `JSON.stringify({ ...body, model, messages, stream: true })`.
fn body(spec: &ChatSpec, messages: &Array) -> Result<JsString, JsValue> {
    let body = Object::try_assign(&Object::new(), spec.body.unchecked_ref())?;
    for (key, value) in [
        ("model", spec.model.clone()),
        ("messages", messages.into()),
        ("stream", JsValue::TRUE),
    ] {
        Reflect::set(&body, &JsValue::from_str(key), &value)?;
    }
    JSON::stringify(&body)
}

/// An error the ladder classifies by `status` (see `classifyError` in glue.js).
fn http_error(status: u16) -> JsValue {
    let message = JsString::from("chat completion answered HTTP ").concat(&JsValue::from(status));
    let error = js_sys::Error::new(&String::from(message));
    error.set_name("HttpError");
    let _ = Reflect::set(&error, &JsValue::from_str("status"), &JsValue::from(status));
    error.into()
}
