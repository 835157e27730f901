//! `TurnController`: the turn ladder driven by real routes, timers and `AbortController`s.

use crate::core::time::Millis;
use crate::core::turn::history::Exchange;
use crate::core::turn::record::{AttemptResult, Failure, TurnStatus};
use crate::core::turn::{parse_request_id, Action, Event, StartError, Started, TurnLadder};
use crate::web::controller_options::{parse_config, parse_routes, JsRoute};
use crate::web::convert::{range_error, string_arg, type_error, Fields};
use crate::web::driver::{self, Driver, Handle, Machine, Shell};
use crate::web::glue;
use crate::web::report::{event_to_js, failure_from_code, record_to_js, Answer, TurnStrings};
use js_sys::{Array, Function, JsString, Map, Promise};
use std::cell::RefCell;

use std::rc::{Rc, Weak};
use wasm_bindgen::prelude::*;
use web_sys::{AbortController, DomException};

mod attempts;
mod route_calls;

use attempts::{AttemptIo, Io, TurnIo};

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

impl Machine for TurnLadder {
    type Action = Action;
    fn poll_action(&mut self) -> Option<Action> {
        TurnLadder::poll_action(self)
    }
    fn poll_timeout(&self) -> Option<Millis> {
        TurnLadder::poll_timeout(self)
    }
    fn handle_timeout(&mut self, now: Millis) {
        TurnLadder::handle_timeout(self, now)
    }
}

struct Shared {
    driver: Driver<TurnLadder>,
    routes: Vec<JsRoute>,
    route_names: Vec<JsValue>,
    callbacks: Callbacks,
    recovery_text: JsValue,
    /// The longest input in UTF-16 code units that can be within `maxInputChars` scalar values:
    /// longer input is refused before it is copied into wasm.
    max_input_units: u32,
    /// The most UTF-16 code units of route text that the ladder can read for one answer.
    max_answer_units: u32,
    io: RefCell<Io>,
    /// `run` promises waiting for a turn (a JS `Map` of turn id → resolve functions).
    waiters: Map,
    /// `report(id, kind, value)` for `glue.watch`: made once, shared by every attempt. Owned by
    /// JS (it holds only a weak reference), so a route settling after `free()` finds nothing.
    report_attempt: Function,
}

/// Runs LLM turns so that exactly one answer, the fixed recovery text, or nothing (when
/// interrupted) reaches TTS per turn. See DESIGN.md §1 (T1–T16).
#[wasm_bindgen]
pub struct TurnController {
    /// Taken by `free()`: a freed controller holds nothing and every method is inert.
    shared: Handle<Shared>,
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
        let mut config = parse_config(&options_fields, &routes)?;
        let callbacks = Callbacks {
            on_accepted_text: options_fields.function("onAcceptedText")?,
            on_recovery: options_fields.function("onRecovery")?,
            on_sentence: options_fields.optional_function("onSentence")?,
            on_event: options_fields.optional_function("onEvent")?,
        };
        // No `onEvent`: the ladder makes no events, rather than making them for nobody.
        config.emit_events = callbacks.on_event.is_some();
        let recovery_text = JsValue::from_str(&config.recovery_text);
        let max_input_units =
            u32::try_from(config.max_input_chars.saturating_mul(2)).unwrap_or(u32::MAX);
        let max_answer_units =
            u32::try_from(config.answer_read_chars().saturating_mul(2)).unwrap_or(u32::MAX);
        let routes: Vec<JsRoute> = routes.into_iter().map(|(route, _)| route).collect();
        let shared = Rc::new_cyclic(|weak: &Weak<Shared>| {
            let on_report = weak.clone();
            let report = move |id: u32, kind: u8, value: JsValue| -> bool {
                match on_report.upgrade() {
                    Some(shared) => shared.on_attempt_report(id, kind, &value),
                    None => false,
                }
            };
            Shared {
                driver: Driver::new(TurnLadder::new(config), weak),
                route_names: routes.iter().map(|route| route.name.clone()).collect(),
                routes,
                callbacks,
                recovery_text,
                max_input_units,
                max_answer_units,
                io: RefCell::new(Io::default()),
                waiters: Map::new(),
                report_attempt: Closure::<dyn FnMut(u32, u8, JsValue) -> bool>::new(report)
                    .into_js_value()
                    .unchecked_into(),
            }
        });
        Ok(TurnController {
            shared: Handle::new(shared),
        })
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
        self.shared()
            .ok_or_else(freed)
            .and_then(|shared| shared.run(turn_id, input))
            .unwrap_or_else(|error| Promise::reject(&error))
    }

    /// Interrupts a running turn: true if it was running; it then gets no speech and no recovery (T7).
    pub fn interrupt(
        &self,
        #[wasm_bindgen(js_name = turnId, unchecked_param_type = "string")] turn_id: JsValue,
    ) -> Result<bool, JsValue> {
        let turn_id = string_arg(&turn_id, "turnId")?;
        let interrupted = self.shared().and_then(|shared| {
            driver::input(&shared, |ladder, now| ladder.interrupt(&turn_id, now))
        });
        Ok(interrupted.unwrap_or(false))
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
        let changed = self.shared().and_then(|shared| {
            shared
                .driver
                .update(|ladder, _| ladder.set_heard_text(&turn_id, &text))
        });
        Ok(changed.unwrap_or(false))
    }

    /// The record of a running or retained turn, or `undefined`.
    #[wasm_bindgen(js_name = getTurn, unchecked_return_type = "TurnRecord | undefined")]
    pub fn get_turn(
        &self,
        #[wasm_bindgen(js_name = turnId, unchecked_param_type = "string")] turn_id: JsValue,
    ) -> Result<JsValue, JsValue> {
        let turn_id = string_arg(&turn_id, "turnId")?;
        Ok(self
            .shared()
            .map_or(JsValue::UNDEFINED, |shared| shared.record_js(&turn_id)))
    }

    /// Ends the controller at once: every running turn is cancelled (its signal aborts, nothing
    /// is spoken, `run` resolves with the cancelled record), no timer or callback runs again, and
    /// what it held is released. Idempotent, and safe from inside any callback, even one that
    /// runs inside a method of this controller. Also `[Symbol.dispose]()`.
    ///
    /// This replaces the `free()` wasm-bindgen generates, which throws when called twice or from
    /// inside a method; the small handle left behind is freed when JS collects the object.
    pub fn free(&self) {
        if let Some(shared) = self.shared.take() {
            shared.dispose();
        }
    }
}

