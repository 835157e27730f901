//! `TurnController`: the turn ladder driven by real routes, timers and `AbortController`s.

use crate::core::record::Failure;
use crate::core::time::Millis;
use crate::core::turn::{Action, RouteSpec, StartError, Started, TurnConfig, TurnLadder};
use crate::web::clock::Clock;
use crate::web::convert::{range_error, string_arg, type_error, Fields};
use crate::web::js_object::JsObject;
use crate::web::report::{event_to_js, record_to_js};
use gloo_timers::callback::Timeout;
use js_sys::{Array, Function, Promise, Reflect};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::{Rc, Weak};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, AbortSignal, DomException};

/// A route as JS gave it: the object (the `this` of `generate`) and its `generate` function.
struct JsRoute {
    object: JsValue,
    generate: Function,
}

struct Callbacks {
    on_accepted_text: Function,
    on_recovery: Function,
    on_event: Option<Function>,
}

/// Browser resources of one running turn.
struct TurnIo {
    abort: AbortController,
    /// `resolve` functions of every `run` promise waiting for this turn to settle.
    waiters: Vec<Function>,
}

#[derive(Default)]
struct Io {
    turns: HashMap<String, TurnIo>,
    /// The `AbortController` of each running attempt, by request id.
    attempts: HashMap<String, AbortController>,
    /// The one timer, armed for the ladder's next deadline.
    timer: Option<(Millis, Timeout)>,
}

