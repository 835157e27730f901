//! The browser shell: `#[wasm_bindgen]` classes that drive the sans-IO core with real browser I/O.
//!
//! Every JS callback is invoked with no `RefCell` borrow held: the core queues actions, and the
//! shell performs them one at a time after releasing the core, so a callback may call back into
//! the object that called it.

#[cfg(feature = "controller")]
mod answer_stream;
#[cfg(feature = "voice")]
mod audio;
#[cfg(feature = "voice")]
mod audio_stream;
mod callbacks;
#[cfg(feature = "controller")]
mod chat_request;
mod clock;
#[cfg(feature = "controller")]
pub mod controller;
#[cfg(feature = "controller")]
mod controller_options;
mod convert;
mod driver;
mod glue;
#[cfg(feature = "voice")]
mod id_map;
mod js_object;
#[cfg(feature = "transcriber")]
pub mod microphone;
#[cfg(feature = "voice")]
pub mod player;
#[cfg(feature = "transcriber")]
pub mod policy;
#[cfg(feature = "controller")]
mod promise;
#[cfg(feature = "controller")]
mod report;
#[cfg(feature = "controller")]
pub mod routes;
#[cfg(feature = "voice")]
pub mod session;
#[cfg(feature = "voice")]
pub mod speech_route;
mod timer;
#[cfg(feature = "transcriber")]
mod track_reader;
#[cfg(feature = "transcriber")]
pub mod transcriber;
mod types;

#[cfg(feature = "controller")]
pub use controller::TurnController;
#[cfg(feature = "voice")]
pub use player::SpeechPlayer;
#[cfg(feature = "transcriber")]
pub use policy::ReconnectPolicy;
#[cfg(feature = "controller")]
pub use routes::{open_ai_compatible_route, ChatStreamDecoder};
#[cfg(feature = "voice")]
pub use session::VoiceSession;
#[cfg(all(feature = "transcriber", turnguard_gladia))]
pub use transcriber::gladia_provisioner;
#[cfg(feature = "transcriber")]
pub use transcriber::LiveTranscriber;
