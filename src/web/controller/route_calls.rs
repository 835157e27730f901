//! Calling a route and following what it does: a fresh signal per attempt, the hostile-object-safe
//! `glue.callRoute`, and each report handed to the ladder (T3, T4, T6, T12, T15).

use super::attempts::AttemptIo;
use super::ladder_io::{history_js, input, read, AnyLadderHost, LadderIo};
use alloc::borrow::ToOwned;
use alloc::vec::Vec;
// The hosts' methods, for a build with one host (not `dyn`; see `AnyLadderHost`).
use super::{CHUNK, END, REJECTED, RESOLVED};
use crate::core::turn::history::Exchange;
use crate::core::turn::record::{AttemptResult, Failure, TurnStatus};
use crate::core::turn::AttemptId;
#[cfg_attr(feature = "voice", allow(unused_imports))]
use crate::web::driver::Host as _;
use crate::web::glue;
use crate::web::report::{failure_from_code, Answer, TurnStrings};
use js_sys::JsString;
use wasm_bindgen::prelude::*;

impl LadderIo {
    /// Calls the route with a fresh signal of its own, which the turn's end aborts too (T4), and
    /// watches its outcome.
    pub(super) fn start_attempt(
        &self,
        host: &AnyLadderHost,
        request_id: AttemptId,
        route: usize,
        history: Option<Vec<Exchange>>,
    ) {
        // Queued before a re-entrant interrupt, deadline or dispose? Then the route is not called.
        let still_running = read(host, |ladder| {
            ladder.turn(request_id.turn_id()).is_some_and(|record| {
                record.status == TurnStatus::Running
                    && record
                        .attempts
                        .get(request_id.index())
                        .is_some_and(|attempt| {
                            attempt.request_id == request_id
                                && attempt.result == AttemptResult::Running
                        })
            })
        });
        if !still_running || host.is_disposed() {
            return;
        }
        // A host that did not hold the turn's strings when it started (a session, whose turns
        // start inside its machine): decoded once, from the record.
        if !self.holds_turn(request_id.turn_id()) {
            let turn_id = request_id.turn_id();
            let decoded = read(host, |ladder| {
                ladder.turn(turn_id).map(TurnStrings::decoded)
            });
            if let Some(strings) = decoded {
                self.open_turn(turn_id.to_owned(), strings.turn_id, strings.input);
            }
        }
        // Looked up before `newAttempt`, whose request waits in the glue for `callRoute`.
        let js_route = self.routes.get(route);
        let history = history_js(history);
        let suffix = self.suffix_js(&request_id);
        let id = {
            let mut io = self.io.borrow_mut();
            let id = io.next_attempt;
            let Some(turn) = io.turns.get_mut(request_id.turn_id()) else {
                return;
            };
            turn.live.push(id);
            let strings = &mut turn.strings;
            // The id's text, built once by the ladder, crosses to JS once; records and events
            // reuse this JS string.
            let request_id_js = strings.add_request_id(&request_id, &suffix);
            let abort = js_route.map(|_| {
                glue::new_attempt(&request_id_js, &strings.turn_id, &strings.input, &history)
            });
            io.next_attempt = id.wrapping_add(1);
            io.attempts.insert(id, AttemptIo { request_id, abort });
            id
        };
        let Some(js_route) = js_route else {
            self.on_attempt_report(host, id, REJECTED, &JsValue::UNDEFINED);
            return;
        };
        // What the route does comes back through `report_attempt`, a plain value or an
        // exception at once; `callRoute` never throws, even for a hostile result (a throwing
        // `then` or `getReader` getter).
        glue::call_route(
            &js_route.object,
            &js_route.generate,
            id,
            &self.report_attempt,
        );
    }

    /// A route's text, cut on the JS side to what `maxAnswerChars` can use before it is copied
    /// into wasm: a 64 MiB chunk costs a 16 KiB copy. `None` when it is not a string.
    fn bounded_text(&self, value: &JsValue) -> Option<JsValue> {
        let text = value.dyn_ref::<JsString>()?;
        if text.length() <= self.max_answer_units {
            return Some(value.clone());
        }
        Some(text.slice(0, self.max_answer_units).into())
    }

    /// Hands what a route did to the ladder and pumps. For a chunk, answers whether the stream
    /// is still wanted; a stream that is not is forgotten at once (its reader stops).
    pub(super) fn on_attempt_report(
        &self,
        host: &AnyLadderHost,
        id: u32,
        kind: u8,
        value: &JsValue,
    ) -> bool {
        let attempt = {
            let io = self.io.borrow();
            io.attempts
                .get(&id)
                .map(|attempt| attempt.request_id.clone())
        };
        let Some(request_id) = attempt else {
            return false;
        };
        if kind == CHUNK {
            match self
                .bounded_text(value)
                .as_ref()
                .and_then(JsValue::as_string)
            {
                Some(chunk) => {
                    input(host, |ladder, now| {
                        ladder.on_attempt_chunk(&request_id, &chunk, now)
                    });
                }
                None => {
                    self.io.borrow_mut().forget_attempt(id);
                    input(host, |ladder, now| {
                        ladder.on_attempt_result(&request_id, Err(Failure::NoText), now)
                    });
                    return false;
                }
            }
            // Still wanted while the attempt runs or delivers; a late stream is only read to the
            // first text that marks it late.
            let wanted = self
                .io
                .borrow()
                .attempts
                .get(&id)
                .is_some_and(|attempt| attempt.abort.is_some());
            if !wanted {
                self.io.borrow_mut().forget_attempt(id);
            }
            return wanted;
        }
        self.io.borrow_mut().forget_attempt(id);
        match kind {
            END => input(host, |ladder, now| ladder.on_stream_end(&request_id, now)),
            RESOLVED => {
                let bounded = self.bounded_text(value);
                let outcome = bounded
                    .as_ref()
                    .and_then(JsValue::as_string)
                    .ok_or(Failure::NoText);
                if let (Ok(text), Some(js)) = (&outcome, bounded) {
                    let mut io = self.io.borrow_mut();
                    if let Some(turn) = io.turns.get_mut(request_id.turn_id()) {
                        turn.strings.answer = Some(Answer {
                            request_id: request_id.clone(),
                            text: text.clone(),
                            js,
                        });
                    }
                }
                input(host, |ladder, now| {
                    ladder.on_attempt_result(&request_id, outcome, now)
                });
            }
            _ => {
                let failure = failure_from_code(glue::classify_error(value));
                input(host, |ladder, now| {
                    ladder.on_attempt_result(&request_id, Err(failure), now)
                });
            }
        }
        false
    }
}