impl TurnController {
    fn shared(&self) -> Option<Rc<Shared>> {
        self.shared.get()
    }

    /// The conversation so far as chat messages, oldest first (`VoiceSession.history`).
    #[cfg(feature = "voice")]
    pub(crate) fn history_messages(&self) -> Array {
        let messages = Array::new();
        let exchanges = self.shared().and_then(|shared| {
            shared
                .driver
                .read(|ladder| ladder.history().cloned().collect::<Vec<Exchange>>())
        });
        for exchange in exchanges.unwrap_or_default() {
            glue::push_exchange(&messages, &exchange.user, &exchange.assistant);
        }
        messages
    }
}

impl Drop for TurnController {
    /// Collected by JS without `free()`: the same ending.
    fn drop(&mut self) {
        self.free();
    }
}

impl Shell for Shared {
    type Machine = TurnLadder;

    fn driver(&self) -> &Driver<TurnLadder> {
        &self.driver
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
                let may_speak = self.ladder(|ladder| ladder.may_speak(&turn_id));
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
                let controller = {
                    let mut io = self.io.borrow_mut();
                    let id = io.live_attempt(&request_id);
                    id.and_then(|id| io.end_attempt(id))
                };
                // An attempt ends early for two reasons: its timeout, or an answer cut at
                // `maxAnswerChars` (T15); the abort reason says which.
                let cut = self.ladder(|ladder| {
                    let turn_id = parse_request_id(&request_id).map(|(turn, _)| turn);
                    turn_id
                        .and_then(|turn_id| ladder.turn(turn_id))
                        .is_some_and(|record| {
                            record.attempts.iter().any(|attempt| {
                                attempt.request_id == request_id
                                    && attempt.error == Some(Failure::AnswerTooLong)
                            })
                        })
                });
                if let Some(controller) = controller {
                    if cut {
                        abort(
                            &controller,
                            "AbortError",
                            "turnguard: answer reached maxAnswerChars",
                        );
                    } else {
                        abort(&controller, "TimeoutError", "turnguard: attempt timed out");
                    }
                }
            }
            Action::AbortTurn { turn_id } => {
                // The turn's end aborts each of its live attempts: the chain of T4, kept by the
                // shell itself rather than by `AbortSignal.any` (missing in older browsers).
                let controllers = self.io.borrow_mut().end_attempts_of(&turn_id);
                for controller in &controllers {
                    abort(controller, "AbortError", "turnguard: turn ended");
                }
            }
            Action::Deliver { turn_id, text } => {
                // T6: checked again right before the answer leaves for TTS.
                let accepted = self.ladder(|ladder| match ladder.turn(&turn_id) {
                    Some(record) if ladder.may_deliver(&turn_id) => {
                        record.accepted_request_id.clone()
                    }
                    _ => None,
                });
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
                let (turn, controllers) = {
                    let mut io = self.io.borrow_mut();
                    let controllers = io.end_attempts_of(&record.turn_id);
                    (io.turns.remove(&record.turn_id), controllers)
                };
                // An attempt still live at the end of its turn (a committed stream that
                // ended) has nothing left to abort: its controller is just released.
                drop(controllers);
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
                    .filter(|_| !self.driver.is_disposed())
                {
                    let event_js = self.turn_strings(event_turn_id(&event), |strings| {
                        event_to_js(&event, strings, &self.route_names)
                    });
                    let _ = on_event.call1(&JsValue::UNDEFINED, &event_js);
                }
            }
        }
    }
}