struct Shared {
    ladder: RefCell<TurnLadder>,
    routes: Vec<JsRoute>,
    callbacks: Callbacks,
    clock: Clock,
    io: RefCell<Io>,
    /// True while `pump` drains actions: a re-entrant call only queues, the outer pump performs.
    pumping: Cell<bool>,
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
            on_event: options_fields.optional_function("onEvent")?,
        };
        Ok(TurnController {
            shared: Rc::new(Shared {
                ladder: RefCell::new(TurnLadder::new(config)),
                routes: routes.into_iter().map(|(route, _)| route).collect(),
                callbacks,
                clock: Clock::new(),
                io: RefCell::new(Io::default()),
                pumping: Cell::new(false),
            }),
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
        self.shared
            .run(&turn_id, &input)
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

    /// The record of a running or retained turn, or `undefined`.
    #[wasm_bindgen(js_name = getTurn, unchecked_return_type = "TurnRecord | undefined")]
    pub fn get_turn(
        &self,
        #[wasm_bindgen(js_name = turnId, unchecked_param_type = "string")] turn_id: JsValue,
    ) -> Result<JsValue, JsValue> {
        let turn_id = string_arg(&turn_id, "turnId")?;
        let ladder = self.shared.ladder.borrow();
        Ok(ladder
            .turn(&turn_id)
            .map_or(JsValue::UNDEFINED, |record| record_to_js(record, &ladder)))
    }
}

impl Drop for TurnController {
    /// `free()` and `Symbol.dispose`: every running turn is interrupted and its signal aborted.
    fn drop(&mut self) {
        let now = self.shared.clock.now();
        self.shared.ladder.borrow_mut().interrupt_all(now);
        self.shared.pump();
        self.shared.io.borrow_mut().timer = None;
    }
}

impl Shared {
    fn run(self: &Rc<Self>, turn_id: &JsValue, input: &JsValue) -> Result<Promise, JsValue> {
        let turn_id = turn_id
            .as_string()
            .ok_or_else(|| type_error("turnId must be a string"))?;
        let input = input
            .as_string()
            .ok_or_else(|| type_error("input must be a string"))?;
        let now = self.clock.now();
        let started = self
            .ladder
            .borrow_mut()
            .start_turn(&turn_id, &input, now)
            .map_err(|error| start_error_to_js(&error))?;
        let mut resolve_slot = None;
        let promise = Promise::new(&mut |resolve, _reject| resolve_slot = Some(resolve));
        let resolve = resolve_slot.ok_or_else(|| type_error("Promise executor did not run"))?;
        let settled_record = match started {
            // A new turn's `Settled` is queued behind its start, even when it ends at once.
            Started::New => None,
            Started::Existing => {
                let ladder = self.ladder.borrow();
                ladder
                    .turn(&turn_id)
                    .filter(|record| !self.io.borrow().turns.contains_key(&record.turn_id))
                    .map(|record| record_to_js(record, &ladder))
            }
        };
        match settled_record {
            Some(record) => {
                let _ = resolve.call1(&JsValue::UNDEFINED, &record);
            }
            None => self.turn_io(&turn_id).waiters.push(resolve),
        }
        self.pump();
        Ok(promise)
    }

    fn turn_io(&self, turn_id: &str) -> std::cell::RefMut<'_, TurnIo> {
        std::cell::RefMut::map(self.io.borrow_mut(), |io| {
            io.turns
                .entry(turn_id.to_owned())
                .or_insert_with(|| TurnIo {
                    abort: new_abort_controller(),
                    waiters: Vec::new(),
                })
        })
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
        self.arm_timer();
    }

    fn perform(self: &Rc<Self>, action: Action) {
        match action {
            Action::StartAttempt {
                turn_id,
                request_id,
                route,
                input,
            } => self.start_attempt(&turn_id, request_id, route, &input),
            Action::AbortAttempt { request_id } => {
                let attempt = self.io.borrow_mut().attempts.remove(&request_id);
                if let Some(attempt) = attempt {
                    abort(&attempt, "TimeoutError", "turnguard: attempt timed out");
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
                if self.ladder.borrow().may_deliver(&turn_id) {
                    let callback = &self.callbacks.on_accepted_text;
                    self.call_back(callback, "onAcceptedText", &turn_id, &text);
                }
            }
            Action::Recover { turn_id, text } => {
                let callback = &self.callbacks.on_recovery;
                self.call_back(callback, "onRecovery", &turn_id, &text);
            }
            Action::Settled(record) => {
                let turn = {
                    let mut io = self.io.borrow_mut();
                    let prefix = format!("{}:attempt:", record.turn_id);
                    io.attempts
                        .retain(|request_id, _| !request_id.starts_with(&prefix));
                    io.turns.remove(&record.turn_id)
                };
                if let Some(turn) = turn.filter(|turn| !turn.waiters.is_empty()) {
                    let record = record_to_js(&record, &self.ladder.borrow());
                    for resolve in turn.waiters {
                        let _ = resolve.call1(&JsValue::UNDEFINED, &record);
                    }
                }
            }
            Action::Event(event) => {
                if let Some(on_event) = &self.callbacks.on_event {
                    let event = event_to_js(&event, &self.ladder.borrow());
                    let _ = on_event.call1(&JsValue::UNDEFINED, &event);
                }
            }
        }
    }

    /// Calls `onAcceptedText`/`onRecovery`. A throwing callback is reported as an event and
    /// changes nothing else: never a recovery, never a second answer (T6).
    fn call_back(&self, callback: &Function, name: &str, turn_id: &str, text: &str) {
        let result = callback.call2(
            &JsValue::UNDEFINED,
            &JsValue::from_str(turn_id),
            &JsValue::from_str(text),
        );
        if result.is_err() {
            if let Some(on_event) = &self.callbacks.on_event {
                let event = JsObject::new()
                    .set("type", "callback_error")
                    .set("turnId", turn_id)
                    .set("callback", name)
                    .set("at", self.clock.now().0 as f64)
                    .build();
                let _ = on_event.call1(&JsValue::UNDEFINED, &event);
            }
        }
    }

    /// Calls the route with a fresh signal chained to the turn's (T4) and feeds its outcome back.
    fn start_attempt(
        self: &Rc<Self>,
        turn_id: &str,
        request_id: String,
        route: usize,
        input: &str,
    ) {
        let turn_signal = self.turn_io(turn_id).abort.signal();
        let attempt_abort = new_abort_controller();
        let signals = Array::of2(&turn_signal, &attempt_abort.signal());
        let signal = AbortSignal::any(&signals);
        self.io
            .borrow_mut()
            .attempts
            .insert(request_id.clone(), attempt_abort);
        let Some(js_route) = self.routes.get(route) else {
            return self.finish_attempt(&request_id, Err(Failure::Threw { retryable: true }));
        };
        let request = JsObject::new()
            .set("requestId", request_id.as_str())
            .set("turnId", turn_id)
            .set("input", input)
            .set("signal", signal)
            .build();
        match js_route.generate.call1(&js_route.object, &request) {
            Err(error) => self.finish_attempt(&request_id, Err(classify_error(&error))),
            Ok(value) if is_thenable(&value) => {
                let weak = Rc::downgrade(self);
                let future = JsFuture::from(Promise::resolve(&value));
                wasm_bindgen_futures::spawn_local(async move {
                    let outcome = match future.await {
                        Ok(value) => text_of(&value),
                        Err(error) => Err(classify_error(&error)),
                    };
                    if let Some(shared) = Weak::upgrade(&weak) {
                        shared.finish_attempt(&request_id, outcome);
                        shared.pump();
                    }
                });
            }
            Ok(value) => self.finish_attempt(&request_id, text_of(&value)),
        }
    }

    /// Hands an attempt's outcome to the ladder; the caller pumps.
    fn finish_attempt(&self, request_id: &str, outcome: Result<String, Failure>) {
        self.io.borrow_mut().attempts.remove(request_id);
        let now = self.clock.now();
        self.ladder
            .borrow_mut()
            .on_attempt_result(request_id, outcome, now);
    }

    /// Keeps one timer armed for the ladder's next deadline.
    fn arm_timer(self: &Rc<Self>) {
        let next = self.ladder.borrow().poll_timeout();
        let mut io = self.io.borrow_mut();
        let Some(at) = next else {
            io.timer = None;
            return;
        };
        if io.timer.as_ref().is_some_and(|(armed, _)| *armed == at) {
            return;
        }
        let delay = at.since(self.clock.now()).min(u64::from(u32::MAX)) as u32;
        let weak = Rc::downgrade(self);
        let timeout = Timeout::new(delay, move || {
            if let Some(shared) = Weak::upgrade(&weak) {
                shared.io.borrow_mut().timer = None;
                let now = shared.clock.now();
                shared.ladder.borrow_mut().handle_timeout(now);
                shared.pump();
            }
        });
        io.timer = Some((at, timeout));
    }
}

fn parse_routes(routes: &JsValue) -> Result<Vec<(JsRoute, RouteSpec)>, JsValue> {
    if !Array::is_array(routes) {
        return Err(type_error("routes must be an array"));
    }
    let routes = Array::from(routes);
    if routes.length() == 0 {
        return Err(range_error("routes must not be empty"));
    }
    routes
        .iter()
        .enumerate()
        .map(|(index, object)| {
            let path = format!("routes[{index}]");
            let fields = Fields::of(&object, &path)?;
            let name = fields.string("name")?;
            let generate = fields.function("generate")?;
            Ok((
                JsRoute {
                    object: object.clone(),
                    generate,
                },
                RouteSpec { name },
            ))
        })
        .collect()
}

fn parse_config(options: &Fields, routes: &[(JsRoute, RouteSpec)]) -> Result<TurnConfig, JsValue> {
    let specs = routes.iter().map(|(_, spec)| spec.clone()).collect();
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
    let retry_budget = options.get("retryBudget")?;
    if !retry_budget.is_undefined() {
        let budget = Fields::of(&retry_budget, "options.retryBudget")?;
        config.retry_max_tokens = budget.non_negative("maxTokens", config.retry_max_tokens)?;
        config.retry_token_ratio = budget.non_negative("tokenRatio", config.retry_token_ratio)?;
    }
    Ok(config)
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

fn is_thenable(value: &JsValue) -> bool {
    (value.is_object() || value.is_function())
        && Reflect::get(value, &JsValue::from_str("then")).is_ok_and(|then| then.is_function())
}

/// What a route resolved to: text, or `NoText` for anything else (never reaches TTS).
fn text_of(value: &JsValue) -> Result<String, Failure> {
    value.as_string().ok_or(Failure::NoText)
}

/// How a route's error maps onto the ladder (T3): an explicit `retryable: false`, an HTTP
/// `status`, a `TimeoutError`, a `TypeError` (what `fetch` throws for network failures), or
/// anything else thrown (retryable).
fn classify_error(error: &JsValue) -> Failure {
    let field = |key: &str| {
        if error.is_object() {
            Reflect::get(error, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
        } else {
            JsValue::UNDEFINED
        }
    };
    if field("retryable").as_bool() == Some(false) {
        return Failure::Threw { retryable: false };
    }
    if let Some(status) = field("status").as_f64() {
        if status.fract() == 0.0 && (100.0..=599.0).contains(&status) {
            return Failure::Http(status as u16);
        }
    }
    match field("name").as_string().as_deref() {
        Some("TimeoutError") => Failure::Timeout,
        Some("TypeError") | Some("NetworkError") => Failure::Network,
        _ => Failure::Threw { retryable: true },
    }
}
