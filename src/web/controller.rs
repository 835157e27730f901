//! `TurnController`: the turn ladder driven by real routes, timers and `AbortController`s.

use crate::core::history::Exchange;
use crate::core::record::Failure;
use crate::core::turn::{Action, Event, StartError, Started, TurnLadder};
use crate::web::clock::Clock;
use crate::web::controller_options::{parse_config, parse_routes, JsRoute};
use crate::web::convert::{range_error, string_arg, type_error, Fields};
use crate::web::glue;
use crate::web::report::{event_to_js, failure_from_code, record_to_js, TurnStrings};
use crate::web::timer::Timer;
use js_sys::{Array, Function, Map, Promise};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::{Rc, Weak};
use wasm_bindgen::prelude::*;
use web_sys::{AbortController, AbortSignal, DomException};

struct Callbacks {
    on_accepted_text: Function,
    on_recovery: Function,
    on_sentence: Option<Function>,
    on_event: Option<Function>,
}

// What `glue.watch` reports, as the `kind` of `report(id, kind, value)`.
const RESOLVED: u8 = 0;
const REJECTED: u8 = 1;
const CHUNK: u8 = 2;
const END: u8 = 3;

/// Browser resources of one running turn.
struct TurnIo {
    abort: AbortController,
    strings: TurnStrings,
}

/// An attempt whose route has not settled yet, by the id `glue.watch` reports it under. Kept
/// after a timeout or the end of its turn, so that a late answer is still recorded as late.
struct AttemptIo {
    request_id: String,
    turn_id: String,
    /// Dropped once the attempt or its turn ended.
    abort: Option<AbortController>,
}

#[derive(Default)]
struct Io {
    turns: HashMap<String, TurnIo>,
    attempts: HashMap<u32, AttemptIo>,
    next_attempt: u32,
}

struct Shared {
    ladder: RefCell<TurnLadder>,
    routes: Vec<JsRoute>,
    route_names: Vec<JsValue>,
    callbacks: Callbacks,
    recovery_text: JsValue,
    clock: Clock,
    io: RefCell<Io>,
    /// `run` promises waiting for a turn (a JS `Map` of turn id → resolve functions).
    waiters: Map,
    timer: Timer,
    /// `report(id, kind, value)` for `glue.watch`: made once, shared by every attempt. Owned by
    /// JS (it holds only a weak reference), so a route settling after `free()` finds nothing.
    report_attempt: Function,
    /// True while `pump` drains actions: a re-entrant call only queues, the outer pump performs.
    pumping: Cell<bool>,
    /// True while `free()` ends the running turns: no callback runs into a dying object.
    disposing: Cell<bool>,
}

/// Runs LLM turns so that exactly one answer, the fixed recovery text, or nothing (when
/// interrupted) reaches TTS per turn. See DESIGN.md §1 (T1–T14).
#[wasm_bindgen]
pub struct TurnController {
    shared: Rc<Shared>,
}

