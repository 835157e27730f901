//! The sans-IO core: state machines that take inputs with the current time and return actions.
//! No browser APIs, no clock, no unseeded randomness; built and tested natively and on wasm32.
//!
//! - [`turn`]: the turn ladder (T1–T17) with its records, budgets, history, sentences and SSE;
//! - [`stt`]: live speech-to-text: the transcriber, its reconnect policy and the wire protocols;
//! - [`voice`]: the voice session (V1–V6) with its playback schedule and heard text;
//! - [`time`] and the JSON reader the protocols share.

pub(crate) mod json;
pub(crate) mod queue;
pub(crate) mod sorted_map;

pub mod stt;
pub(crate) mod text;
pub mod time;
pub mod turn;
pub mod voice;
