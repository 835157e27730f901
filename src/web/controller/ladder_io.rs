//! The turn ladder's I/O, shared by `TurnController` and `VoiceSession`: the routes and their
//! calls, each attempt's `AbortController` (T4), and the JS strings of each turn from which its
//! records and events are built (T13, T14). The host is the class that owns the machine the
//! ladder is (or is part of); it adds the app's callbacks.

use super::abort;
use super::attempts::{Io, TurnIo};
use crate::core::time::Millis;
use crate::core::turn::history::Exchange;
use crate::core::turn::record::{AttemptResult, Failure, TurnRecord};
use crate::core::turn::{Action, AttemptId, Event, TurnLadder};
use crate::web::controller_options::JsRoute;
use crate::web::driver::Host;
use crate::web::glue;
use crate::web::report::{event_to_js, record_to_js, TurnStrings};
use alloc::boxed::Box;
use alloc::rc::Weak;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{Ref, RefCell, RefMut};
use js_sys::{Array, Function};
use wasm_bindgen::prelude::*;

/// The class a ladder runs in: it owns the machine the ladder is (or is part of).
pub(crate) trait LadderHost: Host {
    fn ladder_io(&self) -> &LadderIo;
    /// The ladder, lent for one input at the current time.
    fn ladder_mut(&self) -> Option<(RefMut<'_, TurnLadder>, Millis)>;
    /// The ladder, lent for reading.
    fn ladder(&self) -> Option<Ref<'_, TurnLadder>>;
}

/// The host the I/O code is written against. Where `VoiceSession` is built too there are two
/// hosts and the code is there once, behind `dyn`; a build of the controller alone has one host,
/// `TurnController`'s, and dispatches to it statically: no vtables, calls inlined (a smaller
/// wasm for `turnguard/controller`).
#[cfg(feature = "voice")]
pub(crate) type AnyLadderHost = dyn LadderHost;
#[cfg(not(feature = "voice"))]
pub(crate) type AnyLadderHost = super::Shared;

/// Feeds the ladder one input and performs what it queued.
pub(crate) fn input(host: &AnyLadderHost, input: impl FnOnce(&mut TurnLadder, Millis)) {
    if let Some((mut ladder, now)) = host.ladder_mut() {
        input(&mut ladder, now);
    }
    host.pump();
}

/// Reads the ladder; a ladder out of reach (never while no JS runs under a borrow) reads as the
/// default: nothing may be spoken or started.
pub(crate) fn read<R: Default>(host: &AnyLadderHost, read: impl FnOnce(&TurnLadder) -> R) -> R {
    host.ladder()
        .map(|ladder| read(&ladder))
        .unwrap_or_default()
}

/// The routes and the browser resources of the turns and attempts.
pub(crate) struct LadderIo {
    pub(super) routes: Vec<JsRoute>,
    pub(crate) route_names: Vec<JsValue>,
    /// The most UTF-16 code units of route text that the ladder can read for one answer.
    pub(super) max_answer_units: u32,
    pub(super) io: RefCell<Io>,
    /// `report(id, kind, value)` for `glue.callRoute`: made once, shared by every attempt. Owned by
    /// JS (it holds only a weak reference), so a route settling after `free()` finds nothing.
    pub(super) report_attempt: Function,
    /// The JS strings of `AttemptId::suffix` by attempt index (at most `maxAttemptsPerTurn`):
    /// a request id crosses to JS as its turn id's JS string joined with one of these, since
    /// `TextDecoder`, which turns Rust text into JS, cost about 2 µs a turn (measured).
    pub(super) suffixes: RefCell<Vec<Option<JsValue>>>,
}

impl LadderIo {
    /// The I/O of a ladder whose host is behind `host` (held weakly: a route settling after the
    /// host is gone finds nothing).
    pub(crate) fn new(
        routes: Vec<JsRoute>,
        answer_read_chars: usize,
        host: Weak<AnyLadderHost>,
    ) -> Self {
        let report = move |id: u32, kind: u8, value: JsValue| -> bool {
            match host.upgrade() {
                Some(host) => host
                    .ladder_io()
                    .on_attempt_report(host.as_ref(), id, kind, &value),
                None => false,
            }
        };
        LadderIo {
            route_names: routes.iter().map(|route| route.name.clone()).collect(),
            routes,
            max_answer_units: u32::try_from(answer_read_chars.saturating_mul(2))
                .unwrap_or(u32::MAX),
            io: RefCell::new(Io::default()),
            // `Fn`, not `FnMut`: a report may come while another runs (a fallback's route
            // that throws at once, called from the report of the primary's failure).
            report_attempt: Closure::<dyn Fn(u32, u8, JsValue) -> bool>::new(report)
                .into_js_value()
                .unchecked_into(),
            suffixes: RefCell::new(Vec::new()),
        }
    }

