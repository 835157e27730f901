//! Gladia live v2: binary audio, one session across reconnects that acknowledges the bytes it
//! received, `stop_recording` answered by `end_recording`, `end_session`, every 4000–4999 close a
//! session over.

use crate::conformance::{CloseCase, Fixture, Said};
use crate::transcriber_sim::{ack, kind, transcript};
use turnguard::core::stt::protocol::CloseClass;
use turnguard::core::stt::protocols::gladia::{PROFILE, STOP_RECORDING};

pub const FIXTURE: Fixture = Fixture {
    profile: &PROFILE,
    url: "wss://stt.example/v2/live?token=one",
    start: None,
    started: None,
    utterance,
    partial: |said| transcript(false, said.text),
    piece: None,
    speech_start: Some(|_| kind("speech_start")),
    ack: Some(ack),
    receipt: None,
    session_over: Some(r#"{"type":"end_session"}"#),
    finish: |_| vec![STOP_RECORDING.into()],
    end: &[r#"{"type":"end_recording"}"#],
    closes: &[
        CloseCase::codes(&[1000, 3999, 5000], CloseClass::Retry),
        CloseCase::codes(&[4000, 4403, 4999], CloseClass::SessionOver),
    ],
    ignored: &[
        r#"{"type":"post_summarization","data":{}}"#,
        r#"{"type":"start_session","session_id":"s"}"#,
        r#"{"type":"speech_end","data":{"time":1.2}}"#,
        r#"{"type":"audio_chunk","acknowledged":false,"data":{"byte_range":[0,640]}}"#,
    ],
    unknown: &[r#"{"type":"brand_new_event","data":{}}"#],
    malformed: &[
        r#"{"type":"transcript","data":{"is_final":true}}"#,
        r#"{"type":"transcript""#,
        r#"{"data":{}}"#,
    ],
};

/// A caption, then the final: Gladia marks the one final itself.
fn utterance(said: &Said) -> Vec<String> {
    vec![
        transcript(false, said.first_word()),
        transcript(true, said.text),
    ]
}
