//! A deterministic driver for the turn ladder in virtual time: routes are scripts, the clock
//! jumps to the next due event, and everything the ladder asks for is recorded.

#![allow(dead_code)]

use std::collections::BTreeMap;
use turnguard::core::time::Millis;
use turnguard::core::turn::history::Exchange;
use turnguard::core::turn::record::{Failure, TurnRecord};
use turnguard::core::turn::{Action, AttemptId, Event, RouteSpec, TurnConfig, TurnLadder};

/// What a scripted route does with one call.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Answers (or fails) this many milliseconds after the call, whatever its signal says.
    After(u64, Result<String, Failure>),
    /// Streams: each chunk at its time after the call, then the end (`Ok`) or a failure at its
    /// time, or no end at all (`None`: the stream stalls).
    Stream(Vec<(u64, String)>, Option<(u64, Result<(), Failure>)>),
    /// Never answers.
    Never,
}

/// Something a route does at a point in time.
#[derive(Clone, Debug)]
enum RouteInput {
    Result(Result<String, Failure>),
    Chunk(String),
    End,
}

pub fn ok(ms: u64, text: &str) -> Reply {
    Reply::After(ms, Ok(text.to_owned()))
}

pub fn fail(ms: u64, failure: Failure) -> Reply {
    Reply::After(ms, Err(failure))
}

/// A stream of `chunks`, one every `every_ms`, ending `every_ms` after the last.
pub fn stream(every_ms: u64, chunks: &[&str]) -> Reply {
    let timed = chunks
        .iter()
        .enumerate()
        .map(|(i, chunk)| ((i as u64 + 1) * every_ms, (*chunk).to_owned()))
        .collect::<Vec<_>>();
    let end = (chunks.len() as u64 + 1) * every_ms;
    Reply::Stream(timed, Some((end, Ok(()))))
}

/// What reached TTS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spoken {
    Answer(String, String),
    Recovery(String, String),
}

/// One call to a route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub request_id: AttemptId,
    pub turn_id: String,
    pub route: usize,
    pub at: Millis,
    pub history: Option<Vec<Exchange>>,
}

pub struct Sim {
    pub ladder: TurnLadder,
    pub now: Millis,
    pub spoken: Vec<Spoken>,
    pub calls: Vec<Call>,
    pub settled: Vec<TurnRecord>,
    pub events: Vec<Event>,
    /// Sentences handed to TTS, with their turn, when `may_speak` allowed them.
    pub sentences: Vec<(String, String)>,
    /// Every `Sentence` action the ladder emitted, in order, allowed or not.
    pub emitted_sentences: Vec<(String, String)>,
    pub aborted_attempts: Vec<AttemptId>,
    pub aborted_turns: Vec<String>,
    /// Turns whose input changed (a preemptive turn's final or newer guess), in order.
    pub input_changes: Vec<String>,
    /// Pending turns forgotten at their deadline with no final (T17).
    pub forgotten: Vec<String>,
    /// Route replies due, by time, in arrival order.
    pending: BTreeMap<(Millis, u64), (AttemptId, RouteInput)>,
    sequence: u64,
    script: Box<dyn FnMut(&Call) -> Reply>,
}

pub fn routes(names: &[&str]) -> Vec<RouteSpec> {
    names.iter().map(|name| RouteSpec::named(*name)).collect()
}

pub const RECOVERY: &str = "Sorry, could you say that again?";

impl Sim {
    pub fn new(config: TurnConfig, script: impl FnMut(&Call) -> Reply + 'static) -> Self {
        Sim {
            ladder: TurnLadder::new(config),
            now: Millis(0),
            spoken: Vec::new(),
            calls: Vec::new(),
            settled: Vec::new(),
            events: Vec::new(),
            sentences: Vec::new(),
            emitted_sentences: Vec::new(),
            aborted_attempts: Vec::new(),
            aborted_turns: Vec::new(),
            input_changes: Vec::new(),
            forgotten: Vec::new(),
            pending: BTreeMap::new(),
            sequence: 0,
            script: Box::new(script),
        }
    }

    /// A two-route configuration (`primary`, `fallback`) with the given timeouts.
    pub fn config(deadline_ms: u64, attempt_ms: u64) -> TurnConfig {
        let mut config = TurnConfig::new(routes(&["primary", "fallback"]), RECOVERY);
        config.turn_deadline_ms = deadline_ms;
        config.attempt_timeout_ms = attempt_ms;
        config
    }

    pub fn start(&mut self, turn_id: &str, input: &str) {
        self.ladder
            .start_turn(turn_id, input, self.now)
            .expect("valid turn");
        self.perform();
    }

    /// An eager end of turn: a preemptive attempt for `turn_id` (T17).
    pub fn preempt(&mut self, turn_id: &str, input: &str) -> turnguard::core::turn::Preempted {
        let preempted = self
            .ladder
            .start_preemptive(turn_id, input, self.now)
            .expect("valid turn");
        self.perform();
        preempted
    }

