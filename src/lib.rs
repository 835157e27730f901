//! # turnguard
//!
//! The reliability layer of a voice agent that runs in a web page. It keeps four promises under
//! failure:
//!
//! 1. **One answer per user turn, never a stale one.** [`core::turn::TurnLadder`] runs a bounded
//!    ladder of LLM attempts per final utterance (primary route, then one fallback only after a
//!    retryable failure), with a turn deadline, a per-attempt abort chained to the turn's, and an
//!    acceptance gate: per turn exactly one answer, or the fixed recovery text, or nothing when
//!    interrupted.
//! 2. **Bounded cost.** Attempts per turn, attempts per session, and a retry budget across turns.
//! 3. **Honest reconnects** of the live speech-to-text socket.
//! 4. **Silence on barge-in.**
//!
//! ## Layout
//!
//! - [`core`] — sans-IO state machines. Every input carries the current time as
//!   [`core::time::Millis`]; outputs are pulled. They never read a clock or call out.
//! - `web` (wasm32 only) — the `#[wasm_bindgen]` classes that drive the core with real browser I/O:
//!   `fetch`, `AbortController`, timers. Every JS callback runs with no Rust borrow held, so a
//!   callback may call back into the same object.
//!
//! ## Driving the turn ladder
//!
//! ```
//! use turnguard::core::turn::record::{Failure, TurnStatus};
//! use turnguard::core::time::Millis;
//! use turnguard::core::turn::{Action, RouteSpec, TurnConfig, TurnLadder};
//!
//! let routes = vec![RouteSpec::named("primary"), RouteSpec::named("fallback")];
//! let mut ladder = TurnLadder::new(TurnConfig::new(routes, "Sorry, say that again?"));
//! ladder.start_turn("t1", "hello", Millis(0)).unwrap();
//!
//! // The shell's loop: perform every action, then sleep until `poll_timeout()`.
//! let mut spoken = Vec::new();
//! let mut now = Millis(0);
//! loop {
//!     while let Some(action) = ladder.poll_action() {
//!         match action {
//!             Action::StartAttempt { request_id, route, .. } => {
//!                 // Here the shell calls the route; this one: the primary fails, the fallback answers.
//!                 let outcome = if route == 0 { Err(Failure::Network) } else { Ok("Hi!".into()) };
//!                 ladder.on_attempt_result(&request_id, outcome, now);
//!             }
//!             Action::Deliver { text, .. } | Action::Recover { text, .. } => spoken.push(text),
//!             _ => {}
//!         }
//!     }
//!     match ladder.poll_timeout() {
//!         Some(at) => { now = at; ladder.handle_timeout(now); }
//!         None => break,
//!     }
//! }
//! assert_eq!(spoken, ["Hi!"]);
//! assert_eq!(ladder.turn("t1").unwrap().status, TurnStatus::Accepted);
//! ```

// `core` and `alloc` only: the `std` feature links the standard library for tests and for a
// plain `cargo build`; the shipped build leaves it out and panics through the handler below.
#![cfg_attr(not(test), no_std)]
// A panic poisons the wasm module for the whole page: panicking shortcuts are bugs here.
#![warn(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod core;

/// The shipped build's panic handler. No panic is reachable from the API (the lints above); if
/// one were, the module stops here, as with `panic = "abort"`, without formatting a message
/// nobody reads: that formatting is what linked `core::fmt` into every entry.
#[cfg(all(target_arch = "wasm32", not(feature = "std"), not(test)))]
#[panic_handler]
fn panic(_: &::core::panic::PanicInfo) -> ! {
    ::core::arch::wasm32::unreachable()
}

// Talc instead of the default dlmalloc: smaller and faster on wasm32 (see the README), with a
// free list per small size in front of it; the module holds the `#[global_allocator]`.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
mod allocator;

#[cfg(target_arch = "wasm32")]
pub mod web;
