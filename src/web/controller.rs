//! `TurnController`: the turn ladder driven by real routes, timers and `AbortController`s.
//!
//! The ladder's I/O (`ladder_io`, `route_calls`, `attempts`) is shared with `VoiceSession`, whose
//! machine has a ladder inside: this class adds `run`'s promises and the app's callbacks.

use crate::core::time::Millis;
use crate::core::turn::{Action, Preempted, StartError, Started, TurnLadder};
use crate::web::callbacks::{AppCallbacks, Args};
use crate::web::controller_options::{parse_config, parse_routes};
use crate::web::convert::{range_error, string_arg, type_error, Fields};
use crate::web::driver::{self, Driver, Handle, Machine, Shell};
use crate::web::glue;
use alloc::rc::{Rc, Weak};
use alloc::string::String;
use core::cell::{Ref, RefMut};
use js_sys::{Function, JsString, Map, Promise};
use wasm_bindgen::prelude::*;
use web_sys::{AbortController, DomException};

mod attempts;
pub(crate) mod ladder_io;
mod route_calls;

pub(crate) use ladder_io::{AnyLadderHost, LadderHost, LadderIo};

struct Callbacks {
    on_accepted_text: Function,
    on_recovery: Function,
    on_sentence: Option<Function>,
    /// `onError` and `onEvent`, and the one rule for a callback that throws.
    app: AppCallbacks,
}

// What `glue.callRoute` reports, as the `kind` of `report(id, kind, value)`.
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

