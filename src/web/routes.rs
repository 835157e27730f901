//! `openAiCompatibleRoute`: a route for an OpenAI-compatible chat-completions endpoint (normally
//! the app's own backend proxy), streaming, abortable, its SSE decoded by the core.

use crate::core::sse::{ChatDelta, ChatStreamDecoder as Decoder};
use crate::web::convert::{type_error, Fields};
use crate::web::js_object::JsObject;
use js_sys::{Array, Function, Uint8Array};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/web/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = chatRoute)]
    fn chat_route(spec: &JsValue, new_decoder: &Function) -> JsValue;
}

/// Turns the bytes of a chat-completions event stream into answer text, split anywhere: the
/// parser `openAiCompatibleRoute` uses, for routes of your own.
#[wasm_bindgen]
pub struct ChatStreamDecoder {
    decoder: Decoder,
    failed: bool,
}

#[wasm_bindgen]
impl ChatStreamDecoder {
    /// A decoder at the start of a stream.
    #[wasm_bindgen(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> ChatStreamDecoder {
        ChatStreamDecoder {
            decoder: Decoder::new(),
            failed: false,
        }
    }

    /// Feeds the next bytes of the body; returns the text pieces they completed.
    #[wasm_bindgen(unchecked_return_type = "string[]")]
    pub fn push(&mut self, bytes: &Uint8Array) -> Array {
        self.decoder.push(&bytes.to_vec());
        self.drain()
    }

    /// The body ended; returns any text it completed.
    #[wasm_bindgen(unchecked_return_type = "string[]")]
    pub fn finish(&mut self) -> Array {
        self.decoder.finish();
        self.drain()
    }

    /// Whether the stream said `[DONE]` or reported an error: nothing more will come.
    #[wasm_bindgen(getter)]
    pub fn done(&self) -> bool {
        self.decoder.is_ended()
    }

    /// Whether the stream reported an error.
    #[wasm_bindgen(getter)]
    pub fn failed(&self) -> bool {
        self.failed
    }

    fn drain(&mut self) -> Array {
        let pieces = Array::new();
        while let Some(delta) = self.decoder.next_delta() {
            match delta {
                ChatDelta::Text(text) => {
                    pieces.push(&JsValue::from_str(&text));
                }
                ChatDelta::Error(_) => self.failed = true,
                ChatDelta::Done => {}
            }
        }
        pieces
    }
}

/// `openAiCompatibleRoute({ name, url, model, headers?, systemPrompt?, persona?, shareHistory?,
/// body? })`: a route that POSTs `{ ...body, model, messages, stream: true }` to `url` with the
/// attempt's signal and streams the answer. Throws a `TypeError`/`RangeError` naming a bad field.
#[wasm_bindgen(js_name = openAiCompatibleRoute, unchecked_return_type = "Route")]
pub fn open_ai_compatible_route(
    #[wasm_bindgen(unchecked_param_type = "OpenAiCompatibleRouteOptions")] options: JsValue,
) -> Result<JsValue, JsValue> {
    let fields = Fields::of(&options, "options")?;
    let mut spec = JsObject::new()
        .set("name", fields.string("name")?)
        .set("url", fields.string("url")?)
        .set("model", fields.string("model")?)
        .set("shareHistory", fields.bool("shareHistory", false)?);
    if let Some(system_prompt) = fields.optional_string("systemPrompt")? {
        spec = spec.set("systemPrompt", system_prompt);
    }
    if let Some(persona) = fields.optional_string("persona")? {
        spec = spec.set("persona", persona);
    }
    for key in ["headers", "body"] {
        let value = fields.get(key)?;
        if value.is_undefined() {
            continue;
        }
        if !value.is_object() || Array::is_array(&value) {
            return Err(type_error(&format!("options.{key} must be an object")));
        }
        spec = spec.set(key, value);
    }
    let new_decoder = Closure::<dyn Fn() -> JsValue>::new(|| ChatStreamDecoder::new().into())
        .into_js_value()
        .unchecked_into::<Function>();
    Ok(chat_route(&spec.build(), &new_decoder))
}
