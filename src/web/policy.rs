//! `ReconnectPolicy` for JS: the pure reconnect rules (R1–R5, L7), usable with any socket.

use crate::core::stt::backoff::Jitter;
use crate::core::stt::protocol::{classify_close, Codec, Profile};
use crate::core::stt::protocols;
use crate::core::stt::reconnect::{Decision, ReconnectConfig, ReconnectPolicy as Policy};
use crate::core::time::Millis;
use crate::web::convert::{range_error, time_arg, type_error, whole_arg, Fields};
use crate::web::js_object::JsObject;
use alloc::boxed::Box;
use core::cell::RefCell;
use wasm_bindgen::prelude::*;

/// The live speech-to-text reconnect rules as a pure state machine: report what the socket did,
/// with the time, and follow the decision. See DESIGN.md §2 (L3).
#[wasm_bindgen]
pub struct ReconnectPolicy {
    /// Taken by `free()`; every method of a freed policy throws a `TypeError`.
    policy: RefCell<Option<Policy>>,
    /// Whose close codes `onClose` classifies, and its codec (a close may depend on what it saw).
    protocol: &'static Profile,
    codec: RefCell<Box<dyn Codec>>,
}

#[wasm_bindgen]
impl ReconnectPolicy {
    /// `new ReconnectPolicy(options?)`. Throws a `TypeError`/`RangeError` naming a bad option.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_optional_param_type = "ReconnectPolicyOptions")] options: Option<
            JsValue,
        >,
    ) -> Result<ReconnectPolicy, JsValue> {
        let options = options.unwrap_or(JsValue::UNDEFINED);
        let mut policy = Policy::new(parse_reconnect_config(&options)?);
        let mut protocol = DEFAULT_PROTOCOL;
        if !options.is_undefined() && !options.is_null() {
            let fields = Fields::of(&options, "options")?;
            protocol = parse_protocol(&fields)?;
            policy.set_throttled_delay_ms(
                fields.non_negative_ms("throttledDelayMs", Policy::DEFAULT_THROTTLED_DELAY_MS)?,
            );
        }
        Ok(ReconnectPolicy {
            policy: RefCell::new(Some(policy)),
            codec: RefCell::new((protocol.codec)()),
            protocol,
        })
    }

    /// Releases the policy. Idempotent (the `free()` wasm-bindgen generates throws on a second
    /// call); a method called afterwards throws a `TypeError`. Also `[Symbol.dispose]()`.
    pub fn free(&self) {
        if let Ok(mut policy) = self.policy.try_borrow_mut() {
            policy.take();
        }
    }

    /// The socket opened at `nowMs` (any monotonic clock, e.g. `performance.now()`).
    #[wasm_bindgen(js_name = onOpen)]
    pub fn on_open(
        &self,
        #[wasm_bindgen(js_name = nowMs, unchecked_param_type = "number")] now_ms: JsValue,
    ) -> Result<(), JsValue> {
        let now = Millis(time_arg(&now_ms, "nowMs")?);
        self.with(|policy| policy.on_open(now))
    }

    /// The socket closed with `code` at `nowMs`: what to do next. A close without an `onOpen`
    /// since the last close is a failed connect (R5).
    #[wasm_bindgen(js_name = onClose, unchecked_return_type = "ReconnectDecision")]
    pub fn on_close(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] code: JsValue,
        #[wasm_bindgen(js_name = nowMs, unchecked_param_type = "number")] now_ms: JsValue,
    ) -> Result<JsValue, JsValue> {
        let code = whole_arg(&code, "code", 0, u32::from(u16::MAX))?;
        let now = Millis(time_arg(&now_ms, "nowMs")?);
        let code = u16::try_from(code).unwrap_or(u16::MAX);
        let class = match self.codec.try_borrow_mut() {
            Ok(mut codec) => classify_close(self.protocol, &mut **codec, code),
            Err(_) => self.protocol.close_class(code),
        };
        self.with(|policy| decision_to_js(policy.on_close(code, class, now)))
    }

    /// Provisioning failed with this HTTP status (0 for a network error) at `nowMs`.
    #[wasm_bindgen(js_name = onProvisionFailed, unchecked_return_type = "ReconnectDecision")]
    pub fn on_provision_failed(
        &self,
        #[wasm_bindgen(js_name = httpStatusOrZero, unchecked_param_type = "number")]
        http_status_or_zero: JsValue,
        #[wasm_bindgen(js_name = nowMs, unchecked_param_type = "number")] now_ms: JsValue,
    ) -> Result<JsValue, JsValue> {
        let status = whole_arg(&http_status_or_zero, "httpStatusOrZero", 0, 999)?;
        let now = Millis(time_arg(&now_ms, "nowMs")?);
        let status = u16::try_from(status).unwrap_or(u16::MAX);
        self.with(|policy| decision_to_js(policy.on_provision_failed(status, now)))
    }

    /// The server sent `end_session` while the session was in use, at `nowMs` (R5): re-provision
    /// within the window, or stop with `dead_session`.
    #[wasm_bindgen(js_name = onSessionEnded, unchecked_return_type = "ReconnectDecision")]
    pub fn on_session_ended(
        &self,
        #[wasm_bindgen(js_name = nowMs, unchecked_param_type = "number")] now_ms: JsValue,
    ) -> Result<JsValue, JsValue> {
        let now = Millis(time_arg(&now_ms, "nowMs")?);
        self.with(|policy| decision_to_js(policy.on_session_ended(now)))
    }

    /// `provision()` gave a session: the run of provisioning failures without a status ends (L7).
    #[wasm_bindgen(js_name = onProvisioned)]
    pub fn on_provisioned(&self) -> Result<(), JsValue> {
        self.with(Policy::on_provisioned)
    }

    /// Sockets in a row that closed before they opened on the current URL (R5).
    #[wasm_bindgen(getter = failedConnects)]
    pub fn failed_connects(&self) -> Result<u32, JsValue> {
        self.with(|policy| policy.failed_connects())
    }

    /// The local client went away (stop, dispose, page leaving): from now on every decision is stop.
    #[wasm_bindgen(js_name = onClientDetach)]
    pub fn on_client_detach(&self) -> Result<(), JsValue> {
        self.with(Policy::on_client_detach)
    }

    /// Backoff steps taken since the last reset.
    #[wasm_bindgen(getter = backoffAttempt)]
    pub fn backoff_attempt(&self) -> Result<u32, JsValue> {
        self.with(|policy| policy.backoff_attempt())
    }
}

