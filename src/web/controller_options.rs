//! `new TurnController(routes, options)`: JS routes and options → the ladder's configuration,
//! every bad field a `TypeError`/`RangeError` that names it.

use crate::core::text::decimal;
use crate::core::turn::{FallbackPolicy, RouteSpec, TurnConfig};
use crate::web::convert::{range_error, type_error, Fields};
use alloc::vec::Vec;
use js_sys::{Array, Function};
use wasm_bindgen::prelude::*;

/// A route as JS gave it: the object (the `this` of `generate`), its `generate`, its name.
pub(crate) struct JsRoute {
    pub(crate) object: JsValue,
    pub(crate) generate: Function,
    pub(crate) name: JsValue,
}

/// The routes as JS gave them, and what the ladder knows of each.
pub(crate) fn parse_routes(routes: &JsValue) -> Result<(Vec<JsRoute>, Vec<RouteSpec>), JsValue> {
    if !Array::is_array(routes) {
        return Err(type_error("routes must be an array"));
    }
    let routes = Array::from(routes);
    if routes.length() == 0 {
        return Err(range_error("routes must not be empty"));
    }
    let mut js_routes = Vec::new();
    let mut specs = Vec::new();
    for (index, object) in routes.iter().enumerate() {
        let path = ["routes[", &decimal(index as u64), "]"].concat();
        // Not `Fields::of`: a function (the common mistake: `generate` passed on its own) is
        // no route, and the error says what one is.
        if !object.is_object() {
            return Err(type_error(&[&path, " must be a route, an object { name, generate({ requestId, turnId, input, signal }) }: e.g. { name: \"primary\", generate: yourFunction }"].concat()));
        }
        let fields = Fields::of(&object, &path)?;
        let name = fields.string("name")?;
        let generate = fields.function("generate")?;
        let spec = RouteSpec {
            persona: fields.optional_string("persona")?,
            share_history: fields.bool("shareHistory", false)?,
            name,
        };
        js_routes.push(JsRoute {
            name: JsValue::from_str(&spec.name),
            object: object.clone(),
            generate,
        });
        specs.push(spec);
    }
    Ok((js_routes, specs))
}

pub(crate) fn parse_config(options: &Fields, specs: Vec<RouteSpec>) -> Result<TurnConfig, JsValue> {
    let mut config = TurnConfig::new(specs, options.string("recoveryText")?);
    config.turn_deadline_ms = options.positive_ms("turnDeadlineMs", config.turn_deadline_ms)?;
    config.attempt_timeout_ms =
        options.positive_ms("attemptTimeoutMs", config.attempt_timeout_ms)?;
    let max_per_turn = options.count(
        "maxAttemptsPerTurn",
        u64::from(config.max_attempts_per_turn),
        1,
    )?;
    config.max_attempts_per_turn = u32::try_from(max_per_turn).unwrap_or(u32::MAX);
    if !options.get("maxAttemptsPerSession")?.is_undefined() {
        let max = options.count("maxAttemptsPerSession", 0, 1)?;
        config.max_attempts_per_session = Some(u32::try_from(max).unwrap_or(u32::MAX));
    }
    let max_input = options.count("maxInputChars", config.max_input_chars as u64, 1)?;
    config.max_input_chars = usize::try_from(max_input).unwrap_or(usize::MAX);
    let history = options.count("historyLimit", config.history_limit as u64, 1)?;
    config.history_limit = usize::try_from(history).unwrap_or(usize::MAX);
    let max_answer = options.count("maxAnswerChars", config.max_answer_chars as u64, 1)?;
    config.max_answer_chars = usize::try_from(max_answer).unwrap_or(usize::MAX);
    let history_chars = options.count("historyMaxChars", config.history_max_chars as u64, 1)?;
    config.history_max_chars = usize::try_from(history_chars).unwrap_or(usize::MAX);
    config.first_chunk_timeout_ms =
        options.positive_ms("firstChunkTimeoutMs", config.attempt_timeout_ms)?;
    config.chunk_idle_timeout_ms =
        options.positive_ms("chunkIdleTimeoutMs", config.chunk_idle_timeout_ms)?;
    let policy = options.get("fallbackPolicy")?;
    if !policy.is_undefined() {
        config.fallback_policy = match policy.as_string().as_deref() {
            Some("any") => FallbackPolicy::Any,
            Some("samePersona") => FallbackPolicy::SamePersona,
            Some("none") => FallbackPolicy::None,
            Some(_) => {
                return Err(range_error(
                    "options.fallbackPolicy must be \"any\", \"samePersona\" or \"none\"",
                ))
            }
            None => return Err(type_error("options.fallbackPolicy must be a string")),
        };
    }
    let retry_budget = options.get("retryBudget")?;
    if !retry_budget.is_undefined() {
        let budget = Fields::of(&retry_budget, "options.retryBudget")?;
        config.retry_max_tokens = budget.non_negative("maxTokens", config.retry_max_tokens)?;
        config.retry_token_ratio = budget.non_negative("tokenRatio", config.retry_token_ratio)?;
    }
    Ok(config)
}
