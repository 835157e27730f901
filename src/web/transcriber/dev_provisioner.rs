//! **Development only.** The `provision()` behind `gladiaProvisioner`: `POST {apiUrl}/v2/live`
//! from the page with the key (anyone who opens the page can read it), through the global
//! `fetch` with the transcriber's `AbortSignal`.

use crate::core::text::decimal;
use crate::web::glue;
use crate::web::js_object::JsObject;
use alloc::string::String;
use js_sys::{Function, Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{RequestInit, Response};

/// The provisioner function: `({ signal }) => Promise<{ id, url }>`. Its body, PCM16 mono 16 kHz
/// with `config` merged over it, is serialized once, here; a `config` whose getters throw is
/// this call's error.
pub(super) fn make(api_key: String, api_url: &str, config: &JsValue) -> Result<Function, JsValue> {
    let endpoint = [api_url.trim_end_matches('/'), "/v2/live"].concat();
    let body: Object = JsObject::new()
        .set("encoding", "wav/pcm")
        .set("sample_rate", 16_000)
        .set("bit_depth", 16)
        .set("channels", 1)
        .build()
        .unchecked_into();
    if !config.is_undefined() {
        Object::try_assign(&body, config.unchecked_ref())?;
    }
    let body = JsValue::from(js_sys::JSON::stringify(&body)?);
    let provision = Closure::<dyn Fn(JsValue) -> JsValue>::new(move |request: JsValue| {
        let (endpoint, api_key, body) = (endpoint.clone(), api_key.clone(), body.clone());
        glue::promise(async move { post(&endpoint, &api_key, &body, &request).await }).into()
    });
    // Lives as long as the app holds the function.
    Ok(provision.into_js_value().unchecked_into())
}

async fn post(
    endpoint: &str,
    api_key: &str,
    body: &JsValue,
    request: &JsValue,
) -> Result<JsValue, JsValue> {
    let signal = if request.is_undefined() {
        JsValue::UNDEFINED
    } else {
        Reflect::get(request, &JsValue::from_str("signal"))?
    };
    let headers = JsObject::new()
        .set("content-type", "application/json")
        .set("x-gladia-key", api_key)
        .build();
    let init = RequestInit::new();
    init.set_method("POST");
    // Set as given: `undefined` is the same as no signal.
    init.set_signal(Some(signal.unchecked_ref()));
    init.set_headers(&headers);
    init.set_body(body);
    let response: Response = JsFuture::from(glue::fetch(&JsValue::from_str(endpoint), &init)?)
        .await?
        .dyn_into()?;
    if !response.ok() {
        let status = response.status();
        let error =
            js_sys::Error::new(&["provisioning failed: HTTP ", &decimal(status.into())].concat());
        let _ = Reflect::set(&error, &JsValue::from_str("status"), &status.into());
        return Err(error.into());
    }
    let session = JsFuture::from(response.json()?).await?;
    let field = |key: &str| Reflect::get(&session, &JsValue::from_str(key));
    Ok(JsObject::new()
        .set("id", field("id")?)
        .set("url", field("url")?)
        .build())
}
