//! Records and events as the plain JS objects of rules T13 and T14, built by `glue.js` from
//! numbers and the JS strings the shell already holds.

use crate::core::turn::record::{AttemptResult, Failure, RecoveryReason, TurnRecord, TurnStatus};
use crate::core::turn::{AttemptId, DiscardReason, Event};
use crate::web::glue;
use alloc::string::String;
use alloc::vec::Vec;
use js_sys::{Array, JsString};
use wasm_bindgen::JsValue;

/// A whole answer as a route returned it.
pub(crate) struct Answer {
    pub(crate) request_id: AttemptId,
    pub(crate) text: String,
    pub(crate) js: JsValue,
}

/// The JS strings of one turn, kept so that building its objects decodes nothing again.
pub(crate) struct TurnStrings {
    pub(crate) turn_id: JsValue,
    pub(crate) input: JsValue,
    /// The JS strings of the attempts' request ids, by attempt index.
    pub(crate) request_ids: Vec<Option<JsValue>>,
    /// The answer as JS handed it back, with the request id that produced it and its text.
    pub(crate) answer: Option<Answer>,
}

impl TurnStrings {
    pub(crate) fn new(turn_id: JsValue, input: JsValue) -> Self {
        TurnStrings {
            turn_id,
            input,
            request_ids: Vec::new(),
            answer: None,
        }
    }

    /// Strings for a turn the shell no longer holds: decoded from the record.
    pub(crate) fn decoded(record: &TurnRecord) -> Self {
        TurnStrings::new(
            JsValue::from_str(&record.turn_id),
            JsValue::from_str(&record.input),
        )
    }

    /// The JS string of an attempt's request id, made once when it starts: the turn id's JS
    /// string and `suffix`, the JS string of [`AttemptId::suffix`], joined by JS.
    pub(crate) fn add_request_id(&mut self, request_id: &AttemptId, suffix: &JsValue) -> JsValue {
        let js: JsValue = JsString::from(self.turn_id.clone()).concat(suffix).into();
        let index = request_id.index();
        if self.request_ids.len() <= index {
            self.request_ids.resize(index + 1, None);
        }
        if let Some(slot) = self.request_ids.get_mut(index) {
            *slot = Some(js.clone());
        }
        js
    }

    /// The JS string of an attempt's request id: the one made when it started, or encoded now
    /// (a turn the shell no longer holds).
    pub(crate) fn request_id(&self, request_id: &AttemptId) -> JsValue {
        match self.request_ids.get(request_id.index()) {
            Some(Some(js)) => js.clone(),
            _ => JsValue::from_str(request_id),
        }
    }

    /// The accepted answer as a JS string: the one JS returned when the ladder delivered it
    /// unchanged, or `text` encoded (a cut or re-spaced answer).
    pub(crate) fn answer(&self, request_id: &AttemptId, text: &str) -> JsValue {
        match &self.answer {
            Some(answer) if answer.request_id == *request_id && answer.text == text => {
                answer.js.clone()
            }
            _ => JsValue::from_str(text),
        }
    }
}

/// A `TurnRecord` with exactly the fields of T13; optional fields are absent when unset.
pub(crate) fn record_to_js(
    record: &TurnRecord,
    strings: &TurnStrings,
    routes: &[JsValue],
) -> JsValue {
    let attempts = Array::new();
    for attempt in &record.attempts {
        let (failure, http_status) = failure_code(attempt.error);
        attempts.push(&glue::attempt_record(
            &strings.request_id(&attempt.request_id),
            &route_name(routes, attempt.route),
            attempt.started_at.0 as f64,
            attempt.finished_at.map_or(-1.0, |at| at.0 as f64),
            result_code(attempt.result),
            failure,
            http_status,
            attempt.preemptive,
        ));
    }
    let accepted_request_id = record
        .accepted_request_id
        .as_ref()
        .map_or(JsValue::UNDEFINED, |id| strings.request_id(id));
    let accepted_text = match (&record.accepted_request_id, &record.accepted_text) {
        (Some(id), Some(text)) => strings.answer(id, text),
        (None, Some(text)) => JsValue::from_str(text),
        _ => JsValue::UNDEFINED,
    };
    glue::turn_record(
        &strings.turn_id,
        &strings.input,
        status_code(record.status),
        record.started_at.0 as f64,
        record.deadline_at.0 as f64,
        &attempts,
        &accepted_request_id,
        &accepted_text,
        record.recovery_reason.map_or(-1, reason_code),
    )
}