#[wasm_bindgen]
impl TurnController {
    /// `new TurnController(routes, options)`. Throws a `TypeError`/`RangeError` naming the field
    /// for any invalid route or option.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "Route[]")] routes: JsValue,
        #[wasm_bindgen(unchecked_param_type = "TurnControllerOptions")] options: JsValue,
    ) -> Result<TurnController, JsValue> {
        let routes = parse_routes(&routes)?;
        let options_fields = Fields::of(&options, "options")?;
        let config = parse_config(&options_fields, &routes)?;
        let callbacks = Callbacks {
            on_accepted_text: options_fields.function("onAcceptedText")?,
            on_recovery: options_fields.function("onRecovery")?,
            on_sentence: options_fields.optional_function("onSentence")?,
            on_event: options_fields.optional_function("onEvent")?,
        };
        let recovery_text = JsValue::from_str(&config.recovery_text);
        let routes: Vec<JsRoute> = routes.into_iter().map(|(route, _)| route).collect();
        let shared = Rc::new_cyclic(|weak: &Weak<Shared>| {
            let on_timer = weak.clone();
            let on_report = weak.clone();
            let report = move |id: u32, kind: u8, value: JsValue| -> bool {
                let Some(shared) = on_report.upgrade() else {
                    return false;
                };
                let keep_reading = shared.on_attempt_report(id, kind, &value);
                shared.pump();
                keep_reading
            };
            Shared {
                ladder: RefCell::new(TurnLadder::new(config)),
                route_names: routes.iter().map(|route| route.name.clone()).collect(),
                routes,
                callbacks,
                recovery_text,
                clock: Clock::new(),
                io: RefCell::new(Io::default()),
                waiters: Map::new(),
                timer: Timer::new(move || {
                    if let Some(shared) = on_timer.upgrade() {
                        shared.on_timer();
                    }
                }),
                report_attempt: Closure::<dyn FnMut(u32, u8, JsValue) -> bool>::new(report)
                    .into_js_value()
                    .unchecked_into(),
                pumping: Cell::new(false),
                disposing: Cell::new(false),
            }
        });
        Ok(TurnController { shared })
    }

    /// Starts the turn for a final utterance and resolves with its record once it settles.
    /// A `turnId` that is running or retained starts nothing new (T2). Invalid arguments reject
    /// with a `TypeError`/`RangeError`.
    #[wasm_bindgen(unchecked_return_type = "Promise<TurnRecord>")]
    pub fn run(
        &self,
        #[wasm_bindgen(js_name = turnId, unchecked_param_type = "string")] turn_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] input: JsValue,
    ) -> Promise {
        self.shared
            .run(turn_id, input)
            .unwrap_or_else(|error| Promise::reject(&error))
    }

    /// Interrupts a running turn: true if it was running; it then gets no speech and no recovery (T7).
    pub fn interrupt(
        &self,
        #[wasm_bindgen(js_name = turnId, unchecked_param_type = "string")] turn_id: JsValue,
    ) -> Result<bool, JsValue> {
        let turn_id = string_arg(&turn_id, "turnId")?;
        let now = self.shared.clock.now();
        let interrupted = self.shared.ladder.borrow_mut().interrupt(&turn_id, now);
        self.shared.pump();
        Ok(interrupted)
    }

    /// Keeps only what the user heard of a turn's answer in the conversation history (after a
    /// barge-in). False when the turn has no exchange in the history.
    #[wasm_bindgen(js_name = setHeardText)]
    pub fn set_heard_text(
        &self,
        #[wasm_bindgen(js_name = turnId, unchecked_param_type = "string")] turn_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    ) -> Result<bool, JsValue> {
        let turn_id = string_arg(&turn_id, "turnId")?;
        let text = text
            .as_string()
            .ok_or_else(|| type_error("text must be a string"))?;
        Ok(self
            .shared
            .ladder
            .borrow_mut()
            .set_heard_text(&turn_id, &text))
    }

    /// The record of a running or retained turn, or `undefined`.
    #[wasm_bindgen(js_name = getTurn, unchecked_return_type = "TurnRecord | undefined")]
    pub fn get_turn(
        &self,
        #[wasm_bindgen(js_name = turnId, unchecked_param_type = "string")] turn_id: JsValue,
    ) -> Result<JsValue, JsValue> {
        let turn_id = string_arg(&turn_id, "turnId")?;
        let ladder = self.shared.ladder.borrow();
        Ok(ladder.turn(&turn_id).map_or(JsValue::UNDEFINED, |record| {
            let strings = TurnStrings::decoded(record);
            record_to_js(record, &strings, &self.shared.route_names)
        }))
    }
}

impl Drop for TurnController {
    /// `free()` and `Symbol.dispose`: every running turn is interrupted and its signal aborted.
    fn drop(&mut self) {
        self.shared.disposing.set(true);
        let now = self.shared.clock.now();
        self.shared.ladder.borrow_mut().interrupt_all(now);
        self.shared.pump();
        self.shared.timer.cancel();
    }
}

