//! **Development only.** `gladiaProvisioner`, a `provision()` that calls `POST {apiUrl}/v2/live`
//! from the page with the key (anyone who opens the page can read it), through the global
//! `fetch` with the transcriber's `AbortSignal`. Built only where Gladia's protocol is (a custom
//! build without it leaves this out: docs/setup.md, "A build for fewer providers").

use crate::core::text::decimal;
use crate::web::convert::{type_error, Fields};
use crate::web::glue;
use crate::web::js_object::JsObject;
use alloc::borrow::ToOwned;
use alloc::string::String;
use js_sys::{Function, Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{RequestInit, Response};

/// **Development only.** A `provision()` that calls Gladia's `POST {apiUrl}/v2/live` from the
/// page with `apiKey`: anyone who opens the page can read the key. In production `provision()`
/// calls your own backend, which holds the key (L1). `config` is merged over PCM16 mono 16 kHz.
#[wasm_bindgen(js_name = gladiaProvisioner, unchecked_return_type = "Provisioner")]
pub fn gladia_provisioner(
    #[wasm_bindgen(unchecked_param_type = "GladiaProvisionerOptions")] options: JsValue,
) -> Result<Function, JsValue> {
    let fields = Fields::of(&options, "options")?;
    let api_key = fields.string("apiKey")?;
    let api_url = if fields.get("apiUrl")?.is_undefined() {
        "https://api.gladia.io".to_owned()
    } else {
        fields.string("apiUrl")?
    };
    let config = fields.get("config")?;
    if !config.is_undefined() && !config.is_object() {
        return Err(type_error("options.config must be an object"));
    }
    make(api_key, &api_url, &config)
}

#[wasm_bindgen(typescript_custom_section)]
const GLADIA_PROVISIONER_TYPES: &str = r#"
/** Options of the development-only `gladiaProvisioner`. */
export interface GladiaProvisionerOptions {
  /** A Gladia key: it is readable by anyone who opens the page. Never ship this. */
  apiKey: string;
  /** Default "https://api.gladia.io". */
  apiUrl?: string;
  /** The `POST /v2/live` body, merged over `{ encoding: "wav/pcm", sample_rate: 16000, bit_depth: 16, channels: 1 }`. */
  config?: Record<string, unknown>;
}
"#;

/// The provisioner function: `({ signal }) => Promise<{ id, url }>`. Its body, PCM16 mono 16 kHz
/// with `config` merged over it, is serialized once, here; a `config` whose getters throw is
/// this call's error.
fn make(api_key: String, api_url: &str, config: &JsValue) -> Result<Function, JsValue> {
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
