//! `openAiCompatibleRoute`: a route for an OpenAI-compatible chat-completions endpoint (normally
//! the app's own backend proxy), streaming, abortable, its SSE decoded by the core. The request
//! is src/web/chat_request.rs, the answer stream src/web/answer_stream.rs.

use crate::core::turn::sse::{ChatDelta, ChatStreamDecoder as Decoder};
use crate::web::chat_request::{generate, on_response, ChatSpec};
use crate::web::convert::Fields;
use crate::web::js_object::JsObject;
use js_sys::{Array, Promise, Uint8Array};
use wasm_bindgen::prelude::*;

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
///
/// The route is a plain object, `{ name, shareHistory, persona?, generate }`, so an app may wrap
/// it or call `generate` itself: it resolves with a `ReadableStream` of the answer's text.
#[wasm_bindgen(js_name = openAiCompatibleRoute, unchecked_return_type = "Route")]
pub fn open_ai_compatible_route(
    #[wasm_bindgen(unchecked_param_type = "OpenAiCompatibleRouteOptions")] options: JsValue,
) -> Result<JsValue, JsValue> {
    let fields = Fields::of(&options, "options")?;
    let name = fields.string("name")?;
    let url = fields.string("url")?;
    let model = fields.string("model")?;
    let share_history = fields.bool("shareHistory", false)?;
    let system_prompt = fields.optional_string("systemPrompt")?;
    let persona = fields.optional_string("persona")?;
    let headers = fields.optional_object("headers")?;
    let body = fields.optional_object("body")?;
    let spec = ChatSpec {
        url: url.into(),
        model: model.into(),
        system_prompt: system_prompt
            .filter(|prompt| !prompt.is_empty())
            .map(JsValue::from),
        headers,
        body,
        on_response: on_response(),
    };
    let generate =
        Closure::<dyn Fn(JsValue) -> Promise>::new(move |request| generate(&spec, &request));
    let mut route = JsObject::new()
        .set("name", name)
        .set("shareHistory", share_history);
    if let Some(persona) = persona {
        route = route.set("persona", persona);
    }
    Ok(route.set("generate", generate.into_js_value()).build())
}