impl Shared {
    fn run(self: &Rc<Self>, turn_id_js: JsValue, input_js: JsValue) -> Result<Promise, JsValue> {
        let turn_id = turn_id_js
            .as_string()
            .ok_or_else(|| type_error("turnId must be a string"))?;
        let input = input_js
            .as_string()
            .ok_or_else(|| type_error("input must be a string"))?;
        let now = self.clock.now();
        let started = self
            .ladder
            .borrow_mut()
            .start_turn(&turn_id, &input, now)
            .map_err(|error| start_error_to_js(&error))?;
        let still_open = match started {
            Started::New => {
                self.io.borrow_mut().turns.insert(
                    turn_id.clone(),
                    TurnIo {
                        abort: new_abort_controller(),
                        strings: TurnStrings::new(turn_id_js.clone(), input_js),
                    },
                );
                true
            }
            // Running, or settled with its `Settled` still queued behind a re-entrant call.
            Started::Existing => self.io.borrow().turns.contains_key(&turn_id),
        };
        if !still_open {
            let ladder = self.ladder.borrow();
            let record = ladder.turn(&turn_id).map_or(JsValue::UNDEFINED, |record| {
                record_to_js(record, &TurnStrings::decoded(record), &self.route_names)
            });
            return Ok(Promise::resolve(&record));
        }
        let promise = glue::wait_for(&self.waiters, &turn_id_js);
        self.pump();
        Ok(promise)
    }

    /// Performs queued actions until none is left, then re-arms the timer. Each action is taken
    /// from the ladder with the borrow released before any JS runs.
    fn pump(self: &Rc<Self>) {
        if self.pumping.replace(true) {
            return;
        }
        loop {
            let action = self.ladder.borrow_mut().poll_action();
            match action {
                Some(action) => self.perform(action),
                None => break,
            }
        }
        self.pumping.set(false);
        let next = self.ladder.borrow().poll_timeout();
        if let Some(at) = next {
            self.timer.ensure(at, || self.clock.now());
        }
    }

    fn on_timer(self: &Rc<Self>) {
        self.timer.fired();
        let now = self.clock.now();
        self.ladder.borrow_mut().handle_timeout(now);
        self.pump();
    }

    fn perform(self: &Rc<Self>, action: Action) {
        match action {
            Action::StartAttempt {
                turn_id,
                request_id,
                route,
                history,
                ..
            } => self.start_attempt(turn_id, request_id, route, history),
            Action::Sentence { turn_id, text } => {
                // Checked right before each sentence leaves: not one after an interrupt (T12).
                let may_speak = self.ladder.borrow().may_speak(&turn_id);
                if let (Some(on_sentence), true) = (&self.callbacks.on_sentence, may_speak) {
                    let turn_js = self.turn_strings(&turn_id, |strings| strings.turn_id.clone());
                    self.call_back(
                        on_sentence,
                        "onSentence",
                        &turn_js,
                        &JsValue::from_str(&text),
                    );
                }
            }
            Action::AbortAttempt { request_id } => {
                let attempt_abort = self
                    .io
                    .borrow_mut()
                    .attempts
                    .values_mut()
                    .find(|attempt| attempt.request_id == request_id)
                    .and_then(|attempt| attempt.abort.take());
                if let Some(attempt_abort) = attempt_abort {
                    abort(
                        &attempt_abort,
                        "TimeoutError",
                        "turnguard: attempt timed out",
                    );
                }
            }
            Action::AbortTurn { turn_id } => {
                let turn_abort = self
                    .io
                    .borrow()
                    .turns
                    .get(&turn_id)
                    .map(|turn| turn.abort.clone());
                if let Some(turn_abort) = turn_abort {
                    abort(&turn_abort, "AbortError", "turnguard: turn ended");
                }
            }
            Action::Deliver { turn_id, text } => {
                // T6: checked again right before the answer leaves for TTS.
                let accepted = {
                    let ladder = self.ladder.borrow();
                    match ladder.turn(&turn_id) {
                        Some(record) if ladder.may_deliver(&turn_id) => {
                            record.accepted_request_id.clone()
                        }
                        _ => None,
                    }
                };
                if let Some(request_id) = accepted {
                    let (turn_js, text_js) = self.turn_strings(&turn_id, |strings| {
                        (strings.turn_id.clone(), strings.answer(&request_id, &text))
                    });
                    let callback = &self.callbacks.on_accepted_text;
                    self.call_back(callback, "onAcceptedText", &turn_js, &text_js);
                }
            }
            Action::Recover { turn_id, .. } => {
                let turn_js = self.turn_strings(&turn_id, |strings| strings.turn_id.clone());
                let callback = &self.callbacks.on_recovery;
                self.call_back(callback, "onRecovery", &turn_js, &self.recovery_text);
            }
            Action::Settled(record) => {
                let turn = {
                    let mut io = self.io.borrow_mut();
                    for attempt in io.attempts.values_mut() {
                        if attempt.turn_id == record.turn_id {
                            attempt.abort = None;
                        }
                    }
                    io.turns.remove(&record.turn_id)
                };
                let strings =
                    turn.map_or_else(|| TurnStrings::decoded(&record), |turn| turn.strings);
                let record_js = record_to_js(&record, &strings, &self.route_names);
                glue::resolve_waiters(&self.waiters, &strings.turn_id, &record_js);
            }
            Action::Event(event) => {
                if let Some(on_event) = self
                    .callbacks
                    .on_event
                    .as_ref()
                    .filter(|_| !self.disposing.get())
                {
                    let event_js = self.turn_strings(event_turn_id(&event), |strings| {
                        event_to_js(&event, strings, &self.route_names)
                    });
                    let _ = on_event.call1(&JsValue::UNDEFINED, &event_js);
                }
            }
        }
    }