    /// The eager guess is withdrawn.
    pub fn discard(&mut self, turn_id: &str) -> bool {
        let discarded = self.ladder.discard_preemptive(turn_id, self.now);
        self.perform();
        discarded
    }

    pub fn interrupt(&mut self, turn_id: &str) -> bool {
        let interrupted = self.ladder.interrupt(turn_id, self.now);
        self.perform();
        interrupted
    }

    /// Performs every queued action.
    pub fn perform(&mut self) {
        while let Some(action) = self.ladder.poll_action() {
            match action {
                Action::StartAttempt {
                    request_id,
                    route,
                    history,
                    ..
                } => {
                    let call = Call {
                        turn_id: request_id.turn_id().to_owned(),
                        request_id: request_id.clone(),
                        route,
                        at: self.now,
                        history,
                    };
                    let reply = (self.script)(&call);
                    self.calls.push(call);
                    match reply {
                        Reply::After(ms, outcome) => {
                            self.schedule(ms, &request_id, RouteInput::Result(outcome))
                        }
                        Reply::Stream(chunks, end) => {
                            for (ms, chunk) in chunks {
                                self.schedule(ms, &request_id, RouteInput::Chunk(chunk));
                            }
                            match end {
                                Some((ms, Ok(()))) => {
                                    self.schedule(ms, &request_id, RouteInput::End)
                                }
                                Some((ms, Err(failure))) => {
                                    self.schedule(ms, &request_id, RouteInput::Result(Err(failure)))
                                }
                                None => {}
                            }
                        }
                        Reply::Never => {}
                    }
                }
                Action::Sentence { turn_id, text } => {
                    self.emitted_sentences.push((turn_id.clone(), text.clone()));
                    if self.ladder.may_speak(&turn_id) {
                        self.sentences.push((turn_id, text));
                    }
                }
                Action::AbortAttempt { request_id } => self.aborted_attempts.push(request_id),
                Action::AbortTurn { turn_id } => self.aborted_turns.push(turn_id),
                Action::Deliver { turn_id, text } => {
                    assert!(
                        self.ladder.may_deliver(&turn_id),
                        "deliver only what may be delivered"
                    );
                    self.spoken.push(Spoken::Answer(turn_id, text));
                }
                Action::Recover { turn_id, text } => {
                    self.spoken.push(Spoken::Recovery(turn_id, text))
                }
                Action::Settled(record) => self.settled.push((*record).clone()),
                Action::InputChanged { turn_id } => self.input_changes.push(turn_id),
                Action::Forget { turn_id } => self.forgotten.push(turn_id),
                Action::Event(event) => self.events.push(event),
            }
        }
    }

    fn schedule(&mut self, after_ms: u64, request_id: &AttemptId, input: RouteInput) {
        self.sequence += 1;
        self.pending.insert(
            (self.now.after(after_ms), self.sequence),
            (request_id.clone(), input),
        );
    }

    /// Jumps to the next due reply or timer and handles it; false when nothing is left.
    pub fn step(&mut self) -> bool {
        let next_reply = self.pending.keys().next().map(|(at, _)| *at);
        let next_timer = self.ladder.poll_timeout();
        let next = match (next_reply, next_timer) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return false,
        };
        self.now = self.now.max(next);
        if next_reply == Some(next) {
            if let Some(((_, _), (request_id, input))) = self.pending.pop_first() {
                match input {
                    RouteInput::Result(outcome) => {
                        self.ladder
                            .on_attempt_result(&request_id, outcome, self.now)
                    }
                    RouteInput::Chunk(chunk) => {
                        self.ladder.on_attempt_chunk(&request_id, &chunk, self.now)
                    }
                    RouteInput::End => self.ladder.on_stream_end(&request_id, self.now),
                }
            }
        } else {
            self.ladder.handle_timeout(self.now);
        }
        self.perform();
        true
    }

    /// Steps until `until` (exclusive of later events) or until nothing is left.
    pub fn run_until(&mut self, until: Millis) {
        loop {
            let next_reply = self.pending.keys().next().map(|(at, _)| *at);
            let next = [next_reply, self.ladder.poll_timeout()]
                .into_iter()
                .flatten()
                .min();
            match next {
                Some(at) if at <= until => {
                    self.step();
                }
                _ => break,
            }
        }
        self.now = self.now.max(until);
    }

    /// Steps until nothing is left, at most `limit` steps.
    pub fn drive(&mut self, limit: usize) {
        for _ in 0..limit {
            if !self.step() {
                return;
            }
        }
        panic!("the simulation did not settle in {limit} steps");
    }

    pub fn calls_for(&self, turn_id: &str) -> usize {
        self.calls
            .iter()
            .filter(|call| call.turn_id == turn_id)
            .count()
    }

    pub fn spoken_for(&self, turn_id: &str) -> Vec<&Spoken> {
        self.spoken
            .iter()
            .filter(|spoken| match spoken {
                Spoken::Answer(id, _) | Spoken::Recovery(id, _) => id == turn_id,
            })
            .collect()
    }
}
