//! Records and events as the plain JS objects of rules T13 and T14.

use crate::core::record::{Attempt, TurnRecord};
use crate::core::turn::{Event, TurnLadder};
use crate::web::js_object::JsObject;
use js_sys::Array;
use wasm_bindgen::JsValue;

/// A `TurnRecord` with exactly the fields of T13; optional fields are absent when unset.
pub(crate) fn record_to_js(record: &TurnRecord, ladder: &TurnLadder) -> JsValue {
    let attempts: Array = record
        .attempts
        .iter()
        .map(|attempt| attempt_to_js(attempt, ladder))
        .collect();
    JsObject::new()
        .set("turnId", record.turn_id.as_str())
        .set("input", record.input.as_str())
        .set("status", record.status.as_str())
        .set("startedAt", record.started_at.0 as f64)
        .set("deadlineAt", record.deadline_at.0 as f64)
        .set("attempts", attempts)
        .set_some("acceptedRequestId", record.accepted_request_id.as_deref())
        .set_some("acceptedText", record.accepted_text.as_deref())
        .set_some(
            "recoveryReason",
            record.recovery_reason.map(|reason| reason.as_str()),
        )
        .build()
}

fn attempt_to_js(attempt: &Attempt, ladder: &TurnLadder) -> JsValue {
    JsObject::new()
        .set("requestId", attempt.request_id.as_str())
        .set("route", ladder.route_name(attempt.route))
        .set("startedAt", attempt.started_at.0 as f64)
        .set_some("finishedAt", attempt.finished_at.map(|at| at.0 as f64))
        .set("result", attempt.result.as_str())
        .set_some("error", attempt.error.map(|failure| failure.to_string()))
        .build()
}

/// An event object: `type`, ids, route name and times — never input, answer or headers.
pub(crate) fn event_to_js(event: &Event, ladder: &TurnLadder) -> JsValue {
    match event {
        Event::TurnStarted { turn_id, at } => JsObject::new()
            .set("type", "turn_started")
            .set("turnId", turn_id.as_str())
            .set("at", at.0 as f64),
        Event::AttemptStarted {
            turn_id,
            request_id,
            route,
            at,
            timeout_at,
        } => JsObject::new()
            .set("type", "attempt_started")
            .set("turnId", turn_id.as_str())
            .set("requestId", request_id.as_str())
            .set("route", ladder.route_name(*route))
            .set("at", at.0 as f64)
            .set("timeoutAt", timeout_at.0 as f64),
        Event::AttemptFinished {
            turn_id,
            request_id,
            route,
            at,
            result,
            error,
            duration_ms,
        } => JsObject::new()
            .set("type", "attempt_finished")
            .set("turnId", turn_id.as_str())
            .set("requestId", request_id.as_str())
            .set("route", ladder.route_name(*route))
            .set("at", at.0 as f64)
            .set("result", result.as_str())
            .set_some("error", error.map(|failure| failure.to_string()))
            .set("durationMs", *duration_ms as f64),
        Event::Accepted {
            turn_id,
            request_id,
            route,
            at,
            latency_ms,
        } => JsObject::new()
            .set("type", "accepted")
            .set("turnId", turn_id.as_str())
            .set("requestId", request_id.as_str())
            .set("route", ladder.route_name(*route))
            .set("at", at.0 as f64)
            .set("latencyMs", *latency_ms as f64),
        Event::Recovered {
            turn_id,
            reason,
            at,
            latency_ms,
        } => JsObject::new()
            .set("type", "recovered")
            .set("turnId", turn_id.as_str())
            .set("reason", reason.as_str())
            .set("at", at.0 as f64)
            .set("latencyMs", *latency_ms as f64),
        Event::Cancelled { turn_id, at } => JsObject::new()
            .set("type", "cancelled")
            .set("turnId", turn_id.as_str())
            .set("at", at.0 as f64),
    }
    .build()
}