    /// Runs `with` on the JS strings of a turn: the ones held, or decoded from its record.
    fn turn_strings<T>(&self, turn_id: &str, with: impl FnOnce(&TurnStrings) -> T) -> T {
        {
            let io = self.io.borrow();
            if let Some(turn) = io.turns.get(turn_id) {
                return with(&turn.strings);
            }
        }
        let ladder = self.ladder.borrow();
        let strings = match ladder.turn(turn_id) {
            Some(record) => TurnStrings::decoded(record),
            None => TurnStrings::new(JsValue::from_str(turn_id), JsValue::UNDEFINED),
        };
        with(&strings)
    }

    /// Calls `onAcceptedText`/`onRecovery`. A throwing callback is reported as an event and
    /// changes nothing else: never a recovery, never a second answer (T6).
    fn call_back(&self, callback: &Function, name: &str, turn_id: &JsValue, text: &JsValue) {
        if callback.call2(&JsValue::UNDEFINED, turn_id, text).is_err() {
            if let Some(on_event) = &self.callbacks.on_event {
                let at = self.clock.now().0 as f64;
                let event = glue::callback_error(turn_id, name, at);
                let _ = on_event.call1(&JsValue::UNDEFINED, &event);
            }
        }
    }

    /// Calls the route with a fresh signal chained to the turn's (T4) and watches its outcome.
    fn start_attempt(
        self: &Rc<Self>,
        turn_id: String,
        request_id: String,
        route: usize,
        history: Option<Vec<Exchange>>,
    ) {
        let history = history.map_or(JsValue::UNDEFINED, |exchanges| {
            let messages = Array::new();
            for exchange in &exchanges {
                glue::push_exchange(&messages, &exchange.user, &exchange.assistant);
            }
            messages.into()
        });
        let attempt_abort = new_abort_controller();
        let (request, id) = {
            let mut io = self.io.borrow_mut();
            let Some(turn) = io.turns.get_mut(&turn_id) else {
                return;
            };
            let number = turn.strings.request_ids.len() + 1;
            let request_id_js = glue::request_id_of(
                &turn.strings.turn_id,
                u32::try_from(number).unwrap_or(u32::MAX),
            );
            let signals = Array::of2(&turn.abort.signal(), &attempt_abort.signal());
            let request = glue::attempt_request(
                &request_id_js,
                &turn.strings.turn_id,
                &turn.strings.input,
                &AbortSignal::any(&signals),
                &history,
            );
            turn.strings
                .request_ids
                .push((request_id.clone(), request_id_js));
            let id = io.next_attempt;
            io.next_attempt = io.next_attempt.wrapping_add(1);
            io.attempts.insert(
                id,
                AttemptIo {
                    request_id,
                    turn_id,
                    abort: Some(attempt_abort),
                },
            );
            (request, id)
        };
        let Some(js_route) = self.routes.get(route) else {
            self.on_attempt_report(id, REJECTED, &JsValue::UNDEFINED);
            return;
        };
        match js_route.generate.call1(&js_route.object, &request) {
            Err(error) => {
                self.on_attempt_report(id, REJECTED, &error);
            }
            Ok(value) => {
                if !glue::watch(&value, id, &self.report_attempt) {
                    self.on_attempt_report(id, RESOLVED, &value);
                }
            }
        }
    }

