//! `openAiCompatibleSpeech`: a `synthesize` for an OpenAI-compatible `/v1/audio/speech` endpoint
//! (normally the app's backend, which holds the key), the speech twin of `openAiCompatibleRoute`.
//! It POSTs the sentence with the `synthesize` signal through the global `fetch` and resolves as
//! soon as the response headers come, with the body as a `SpeechStream` of raw PCM: the player
//! starts at its first bytes.

use crate::web::convert::{range_error, type_error, Fields};
use crate::web::glue;
use crate::web::js_object::JsObject;
use crate::web::promise::{discard, ignore, then};
use alloc::string::String;
use js_sys::{JsString, Object, Promise, Reflect, JSON};
use wasm_bindgen::{intern, prelude::*};
use web_sys::{RequestInit, Response};

/// What OpenAI's `pcm` is: 24 kHz, 16-bit signed little-endian, mono.
const PCM_SAMPLE_RATE: u32 = 24_000;

struct SpeechSpec {
    url: JsValue,
    model: JsValue,
    voice: JsValue,
    /// The app's extra headers and body fields: objects, or `undefined`; read on every request.
    headers: JsValue,
    body: JsValue,
    on_response: JsValue,
}

/// `openAiCompatibleSpeech({ url, model, voice, format?: "pcm", headers?, body? })`: a
/// `synthesize(text, { turnId, signal })` that streams the sentence's speech. Throws a
/// `TypeError`/`RangeError` naming a bad field.
#[wasm_bindgen(js_name = openAiCompatibleSpeech, unchecked_return_type = "Synthesize")]
pub fn open_ai_compatible_speech(
    #[wasm_bindgen(unchecked_param_type = "OpenAiCompatibleSpeechOptions")] options: JsValue,
) -> Result<JsValue, JsValue> {
    let fields = Fields::of(&options, "options")?;
    let url = fields.string("url")?;
    let model = fields.string("model")?;
    let voice = fields.string("voice")?;
    if let Some(format) = fields.optional_string("format")? {
        if format != "pcm" {
            return Err(range_error(
                "options.format must be \"pcm\" (streamed raw PCM; for encoded audio write your own synthesize)",
            ));
        }
    }
    let headers = fields.optional_object("headers")?;
    let body = fields.optional_object("body")?;
    let ignore = ignore();
    let on_response =
        Closure::<dyn Fn(Response) -> Result<JsValue, JsValue>>::new(move |response| {
            speech_stream(response, &ignore)
        })
        .into_js_value();
    let spec = SpeechSpec {
        url: url.into(),
        model: model.into(),
        voice: voice.into(),
        headers,
        body,
        on_response,
    };
    let synthesize = Closure::<dyn Fn(JsValue, JsValue) -> Promise>::new(move |text, request| {
        post(&spec, &text, &request).unwrap_or_else(|error| Promise::reject(&error))
    });
    Ok(synthesize.into_js_value())
}

fn post(spec: &SpeechSpec, text: &JsValue, request: &JsValue) -> Result<Promise, JsValue> {
    if !text.is_string() {
        return Err(type_error("text must be a string"));
    }
    let signal = if request.is_object() {
        Reflect::get(request, &JsValue::from_str(intern("signal")))?
    } else {
        JsValue::UNDEFINED
    };
    let init = RequestInit::new();
    init.set_method("POST");
    init.set_signal(Some(signal.unchecked_ref()));
    let headers: Object = JsObject::new()
        .set("content-type", "application/json")
        .build()
        .unchecked_into();
    let headers = Object::try_assign(&headers, spec.headers.unchecked_ref())?;
    init.set_headers(&headers.into());
    init.set_body(&body(spec, text)?.into());
    Ok(then(&glue::fetch(&spec.url, &init)?, &spec.on_response))
}

/// `JSON.stringify({ ...body, model, voice, input, response_format: "pcm" })`.
fn body(spec: &SpeechSpec, text: &JsValue) -> Result<JsString, JsValue> {
    let body = Object::try_assign(&Object::new(), spec.body.unchecked_ref())?;
    for (key, value) in [
        ("model", spec.model.clone()),
        ("voice", spec.voice.clone()),
        ("input", text.clone()),
        ("response_format", JsValue::from_str("pcm")),
    ] {
        Reflect::set(&body, &JsValue::from_str(key), &value)?;
    }
    JSON::stringify(&body)
}

/// An OK response's body as a `SpeechStream`, else an `HttpError` with its `status`.
fn speech_stream(response: Response, ignore: &JsValue) -> Result<JsValue, JsValue> {
    match response.body() {
        Some(body) if response.ok() => Ok(JsObject::new()
            .set("stream", body)
            .set("format", "pcm16")
            .set("sampleRate", PCM_SAMPLE_RATE)
            .set("channels", 1u32)
            .build()),
        body => {
            if let Some(body) = body {
                discard(&body.cancel(), ignore);
            }
            let status = response.status();
            let message = JsString::from("speech answered HTTP ").concat(&JsValue::from(status));
            let error = js_sys::Error::new(&String::from(message));
            error.set_name("HttpError");
            let _ = Reflect::set(&error, &JsValue::from_str("status"), &JsValue::from(status));
            Err(error.into())
        }
    }
}
