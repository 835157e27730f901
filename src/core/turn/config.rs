//! How a turn ladder is configured, and what starting a turn can answer.

use crate::core::text::decimal;
use crate::core::turn::budget::RetryBudget;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// What the ladder knows about a route. The shell keeps the callable part.
#[derive(Clone, Debug, PartialEq)]
pub struct RouteSpec {
    /// Shown in records and events.
    pub name: String,
    /// The voice and character this route answers in; `None` is a persona of its own (T11).
    pub persona: Option<String>,
    /// Whether the conversation history may be sent to this route (T11).
    pub share_history: bool,
}

impl RouteSpec {
    /// A route with no declared persona that gets no history.
    pub fn named(name: impl Into<String>) -> Self {
        RouteSpec {
            name: name.into(),
            persona: None,
            share_history: false,
        }
    }
}

/// Which fallbacks the ladder may take on its own (T11).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FallbackPolicy {
    /// Any route may answer after a retryable failure.
    #[default]
    Any,
    /// Only a route with the first route's persona; otherwise recovery with reason `persona`.
    SamePersona,
    /// No automatic second attempt at all (purchases, bookings, settings changes).
    None,
}

/// Limits and texts of one controller. [`TurnConfig::new`] fills in the defaults.
#[derive(Clone, Debug)]
pub struct TurnConfig {
    /// Routes in ladder order: attempt `n` uses route `min(n - 1, len - 1)`.
    pub routes: Vec<RouteSpec>,
    /// How long a turn may take before the recovery text is used (T5).
    pub turn_deadline_ms: u64,
    /// How long one attempt may take (T4); capped by the time left to the deadline.
    pub attempt_timeout_ms: u64,
    /// The fixed text spoken when no answer can be had (T8).
    pub recovery_text: String,
    /// Attempts per turn, the first included (T3).
    pub max_attempts_per_turn: u32,
    /// Attempts per session, `None` for no cap (T9).
    pub max_attempts_per_session: Option<u32>,
    /// Longest input accepted, in Unicode scalar values (T9).
    pub max_input_chars: usize,
    /// Settled records kept for `getTurn` and idempotent `run` (T10).
    pub history_limit: usize,
    /// Retry budget bucket size (T9).
    pub retry_max_tokens: f64,
    /// Retry budget refill per accepted answer (T9).
    pub retry_token_ratio: f64,
    /// Which fallbacks are allowed (T11).
    pub fallback_policy: FallbackPolicy,
    /// How long an attempt may take to produce its first text, from its start (T12).
    pub first_chunk_timeout_ms: u64,
    /// How long a committed stream may go without a chunk before it is ended (T12).
    pub chunk_idle_timeout_ms: u64,
    /// Longest answer, in Unicode scalar values: one that passes it is cut at its last complete
    /// sentence within it and its stream aborted (T15).
    pub max_answer_chars: usize,
    /// Most history handed to a route, in Unicode scalar values of `user` + `assistant` text;
    /// the oldest exchanges are left out first (T16).
    pub history_max_chars: usize,
    /// Whether `Action::Event`s are queued. A shell with no one listening turns them off, and a
    /// turn then allocates nothing for them.
    pub emit_events: bool,
    /// Whether `Action::Sentence`s are queued. Without them a whole answer within the bound is
    /// taken as it is, not split into sentences: the same accepted text, less work a turn.
    pub emit_sentences: bool,
}

impl TurnConfig {
    /// Default turn deadline.
    pub const DEFAULT_TURN_DEADLINE_MS: u64 = 12_000;
    /// Default attempt timeout.
    pub const DEFAULT_ATTEMPT_TIMEOUT_MS: u64 = 6_000;
    /// Default attempts per turn: the primary and one fallback.
    pub const DEFAULT_MAX_ATTEMPTS_PER_TURN: u32 = 2;
    /// Default input limit.
    pub const DEFAULT_MAX_INPUT_CHARS: usize = 4_000;
    /// Default number of settled records kept.
    pub const DEFAULT_HISTORY_LIMIT: usize = 1_000;
    /// Default idle time that ends a committed stream.
    pub const DEFAULT_CHUNK_IDLE_TIMEOUT_MS: u64 = 5_000;
    /// Default answer limit (T15).
    pub const DEFAULT_MAX_ANSWER_CHARS: usize = 4_000;
    /// Default history limit in characters (T16): room for two exchanges of the longest input
    /// and answer.
    pub const DEFAULT_HISTORY_MAX_CHARS: usize = 16_000;

    /// Characters of a route's text read past `max_answer_chars`, so that a sentence ending right
    /// at the bound (`3.` of `3.5`, a period before a lowercase word) can be told apart (T15).
    pub const ANSWER_LOOKAHEAD_CHARS: usize = 64;

    /// The most of a route's text the ladder reads for one answer, in Unicode scalar values. A
    /// shell may cut a longer chunk or answer to this many before handing it over: the outcome
    /// is the same, and a huge text is never copied whole.
    pub fn answer_read_chars(&self) -> usize {
        self.max_answer_chars
            .saturating_add(Self::ANSWER_LOOKAHEAD_CHARS)
    }

    /// A configuration with the default limits.
    pub fn new(routes: Vec<RouteSpec>, recovery_text: impl Into<String>) -> Self {
        TurnConfig {
            routes,
            turn_deadline_ms: Self::DEFAULT_TURN_DEADLINE_MS,
            attempt_timeout_ms: Self::DEFAULT_ATTEMPT_TIMEOUT_MS,
            recovery_text: recovery_text.into(),
            max_attempts_per_turn: Self::DEFAULT_MAX_ATTEMPTS_PER_TURN,
            max_attempts_per_session: None,
            max_input_chars: Self::DEFAULT_MAX_INPUT_CHARS,
            history_limit: Self::DEFAULT_HISTORY_LIMIT,
            retry_max_tokens: RetryBudget::DEFAULT_MAX_TOKENS,
            retry_token_ratio: RetryBudget::DEFAULT_TOKEN_RATIO,
            fallback_policy: FallbackPolicy::Any,
            first_chunk_timeout_ms: Self::DEFAULT_ATTEMPT_TIMEOUT_MS,
            chunk_idle_timeout_ms: Self::DEFAULT_CHUNK_IDLE_TIMEOUT_MS,
            max_answer_chars: Self::DEFAULT_MAX_ANSWER_CHARS,
            history_max_chars: Self::DEFAULT_HISTORY_MAX_CHARS,
            emit_events: true,
            emit_sentences: true,
        }
    }
}

/// Why `start_turn` refused a turn. Nothing was started.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StartError {
    /// The turn id is empty.
    EmptyTurnId,
    /// The input is empty or only white space.
    EmptyInput,
    /// The input is longer than `max_input_chars`.
    InputTooLong {
        /// Its length in Unicode scalar values.
        chars: usize,
        /// The configured limit.
        max: usize,
    },
}

impl StartError {
    /// The error's text, as the `RangeError` says it (built without `core::fmt`).
    pub fn message(&self) -> String {
        match self {
            StartError::EmptyTurnId => "turnId must not be empty".into(),
            StartError::EmptyInput => "input must not be empty".into(),
            StartError::InputTooLong { chars, max } => [
                "input is ",
                &decimal(*chars as u64),
                " characters, over maxInputChars (",
                &decimal(*max as u64),
                ")",
            ]
            .concat(),
        }
    }
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

/// What `start_turn` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Started {
    /// A new turn began.
    New,
    /// The id names a running or retained turn: nothing new began (T2).
    Existing,
    /// The final of a turn begun preemptively: its attempt was kept, or discarded and the
    /// ladder started (T17).
    Committed,
}