/// An event object: `type`, ids, route name and times — never input, answer or headers.
pub(crate) fn event_to_js(event: &Event, strings: &TurnStrings, routes: &[JsValue]) -> JsValue {
    let none = JsValue::UNDEFINED;
    let turn_id = &strings.turn_id;
    match event {
        Event::TurnStarted { at, .. } => {
            glue::turn_event(0, turn_id, at.0 as f64, &none, &none, -1, -1, 0, 0.0)
        }
        Event::AttemptStarted {
            request_id,
            route,
            preemptive,
            at,
            timeout_at,
            ..
        } => glue::turn_event(
            1,
            turn_id,
            at.0 as f64,
            &strings.request_id(request_id),
            &route_name(routes, *route),
            i32::from(*preemptive),
            -1,
            0,
            timeout_at.0 as f64,
        ),
        Event::AttemptFinished {
            request_id,
            route,
            at,
            result,
            error,
            duration_ms,
            ..
        } => {
            let (failure, http_status) = failure_code(*error);
            glue::turn_event(
                2,
                turn_id,
                at.0 as f64,
                &strings.request_id(request_id),
                &route_name(routes, *route),
                i32::from(result_code(*result)),
                failure,
                http_status,
                *duration_ms as f64,
            )
        }
        // The same fields; the kind says which (3: accepted, 6: committed).
        Event::Accepted {
            request_id,
            route,
            at,
            latency_ms,
            ..
        }
        | Event::Committed {
            request_id,
            route,
            at,
            latency_ms,
            ..
        } => glue::turn_event(
            if matches!(event, Event::Accepted { .. }) {
                3
            } else {
                6
            },
            turn_id,
            at.0 as f64,
            &strings.request_id(request_id),
            &route_name(routes, *route),
            -1,
            -1,
            0,
            *latency_ms as f64,
        ),
        Event::Recovered {
            reason,
            at,
            latency_ms,
            ..
        } => glue::turn_event(
            4,
            turn_id,
            at.0 as f64,
            &none,
            &none,
            reason_code(*reason),
            -1,
            0,
            *latency_ms as f64,
        ),
        Event::Cancelled { at, .. } => {
            glue::turn_event(5, turn_id, at.0 as f64, &none, &none, -1, -1, 0, 0.0)
        }
        Event::Forgotten { at, .. } => {
            glue::turn_event(8, turn_id, at.0 as f64, &none, &none, -1, -1, 0, 0.0)
        }
        Event::PreemptiveEnded {
            request_id,
            reason,
            at,
            ..
        } => glue::turn_event(
            7,
            turn_id,
            at.0 as f64,
            &strings.request_id(request_id),
            &none,
            reason.map_or(-1, discard_code),
            -1,
            0,
            0.0,
        ),
    }
}

fn route_name(routes: &[JsValue], route: usize) -> JsValue {
    routes.get(route).cloned().unwrap_or(JsValue::UNDEFINED)
}

// The codes below index the name tables at the top of glue.js.

fn status_code(status: TurnStatus) -> u8 {
    match status {
        TurnStatus::Running => 0,
        TurnStatus::Accepted => 1,
        TurnStatus::Cancelled => 2,
        TurnStatus::Exhausted => 3,
    }
}

fn result_code(result: AttemptResult) -> u8 {
    match result {
        AttemptResult::Running => 0,
        AttemptResult::Accepted => 1,
        AttemptResult::Timeout => 2,
        AttemptResult::Error => 3,
        AttemptResult::Cancelled => 4,
        AttemptResult::Late => 5,
        AttemptResult::Discarded => 6,
    }
}

fn discard_code(reason: DiscardReason) -> i32 {
    match reason {
        DiscardReason::TextChanged => 0,
        DiscardReason::HistoryChanged => 1,
        DiscardReason::Withdrawn => 2,
        DiscardReason::Replaced => 3,
        DiscardReason::Failed => 4,
        DiscardReason::Expired => 5,
    }
}

fn reason_code(reason: RecoveryReason) -> i32 {
    match reason {
        RecoveryReason::Exhausted => 0,
        RecoveryReason::Deadline => 1,
        RecoveryReason::NonRetryable => 2,
        RecoveryReason::Persona => 3,
        RecoveryReason::SessionBudget => 4,
        RecoveryReason::RetryBudget => 5,
    }
}

/// `(code, http status)`; code -1 for no failure.
fn failure_code(failure: Option<Failure>) -> (i32, u16) {
    match failure {
        None => (-1, 0),
        Some(Failure::Timeout) => (0, 0),
        Some(Failure::Network) => (1, 0),
        Some(Failure::Http(status)) => (2, status),
        Some(Failure::Threw { retryable: true }) => (3, 0),
        Some(Failure::Threw { retryable: false }) => (4, 0),
        Some(Failure::NoText) => (5, 0),
        Some(Failure::Stalled) => (6, 0),
        Some(Failure::AnswerTooLong) => (7, 0),
    }
}

/// The failure a `glue.classifyError` code stands for.
pub(crate) fn failure_from_code(code: u32) -> Failure {
    match code {
        0 => Failure::Timeout,
        1 => Failure::Network,
        4 => Failure::Threw { retryable: false },
        1000..=1599 => Failure::Http(u16::try_from(code - 1000).unwrap_or(0)),
        _ => Failure::Threw { retryable: true },
    }
}