pub(crate) struct Shared {
    this: Weak<Shared>,
    driver: Driver<TurnLadder>,
    /// Routes, attempts and their `AbortController`s, the turns' JS strings.
    ladder: LadderIo,
    callbacks: Callbacks,
    recovery_text: JsValue,
    /// The longest input in UTF-16 code units that can be within `maxInputChars` scalar values:
    /// longer input is refused before it is copied into wasm.
    max_input_units: u32,
    /// `run` promises waiting for a turn (a JS `Map` of turn id → resolve functions).
    waiters: Map,
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
        let (routes, specs) = parse_routes(&routes)?;
        let options_fields = Fields::of(&options, "options")?;
        let mut config = parse_config(&options_fields, specs)?;
        let on_accepted_text = options_fields.function("onAcceptedText")?;
        let on_recovery = options_fields.function("onRecovery")?;
        let on_sentence = options_fields.optional_function("onSentence")?;
        let on_event = options_fields.optional_function("onEvent")?;
        let on_error = options_fields.optional_function("onError")?;
        // No `onEvent`: the ladder makes no events, rather than making them for nobody.
        config.emit_events = on_event.is_some();
        config.emit_sentences = on_sentence.is_some();
        let recovery_text = JsValue::from_str(&config.recovery_text);
        let max_input_units =
            u32::try_from(config.max_input_chars.saturating_mul(2)).unwrap_or(u32::MAX);
        let answer_read_chars = config.answer_read_chars();
        let shared = Rc::new_cyclic(|weak: &Weak<Shared>| {
            let driver = Driver::new(TurnLadder::new(config), weak);
            let callbacks = Callbacks {
                on_accepted_text,
                on_recovery,
                on_sentence,
                app: AppCallbacks::new(on_error, on_event, driver.clock()),
            };
            let host: Weak<AnyLadderHost> = weak.clone();
            Shared {
                this: weak.clone(),
                driver,
                ladder: LadderIo::new(routes, answer_read_chars, host),
                callbacks,
                recovery_text,
                max_input_units,
                waiters: Map::new(),
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
    /// Starts the turn's first attempt on an eager end of turn, before its final (T17); `run`
    /// with the same id is the final that keeps or discards it. Says what happened:
    /// `"started"`, `"running"` (one runs for that text), or why none started (`"too_late"`,
    /// `"limit"`, `"retry_budget"`, `"session_budget"`).
    #[wasm_bindgen(js_name = runPreemptive, unchecked_return_type = "PreemptiveStart")]
    pub fn run_preemptive(
        &self,
        #[wasm_bindgen(js_name = turnId, unchecked_param_type = "string")] turn_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] input: JsValue,
    ) -> Result<JsValue, JsValue> {
        let shared = self.shared().ok_or_else(freed)?;
        shared.run_preemptive(turn_id, input)
    }

    /// Withdraws a turn's eager guess (the user went on): its preemptive attempt is aborted and
    /// never spoken. True when one was running.
    #[wasm_bindgen(js_name = discardPreemptive)]
    pub fn discard_preemptive(
        &self,
        #[wasm_bindgen(js_name = turnId, unchecked_param_type = "string")] turn_id: JsValue,
    ) -> Result<bool, JsValue> {
        let turn_id = string_arg(&turn_id, "turnId")?;
        let discarded = self.shared().and_then(|shared| {
            driver::input(&shared, |ladder, now| {
                ladder.discard_preemptive(&turn_id, now)
            })
        });
        Ok(discarded.unwrap_or(false))
    }

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
        Ok(self.shared().map_or(JsValue::UNDEFINED, |shared| {
            shared.ladder.record_js(shared.as_ref(), &turn_id)
        }))
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

    fn this(&self) -> Option<Rc<Self>> {
        self.this.upgrade()
    }

    fn perform(self: &Rc<Self>, action: Action) {
        let Some(action) = self.ladder.perform(self.as_ref(), action) else {
            return;
        };
        match action {
            Action::Sentence { turn_id, text } => {
                // Checked right before each sentence leaves: not one after an interrupt (T12).
                let may_speak = ladder_io::read(self.as_ref(), |ladder| ladder.may_speak(&turn_id));
                if let (Some(on_sentence), true) = (&self.callbacks.on_sentence, may_speak) {
                    let turn_js = self.turn_js(&turn_id);
                    let text = JsValue::from_str(&text);
                    self.call_back(on_sentence, "onSentence", &turn_js, &text);
                }
            }
            Action::Deliver { turn_id, text } => {
                // T6: checked again right before the answer leaves for TTS.
                let accepted =
                    ladder_io::read(self.as_ref(), |ladder| match ladder.turn(&turn_id) {
                        Some(record) if ladder.may_deliver(&turn_id) => {
                            record.accepted_request_id.clone()
                        }
                        _ => None,
                    });
                if let Some(request_id) = accepted {
                    let (turn_js, text_js) =
                        self.ladder
                            .turn_strings(self.as_ref(), &turn_id, |strings| {
                                (strings.turn_id.clone(), strings.answer(&request_id, &text))
                            });
                    let callback = &self.callbacks.on_accepted_text;
                    self.call_back(callback, "onAcceptedText", &turn_js, &text_js);
                }
            }
            Action::Recover { turn_id, .. } => {
                let turn_js = self.turn_js(&turn_id);
                let callback = &self.callbacks.on_recovery;
                self.call_back(callback, "onRecovery", &turn_js, &self.recovery_text);
            }
            Action::Settled(record) => {
                let (turn_js, record_js) = self.ladder.settle(&record);
                glue::resolve_waiters(&self.waiters, &turn_js, &record_js);
            }
            Action::Event(event)
                if self.callbacks.app.wants_events() && !self.driver.is_disposed() =>
            {
                let event_js = self.ladder.event_js(self.as_ref(), &event);
                self.callbacks.app.event(&event_js);
            }
            // The I/O was performed above.
            _ => {}
        }
    }
}

impl LadderHost for Shared {
    fn ladder_io(&self) -> &LadderIo {
        &self.ladder
    }

    fn ladder_mut(&self) -> Option<(RefMut<'_, TurnLadder>, Millis)> {
        self.driver.lend()
    }

    fn ladder(&self) -> Option<Ref<'_, TurnLadder>> {
        self.driver.view()
    }
}

impl Shared {
    fn run_preemptive(
        self: &Rc<Self>,
        turn_id_js: JsValue,
        input_js: JsValue,
    ) -> Result<JsValue, JsValue> {
        if self.driver.is_disposed() {
            return Err(freed());
        }
        let turn_id = string_arg(&turn_id_js, "turnId")?;
        let input = self.input_arg(&input_js)?;
        let opened = !self.ladder.holds_turn(&turn_id);
        let preempted = self
            .driver
            .update(|ladder, now| ladder.start_preemptive(&turn_id, &input, now))
            .ok_or_else(|| range_error("the TurnController is busy"))?
            .map_err(|error| start_error_to_js(&error))?;
        let name = match preempted {
            Preempted::Started => {
                if opened {
                    self.ladder.open_turn(turn_id, turn_id_js, input_js);
                }
                "started"
            }
            Preempted::Running => "running",
            Preempted::Refused(reason) => reason.as_str(),
        };
        driver::pump(self);
        Ok(JsValue::from_str(name))
    }

    fn input_arg(&self, input_js: &JsValue) -> Result<String, JsValue> {
        // Length-checked before the copy into wasm: an oversize input costs nothing (T9).
        let too_long = input_js
            .dyn_ref::<JsString>()
            .is_some_and(|input| input.length() > self.max_input_units);
        if too_long {
            return Err(range_error("input exceeds maxInputChars"));
        }
        input_js
            .as_string()
            .ok_or_else(|| type_error("input must be a string"))
    }

    fn run(self: &Rc<Self>, turn_id_js: JsValue, input_js: JsValue) -> Result<Promise, JsValue> {
        if self.driver.is_disposed() {
            return Err(freed());
        }
        let turn_id = turn_id_js
            .as_string()
            .ok_or_else(|| type_error("turnId must be a string"))?;
        let input = self.input_arg(&input_js)?;
        let started = self
            .driver
            .update(|ladder, now| ladder.start_turn(&turn_id, &input, now))
            .ok_or_else(|| range_error("the TurnController is busy"))?
            .map_err(|error| start_error_to_js(&error))?;
        let still_open = match started {
            Started::New => {
                self.ladder
                    .open_turn(turn_id.clone(), turn_id_js.clone(), input_js);
                true
            }
            // Running, or settled with its `Settled` still queued behind a re-entrant call.
            Started::Existing => self.ladder.holds_turn(&turn_id),
            // A pending turn's strings were kept since `runPreemptive`.
            Started::Committed => self.ladder.holds_turn(&turn_id),
        };
        if !still_open {
            return Ok(Promise::resolve(
                &self.ladder.record_js(self.as_ref(), &turn_id),
            ));
        }
        let promise = glue::wait_for(&self.waiters, &turn_id_js);
        driver::pump(self);
        Ok(promise)
    }

    fn dispose(self: &Rc<Self>) {
        driver::dispose(self, |ladder, now| ladder.interrupt_all(now));
    }

    /// The turn id as a JS string: the one held, or decoded.
    fn turn_js(&self, turn_id: &str) -> JsValue {
        self.ladder
            .turn_strings(self, turn_id, |strings| strings.turn_id.clone())
    }

    /// Calls `onAcceptedText`/`onRecovery`/`onSentence`. A throwing callback is a
    /// `callback_error` (see `callbacks`) and changes nothing else: never a recovery, never a
    /// second answer (T6). Nothing is called once the controller was freed: the queued work of a
    /// turn that had already been accepted goes silent with it.
    fn call_back(&self, callback: &Function, name: &str, turn_id: &JsValue, text: &JsValue) {
        if self.driver.is_disposed() {
            return;
        }
        let args = Args::Two(turn_id, text);
        self.callbacks.app.call(name, callback, args, Some(turn_id));
    }
}

fn freed() -> JsValue {
    type_error("the TurnController was freed")
}

fn start_error_to_js(error: &StartError) -> JsValue {
    range_error(&error.message())
}

fn abort(controller: &AbortController, name: &str, message: &str) {
    match DomException::new_with_message_and_name(message, name) {
        Ok(reason) => controller.abort_with_reason(&reason),
        Err(_) => controller.abort(),
    }
}