impl ReconnectPolicy {
    /// Runs `act` on the policy, or fails with a `TypeError` once it was freed.
    fn with<R>(&self, act: impl FnOnce(&mut Policy) -> R) -> Result<R, JsValue> {
        match self.policy.try_borrow_mut().as_deref_mut() {
            Ok(Some(policy)) => Ok(act(policy)),
            _ => Err(type_error("the ReconnectPolicy was freed")),
        }
    }
}

/// `ReconnectPolicyOptions` → config; absent options keep the defaults of DESIGN.md.
pub(crate) fn parse_reconnect_config(options: &JsValue) -> Result<ReconnectConfig, JsValue> {
    let mut config = ReconnectConfig {
        random_seed: random_seed(),
        ..ReconnectConfig::default()
    };
    if options.is_undefined() || options.is_null() {
        return Ok(config);
    }
    let fields = Fields::of(options, "options")?;
    config.stable_open_ms = fields.non_negative_ms("stableOpenMs", config.stable_open_ms)?;
    config.reprovision_window_ms =
        fields.positive_ms("reprovisionWindowMs", config.reprovision_window_ms)?;
    let max = fields.count(
        "maxReprovisionsPerWindow",
        u64::from(config.max_reprovisions_per_window),
        0,
    )?;
    config.max_reprovisions_per_window = u32::try_from(max).unwrap_or(u32::MAX);
    config.initial_delay_ms = fields.non_negative_ms("initialDelayMs", config.initial_delay_ms)?;
    config.max_delay_ms = fields.non_negative_ms("maxDelayMs", config.max_delay_ms)?;
    if config.max_delay_ms < config.initial_delay_ms {
        return Err(range_error(
            "options.maxDelayMs must not be below options.initialDelayMs",
        ));
    }
    let jitter = fields.get("jitter")?;
    if !jitter.is_undefined() {
        config.jitter = match jitter.as_string().as_deref() {
            Some("full") => Jitter::Full,
            Some("none") => Jitter::None,
            Some(_) => return Err(range_error("options.jitter must be \"full\" or \"none\"")),
            None => return Err(type_error("options.jitter must be a string")),
        };
    }
    // Seeds up to 2^53 - 1 arrive exactly as JS numbers.
    config.random_seed = fields.count("randomSeed", config.random_seed, 0)?;
    let failed = fields.count(
        "maxFailedConnects",
        u64::from(config.max_failed_connects),
        1,
    )?;
    config.max_failed_connects = u32::try_from(failed).unwrap_or(u32::MAX);
    let attempts = fields.count(
        "maxProvisionAttempts",
        u64::from(config.max_provision_attempts),
        1,
    )?;
    config.max_provision_attempts = u32::try_from(attempts).unwrap_or(u32::MAX);
    Ok(config)
}

/// The protocol of a `LiveTranscriber` or `ReconnectPolicy` whose options name none (DESIGN.md L2).
pub(crate) const DEFAULT_PROTOCOL: &Profile = protocols::DEFAULT;

/// `options.protocol`: one of [`protocols::ALL`] by name, else a `RangeError` listing them;
/// [`DEFAULT_PROTOCOL`] when absent.
pub(crate) fn parse_protocol(fields: &Fields<'_>) -> Result<&'static Profile, JsValue> {
    let Some(name) = fields.optional_string("protocol")? else {
        return Ok(DEFAULT_PROTOCOL);
    };
    protocols::named(&name).ok_or_else(|| {
        range_error(&["options.protocol must be one of ", &protocols::names()].concat())
    })
}

/// A seed for jitter when the app gives none: jitter needs spread, not secrecy.
fn random_seed() -> u64 {
    (js_sys::Math::random() * 9_007_199_254_740_991.0) as u64
}

fn decision_to_js(decision: Decision) -> JsValue {
    JsObject::new()
        .set("action", decision.action.as_str())
        .set("delayMs", decision.delay_ms as f64)
        .set("reason", decision.reason.as_str())
        .build()
}