    /// Hands what a route did to the ladder; the caller pumps. For a chunk, answers whether the
    /// stream is still wanted.
    fn on_attempt_report(&self, id: u32, kind: u8, value: &JsValue) -> bool {
        let attempt = {
            let io = self.io.borrow();
            io.attempts.get(&id).map(|attempt| {
                (
                    attempt.request_id.clone(),
                    attempt.turn_id.clone(),
                    attempt.abort.is_some(),
                )
            })
        };
        let Some((request_id, turn_id, live)) = attempt else {
            return false;
        };
        let now = self.clock.now();
        if kind == CHUNK {
            let Some(chunk) = value.as_string() else {
                self.io.borrow_mut().attempts.remove(&id);
                self.ladder
                    .borrow_mut()
                    .on_attempt_result(&request_id, Err(Failure::NoText), now);
                return false;
            };
            self.ladder
                .borrow_mut()
                .on_attempt_chunk(&request_id, &chunk, now);
            // Still wanted while the attempt runs or delivers; a late stream is only read to the
            // first text that marks it late.
            return live
                && self
                    .io
                    .borrow()
                    .attempts
                    .get(&id)
                    .is_some_and(|a| a.abort.is_some());
        }
        self.io.borrow_mut().attempts.remove(&id);
        match kind {
            END => self.ladder.borrow_mut().on_stream_end(&request_id, now),
            RESOLVED => {
                let outcome = text_of(value);
                if outcome.is_ok() {
                    if let Some(turn) = self.io.borrow_mut().turns.get_mut(&turn_id) {
                        turn.strings.answer = Some((request_id.clone(), value.clone()));
                    }
                }
                self.ladder
                    .borrow_mut()
                    .on_attempt_result(&request_id, outcome, now);
            }
            _ => {
                let failure = failure_from_code(glue::classify_error(value));
                self.ladder
                    .borrow_mut()
                    .on_attempt_result(&request_id, Err(failure), now);
            }
        }
        false
    }
}

fn event_turn_id(event: &Event) -> &str {
    match event {
        Event::TurnStarted { turn_id, .. }
        | Event::AttemptStarted { turn_id, .. }
        | Event::AttemptFinished { turn_id, .. }
        | Event::Committed { turn_id, .. }
        | Event::Accepted { turn_id, .. }
        | Event::Recovered { turn_id, .. }
        | Event::Cancelled { turn_id, .. } => turn_id,
    }
}

fn start_error_to_js(error: &StartError) -> JsValue {
    range_error(&error.to_string())
}

fn new_abort_controller() -> AbortController {
    // `new AbortController()` cannot fail in a browser or worker; a missing constructor is a
    // host without fetch support, where no route could run anyway.
    AbortController::new().unwrap_or_else(|_| JsValue::UNDEFINED.unchecked_into())
}

fn abort(controller: &AbortController, name: &str, message: &str) {
    match DomException::new_with_message_and_name(message, name) {
        Ok(reason) => controller.abort_with_reason(&reason),
        Err(_) => controller.abort(),
    }
}

/// What a route resolved to: text, or `NoText` for anything else (never reaches TTS).
fn text_of(value: &JsValue) -> Result<String, Failure> {
    value.as_string().ok_or(Failure::NoText)
}