    /// The JS string of `request_id`'s suffix, made the first time an attempt of its index runs.
    pub(super) fn suffix_js(&self, request_id: &AttemptId) -> JsValue {
        let mut suffixes = self.suffixes.borrow_mut();
        if !request_id.is_plain() {
            return JsValue::from_str(request_id.suffix());
        }
        let index = request_id.index();
        if suffixes.len() <= index {
            suffixes.resize(index + 1, None);
        }
        match suffixes.get_mut(index) {
            Some(slot) => slot
                .get_or_insert_with(|| JsValue::from_str(request_id.suffix()))
                .clone(),
            None => JsValue::from_str(request_id.suffix()),
        }
    }

    /// Performs the ladder's I/O: route calls and aborts, and the release of a settled turn's
    /// resources. Every other action is given back: it is the host's to report.
    pub(crate) fn perform(&self, host: &AnyLadderHost, action: Action) -> Option<Action> {
        match action {
            Action::StartAttempt {
                request_id,
                route,
                history,
                ..
            } => self.start_attempt(host, request_id, route, history),
            Action::AbortAttempt { request_id } => self.abort_attempt(host, &request_id),
            Action::AbortTurn { turn_id } => {
                // The turn's end aborts each of its live attempts: the chain of T4, kept by the
                // shell itself rather than by `AbortSignal.any` (missing in older browsers).
                let controllers = self.io.borrow_mut().end_attempts_of(&turn_id);
                for controller in &controllers {
                    abort(controller, "AbortError", "turnguard: turn ended");
                }
            }
            Action::InputChanged { turn_id } => {
                let input = read(host, |ladder| {
                    ladder.turn(&turn_id).map(|record| record.input.clone())
                });
                if let (Some(input), Some(turn)) =
                    (input, self.io.borrow_mut().turns.get_mut(&turn_id))
                {
                    turn.strings.input = JsValue::from_str(&input);
                }
            }
            Action::Forget { turn_id } => {
                let controllers = {
                    let mut io = self.io.borrow_mut();
                    let controllers = io.end_attempts_of(&turn_id);
                    io.turns.remove(&turn_id);
                    controllers
                };
                drop(controllers);
            }
            other => return Some(other),
        }
        None
    }

    fn abort_attempt(&self, host: &AnyLadderHost, request_id: &AttemptId) {
        let controller = {
            let mut io = self.io.borrow_mut();
            let id = io.live_attempt(request_id);
            id.and_then(|id| io.end_attempt(id))
        };
        let Some(controller) = controller else {
            return;
        };
        // An attempt ends early for three reasons: its timeout, an answer cut at
        // `maxAnswerChars` (T15), or a preemptive guess the final did not keep (T17); the abort
        // reason says which.
        let (cut, discarded) = read(host, |ladder| {
            ladder
                .turn(request_id.turn_id())
                .and_then(|record| record.attempts.get(request_id.index()))
                .filter(|attempt| attempt.request_id == *request_id)
                .map_or((false, false), |attempt| {
                    (
                        attempt.error == Some(Failure::AnswerTooLong),
                        attempt.result == AttemptResult::Discarded,
                    )
                })
        });
        if cut {
            let message = "turnguard: answer reached maxAnswerChars";
            abort(&controller, "AbortError", message);
        } else if discarded {
            let message = "turnguard: preemptive attempt discarded";
            abort(&controller, "AbortError", message);
        } else {
            abort(&controller, "TimeoutError", "turnguard: attempt timed out");
        }
    }