impl Shared {
    fn run(self: &Rc<Self>, turn_id_js: JsValue, input_js: JsValue) -> Result<Promise, JsValue> {
        if self.driver.is_disposed() {
            return Err(freed());
        }
        let turn_id = turn_id_js
            .as_string()
            .ok_or_else(|| type_error("turnId must be a string"))?;
        // Length-checked before the copy into wasm: an oversize input costs nothing (T9).
        let too_long = input_js
            .dyn_ref::<JsString>()
            .is_some_and(|input| input.length() > self.max_input_units);
        if too_long {
            return Err(range_error("input exceeds maxInputChars"));
        }
        let input = input_js
            .as_string()
            .ok_or_else(|| type_error("input must be a string"))?;
        let started = self
            .driver
            .update(|ladder, now| ladder.start_turn(&turn_id, &input, now))
            .ok_or_else(|| range_error("the TurnController is busy"))?
            .map_err(|error| start_error_to_js(&error))?;
        let still_open = match started {
            Started::New => {
                self.io.borrow_mut().turns.insert(
                    turn_id.clone(),
                    TurnIo {
                        strings: TurnStrings::new(turn_id_js.clone(), input_js),
                        live: Vec::new(),
                    },
                );
                true
            }
            // Running, or settled with its `Settled` still queued behind a re-entrant call.
            Started::Existing => self.io.borrow().turns.contains_key(&turn_id),
        };
        if !still_open {
            return Ok(Promise::resolve(&self.record_js(&turn_id)));
        }
        let promise = glue::wait_for(&self.waiters, &turn_id_js);
        driver::pump(self);
        Ok(promise)
    }

    fn dispose(self: &Rc<Self>) {
        driver::dispose(self, |ladder, now| ladder.interrupt_all(now));
    }

    /// Reads the ladder; a ladder out of reach (never while no JS runs under a borrow) reads as
    /// the default: nothing may be spoken or started.
    fn ladder<R: Default>(&self, read: impl FnOnce(&TurnLadder) -> R) -> R {
        self.driver.read(read).unwrap_or_default()
    }

    fn record_js(&self, turn_id: &str) -> JsValue {
        self.driver
            .read(|ladder| {
                ladder.turn(turn_id).map(|record| {
                    record_to_js(record, &TurnStrings::decoded(record), &self.route_names)
                })
            })
            .flatten()
            .unwrap_or(JsValue::UNDEFINED)
    }

    /// Runs `with` on the JS strings of a turn: the ones held, or decoded from its record.
    fn turn_strings<T>(&self, turn_id: &str, with: impl FnOnce(&TurnStrings) -> T) -> T {
        {
            let io = self.io.borrow();
            if let Some(turn) = io.turns.get(turn_id) {
                return with(&turn.strings);
            }
        }
        let strings = self
            .driver
            .read(|ladder| ladder.turn(turn_id).map(TurnStrings::decoded))
            .flatten()
            .unwrap_or_else(|| TurnStrings::new(JsValue::from_str(turn_id), JsValue::UNDEFINED));
        with(&strings)
    }

    /// Calls `onAcceptedText`/`onRecovery`/`onSentence`. A throwing callback is reported as an
    /// event and changes nothing else: never a recovery, never a second answer (T6).
    /// Nothing is called once the controller was freed: the queued work of a turn that had
    /// already been accepted goes silent with it.
    fn call_back(&self, callback: &Function, name: &str, turn_id: &JsValue, text: &JsValue) {
        if self.driver.is_disposed() {
            return;
        }
        if callback.call2(&JsValue::UNDEFINED, turn_id, text).is_err() {
            if let Some(on_event) = &self.callbacks.on_event {
                let at = self.driver.now().0 as f64;
                let event = glue::callback_error(turn_id, name, at);
                let _ = on_event.call1(&JsValue::UNDEFINED, &event);
            }
        }
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

fn freed() -> JsValue {
    type_error("the TurnController was freed")
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
