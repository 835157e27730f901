//! The conformance suite every speech-to-text protocol runs (`tests/protocols.rs`): scenarios over
//! the neutral events, each run against every protocol's [`Fixture`], the message script of its
//! server. A scenario that does not apply to a protocol is skipped by what its profile or fixture
//! says (a keepalive, a receipt window, a message that ends the session), never by its name.

#![allow(dead_code)]

mod audio;
mod connections;
mod conversation;
mod stop;
mod utterances;

pub use conversation::Conversation;

use turnguard::core::stt::protocol::{CloseClass, Profile};

/// One utterance as a scenario says it: what the server's messages for it are about.
#[derive(Clone, Copy, Debug)]
pub struct Said {
    /// Counts utterances from 0 across connections (ids such as OpenAI's items never repeat).
    pub id: u64,
    /// Counts utterances from 0 on this connection (turn numbers start again with a session).
    pub turn: u64,
    /// The words, as the one final must carry them.
    pub text: &'static str,
    /// Where the words lie on this connection's audio clock, in milliseconds.
    pub start_ms: u64,
    pub end_ms: u64,
}

impl Said {
    /// The first word.
    pub fn first_word(&self) -> &'static str {
        self.text.split_whitespace().next().unwrap_or("")
    }
}

/// The message a protocol sends first on every connection.
#[derive(Clone, Copy, Debug)]
pub struct Start {
    /// How it begins.
    pub prefix: &'static str,
    /// A `config` object `provision()` may give: its members end the message.
    pub config: &'static str,
}

/// Closes with these codes and what they mean, after the message the server sent right before
/// them, if any.
#[derive(Clone, Copy, Debug)]
pub struct CloseCase {
    pub before: Option<&'static str>,
    pub codes: &'static [u16],
    pub class: CloseClass,
}

impl CloseCase {
    /// Closes whose code alone says what they mean.
    pub const fn codes(codes: &'static [u16], class: CloseClass) -> CloseCase {
        CloseCase {
            before: None,
            codes,
            class,
        }
    }

    /// Closes that mean what the message before them says.
    pub const fn after(
        before: &'static str,
        codes: &'static [u16],
        class: CloseClass,
    ) -> CloseCase {
        CloseCase {
            before: Some(before),
            codes,
            class,
        }
    }
}

/// One protocol's server, as the suite needs it: its message script and what to expect of the
/// client. Every `tests/protocols/<name>.rs` holds one as `pub const FIXTURE`; `build.rs` lists
/// them into `FIXTURES`.
#[derive(Debug)]
pub struct Fixture {
    /// The protocol under test.
    pub profile: &'static Profile,
    /// A URL `provision()` gives (the suite adds `n=<count>` for the fresh ones).
    pub url: &'static str,
    /// The message sent first on every connection, where the protocol has one.
    pub start: Option<Start>,
    /// The server's answer to the start that lets audio flow, where the profile's
    /// `audio_after_start`.
    pub started: Option<&'static str>,
    /// Every message the server sends for one utterance, in order, traps included (a second
    /// `end_of_turn`, an `UtteranceEnd` after `speech_final`, a repeated completion, a commit's
    /// twin): the client makes exactly one final of them, with the utterance's text. Its words
    /// are finalized up to `end_ms` (L4).
    pub utterance: fn(&Said) -> Vec<String>,
    /// A caption of the utterance under way, with its whole text: a partial, never a final.
    pub partial: fn(&Said) -> String,
    /// Words finalized without ending their utterance, where the protocol finalizes pieces:
    /// they start the utterance's final, even across a drop.
    pub piece: Option<fn(&Said) -> Vec<String>>,
    /// The user started talking, where the protocol says so.
    pub speech_start: Option<fn(&Said) -> String>,
    /// The session acknowledges this many more bytes, where the watermark is acknowledged bytes.
    pub ack: Option<fn(u64) -> String>,
    /// The server received the first this many frames of this connection, where the profile has
    /// a receipt window.
    pub receipt: Option<fn(u64) -> String>,
    /// A message that ends the session in use, where the protocol has one.
    pub session_over: Option<&'static str>,
    /// The finish messages `stop()` sends once this many frames went out on the connection.
    pub finish: fn(u64) -> Vec<String>,
    /// What the server sends after the finish to end the stream; none: it closes the socket.
    pub end: &'static [&'static str],
    /// Closes and what each means; every code of the profile's table is among them.
    pub closes: &'static [CloseCase],
    /// Known messages of no use here: skipped, not counted.
    pub ignored: &'static [&'static str],
    /// Messages of types the protocol does not know: counted as unknown and skipped.
    pub unknown: &'static [&'static str],
    /// Messages of known types without what they need: counted as malformed and skipped.
    pub malformed: &'static [&'static str],
}

impl Fixture {
    /// The protocol's name.
    pub fn name(&self) -> &'static str {
        self.profile.name
    }

    /// The most frames of 20 ms a protocol may hold back at the end of the audio, waiting to
    /// make a frame of its smallest size.
    pub fn held_frames(&self) -> u32 {
        let min = self.profile.pacing.min_frame_ms.div_ceil(20);
        u32::try_from(min.saturating_sub(1)).unwrap_or(u32::MAX)
    }

    /// Bytes of 20 ms of audio on the wire.
    pub fn wire_frame_bytes(&self) -> usize {
        let rate = self.profile.sample_rate.unwrap_or(16_000);
        usize::try_from(rate / 50 * 2).unwrap_or(usize::MAX)
    }
}

/// Runs `scenario` on every fixture that `applies` to, and says which protocol runs (the name
/// shows with a failure). Returns how many ran.
pub fn every(applies: impl Fn(&Fixture) -> bool, scenario: impl Fn(&'static Fixture)) -> usize {
    let mut ran = 0;
    for fixture in crate::FIXTURES.iter().copied().filter(|f| applies(f)) {
        note(fixture.name());
        scenario(fixture);
        ran += 1;
    }
    assert!(ran > 0, "a scenario that runs on no protocol tests nothing");
    ran
}

/// Runs `scenario` on every fixture.
pub fn all(scenario: impl Fn(&'static Fixture)) -> usize {
    every(|_| true, scenario)
}

fn note(name: &str) {
    #[cfg(target_arch = "wasm32")]
    wasm_bindgen_test::console_log!("protocol: {name}");
    #[cfg(not(target_arch = "wasm32"))]
    println!("protocol: {name}");
}

/// Asserts that `frames` is the run `first..=last`, but for up to [`Fixture::held_frames`] at
/// its end that the protocol may still hold back.
#[track_caller]
pub fn assert_run(fixture: &Fixture, frames: &[u32], first: u32, last: u32, what: &str) {
    let name = fixture.name();
    let short = last.saturating_sub(fixture.held_frames());
    let end = frames.last().copied().unwrap_or(first.saturating_sub(1));
    let expected: Vec<u32> = (first..=end).collect();
    assert_eq!(frames, expected, "{name}: {what}");
    assert!(
        (short..=last).contains(&end),
        "{name}: {what}: up to {end}, not {last}"
    );
}