    /// A turn settled: its resources are released and its record made, as
    /// `(turnId, record)` in JS.
    pub(crate) fn settle(&self, record: &TurnRecord) -> (JsValue, JsValue) {
        let (turn, controllers) = {
            let mut io = self.io.borrow_mut();
            let controllers = io.end_attempts_of(&record.turn_id);
            (io.turns.remove(&record.turn_id), controllers)
        };
        // An attempt still live at the end of its turn (a committed stream that ended) has
        // nothing left to abort: its controller is just released.
        drop(controllers);
        let strings = turn.map_or_else(|| TurnStrings::decoded(record), |turn| turn.strings);
        let record_js = record_to_js(record, &strings, &self.route_names);
        (strings.turn_id, record_js)
    }

    /// The event object of a ladder event (T14).
    pub(crate) fn event_js(&self, host: &AnyLadderHost, event: &Event) -> JsValue {
        self.turn_strings(host, event_turn_id(event), |strings| {
            event_to_js(event, strings, &self.route_names)
        })
    }

    /// Holds the JS strings of a turn the host just started (so nothing is decoded again).
    pub(crate) fn open_turn(&self, turn_id: String, turn_js: JsValue, input_js: JsValue) {
        self.io.borrow_mut().turns.insert(
            turn_id,
            Box::new(TurnIo {
                strings: TurnStrings::new(turn_js, input_js),
                live: Vec::new(),
            }),
        );
    }

    /// Whether the I/O of a turn is still held (it has not settled, or its `Settled` waits).
    pub(crate) fn holds_turn(&self, turn_id: &str) -> bool {
        self.io.borrow().turns.contains_key(turn_id)
    }

    /// The record of a running or retained turn, or `undefined`.
    pub(crate) fn record_js(&self, host: &AnyLadderHost, turn_id: &str) -> JsValue {
        read(host, |ladder| {
            ladder.turn(turn_id).map(|record| {
                record_to_js(record, &TurnStrings::decoded(record), &self.route_names)
            })
        })
        .unwrap_or(JsValue::UNDEFINED)
    }

    /// Runs `with` on the JS strings of a turn: the ones held, or decoded from its record.
    pub(crate) fn turn_strings<T>(
        &self,
        host: &AnyLadderHost,
        turn_id: &str,
        with: impl FnOnce(&TurnStrings) -> T,
    ) -> T {
        {
            let io = self.io.borrow();
            if let Some(turn) = io.turns.get(turn_id) {
                return with(&turn.strings);
            }
        }
        let strings = read(host, |ladder| {
            ladder.turn(turn_id).map(TurnStrings::decoded)
        })
        .unwrap_or_else(|| TurnStrings::new(JsValue::from_str(turn_id), JsValue::UNDEFINED));
        with(&strings)
    }
}

/// The conversation so far as chat messages, oldest first (`VoiceSession.history`).
#[cfg(feature = "voice")]
pub(crate) fn history_messages(host: &AnyLadderHost) -> Array {
    let messages = Array::new();
    let exchanges = read(host, |ladder| {
        ladder.history().cloned().collect::<Vec<Exchange>>()
    });
    for exchange in exchanges {
        glue::push_exchange(&messages, &exchange.user, &exchange.assistant);
    }
    messages
}

/// The history handed to a `shareHistory` route, as chat messages.
pub(super) fn history_js(history: Option<Vec<Exchange>>) -> JsValue {
    history.map_or(JsValue::UNDEFINED, |exchanges| {
        let messages = Array::new();
        for exchange in &exchanges {
            glue::push_exchange(&messages, &exchange.user, &exchange.assistant);
        }
        messages.into()
    })
}

fn event_turn_id(event: &Event) -> &str {
    match event {
        Event::TurnStarted { turn_id, .. }
        | Event::AttemptStarted { turn_id, .. }
        | Event::AttemptFinished { turn_id, .. }
        | Event::Committed { turn_id, .. }
        | Event::Accepted { turn_id, .. }
        | Event::Recovered { turn_id, .. }
        | Event::Cancelled { turn_id, .. }
        | Event::PreemptiveEnded { turn_id, .. }
        | Event::Forgotten { turn_id, .. } => turn_id,
    }
}
