//! The sans-IO core: state machines that take inputs with the current time and return actions.
//! No browser APIs, no clock, no unseeded randomness; built and tested natively and on wasm32.

pub mod backoff;
pub mod budget;
pub mod heard;
pub mod history;
pub(crate) mod json;
pub mod pcm;
pub mod playback;
pub mod reconnect;
pub mod record;
pub mod sentences;
pub mod sse;
pub mod stt;
pub mod time;
pub mod turn;
pub mod turn_config;
pub mod turn_output;
pub mod voice;

// The paths they had before `stt/` held them.
pub use stt::{gladia, transcriber};
