//! Issue 18 on the sans-IO core: streamed speech. The schedule plays a stream part by part and
//! holds the next sentence until it closes; heard text of a sentence cut while its stream was
//! still arriving is estimated from the session's measured speech rate and never counts more
//! words than the audio clock allows (P3); a stream that fails or stalls skips its sentence and
//! the turn goes on.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use turnguard::core::time::Millis;
use turnguard::core::voice::playback::{ChunkHeard, PlaybackSchedule};
use turnguard::core::voice::{
    VoiceAction, VoiceConfig, VoiceCore, VoiceEvent, VoiceState, DEFAULT_MS_PER_CHAR,
};

const RECOVERY: &str = "Sorry, could you say that again?";
/// 19 characters, 4 words.
const ONE: &str = "One two three four.";
/// 24 characters, 5 words.
const TWO: &str = "Take one two three four.";

fn t(ms: u64) -> Millis {
    Millis(ms)
}

fn core() -> VoiceCore {
    let mut core = VoiceCore::new(VoiceConfig {
        min_partial_chars: 1,
        echo_guard_ms: 0,
        ..VoiceConfig::new(RECOVERY)
    });
    core.start();
    drain(&mut core);
    core
}

fn drain(core: &mut VoiceCore) -> Vec<VoiceAction> {
    std::iter::from_fn(|| core.poll_action()).collect()
}

fn heard_after(core: &mut VoiceCore, measured: &[(u64, ChunkHeard)]) -> Option<String> {
    let mut heard = None;
    while let Some(action) = core.poll_action() {
        match action {
            VoiceAction::StopPlayback { turn_id } => core.on_playback_stopped(&turn_id, measured),
            VoiceAction::SetHeard { text, .. } => heard = Some(text),
            _ => {}
        }
    }
    heard
}

fn chunk(seq: u64, duration_ms: f64, played_ms: f64) -> ChunkHeard {
    ChunkHeard {
        seq,
        duration_ms,
        played_ms,
    }
}

/// Two sentences; the first one's synthesize resolved with a stream that is playing.
fn streaming_first_of_two(core: &mut VoiceCore) {
    core.on_final("tell me", t(0));
    core.on_sentence("turn-1", ONE, t(1));
    core.on_sentence("turn-1", TWO, t(1));
    core.on_accepted("turn-1", t(1));
    core.on_synthesized(1, true, t(2));
    core.on_stream_opened(1);
    core.on_playback_started("turn-1", t(3));
    drain(core);
}

#[test]
fn a_stream_cut_before_its_end_arrived_counts_words_against_the_estimate_not_what_arrived() {
    let mut core = core();
    streaming_first_of_two(&mut core);
    // 400 ms arrived and all of it played: the stream is behind, the sentence is not over.
    core.on_speech_start(t(500));
    core.on_partial("wait", t(500)); // confirms the pause (V7)
    let heard = heard_after(&mut core, &[(1, chunk(0, 400.0, 400.0))]);
    // Unmeasured session: 19 chars × 90 ms = 1710 ms; 400/1710 of 4 words → 0 words.
    const { assert!(DEFAULT_MS_PER_CHAR * 19.0 > 1600.0) };
    assert_eq!(heard.as_deref(), Some(""));
}

#[test]
fn the_estimate_uses_the_sessions_measured_speech_rate() {
    let mut core = core();
    streaming_first_of_two(&mut core);
    // The first sentence played in full: 19 chars in 950 ms → 50 ms a character.
    core.on_stream_closed(1);
    core.on_audio_measured(1, 950.0);
    core.on_chunk_ended(1, t(1000));
    core.on_synthesized(2, true, t(1000));
    core.on_stream_opened(2);
    drain(&mut core);
    assert!((core.estimated_ms(TWO) - 24.0 * 50.0).abs() < 1e-9);
    core.on_speech_start(t(1700));
    core.on_partial("wait", t(1700)); // confirms the pause (V7)
                                      // 600 ms played of an estimated 1200 ms: 5 words × 0.5 → 2 words.
    let heard = heard_after(&mut core, &[(2, chunk(0, 600.0, 600.0))]);
    assert_eq!(heard.as_deref(), Some("One two three four. Take one"));
}

#[test]
fn a_stream_that_arrived_whole_is_measured_by_its_own_length() {
    let mut core = core();
    streaming_first_of_two(&mut core);
    core.on_stream_closed(1);
    drain(&mut core);
    core.on_speech_start(t(400));
    core.on_partial("wait", t(400)); // confirms the pause (V7)
                                     // All 800 ms arrived; 400 played: half of 4 words.
    let heard = heard_after(&mut core, &[(1, chunk(0, 800.0, 400.0))]);
    assert_eq!(heard.as_deref(), Some("One two"));
}

#[test]
fn never_more_words_than_the_audio_clock_allows_even_when_the_estimate_is_short() {
    let mut core = core();
    streaming_first_of_two(&mut core);
    core.on_audio_measured(1, 1.0); // an absurd measurement: 0.05 ms a character
    core.on_speech_start(t(400));
    core.on_partial("wait", t(400)); // confirms the pause (V7)
                                     // What arrived (1000 ms) bounds the length from below: 300/1000 of 4 words → 1 word.
    let heard = heard_after(&mut core, &[(1, chunk(0, 1000.0, 300.0))]);
    assert_eq!(heard.as_deref(), Some("One"));
}

#[test]
fn a_stalled_stream_skips_its_sentence_and_the_turn_goes_on() {
    let mut core = core();
    streaming_first_of_two(&mut core);
    core.on_stream_failed(1, true, t(9000));
    let actions = drain(&mut core);
    assert!(actions.iter().any(|a| matches!(
        a,
        VoiceAction::Event(VoiceEvent::TtsFailed {
            index: 0,
            code: "tts_timeout",
            ..
        })
    )));
    assert_eq!(core.state(), VoiceState::Speaking, "the turn goes on");
    // The next sentence was requested as look-ahead while the first streamed.
    core.on_synthesized(2, true, t(9100));
    assert!(drain(&mut core)
        .iter()
        .any(|a| matches!(a, VoiceAction::Play { job: 2, .. })));
    core.on_chunk_ended(2, t(10_000));
    drain(&mut core);
    assert_eq!(core.state(), VoiceState::Listening, "the turn ended spoken");
}

#[test]
fn a_stream_that_broke_after_it_sounded_ends_the_heard_text_there() {
    let mut core = core();
    streaming_first_of_two(&mut core);
    core.on_sentence_audio(1, 0.0, t(150)); // the first sentence sounds
    core.on_stream_failed(1, true, t(600)); // then its stream stalls: the turn goes on
                                            // What arrived of it plays out; it measures nothing of the speech rate.
    core.on_audio_measured(1, 300.0);
    core.on_chunk_ended(1, t(700));
    core.on_synthesized(2, true, t(700));
    drain(&mut core);
    assert!((core.estimated_ms(TWO) - DEFAULT_MS_PER_CHAR * 24.0).abs() < 1e-9);
    core.on_speech_start(t(900));
    core.on_partial("wait", t(900)); // confirms the pause (V7)
                                     // The user heard part of ONE, a gap, then part of TWO: no prefix of the answer says that
                                     // but the empty one. (Skipping ONE would have given "Take", which was never its start.)
    let heard = heard_after(&mut core, &[(2, chunk(1, 1000.0, 200.0))]);
    assert_eq!(heard.as_deref(), Some(""));
}

#[test]
fn a_broken_stream_still_playing_at_the_cut_counts_its_words_but_never_all_of_them() {
    let mut core = core();
    streaming_first_of_two(&mut core);
    // ONE plays in full: 19 characters in 380 ms, 20 ms a character.
    core.on_stream_closed(1);
    core.on_audio_measured(1, 380.0);
    core.on_chunk_ended(1, t(400));
    core.on_synthesized(2, true, t(400));
    core.on_stream_opened(2);
    core.on_sentence_audio(2, 0.0, t(400));
    // TWO (estimated 480 ms) had 800 ms arrive, all of it played, when its stream broke.
    core.on_stream_failed(2, false, t(1200));
    drain(&mut core);
    core.on_speech_start(t(1210));
    core.on_partial("wait", t(1210)); // confirms the pause (V7)
    let heard = heard_after(&mut core, &[(2, chunk(1, 800.0, 800.0))]);
    assert_eq!(
        heard.as_deref(),
        Some("One two three four. Take one two three")
    );
}

#[test]
fn every_stream_failing_speaks_the_recovery_text() {
    let mut core = core();
    core.on_final("tell me", t(0));
    core.on_sentence("turn-1", ONE, t(1));
    core.on_accepted("turn-1", t(1));
    core.on_synthesized(1, true, t(2));
    core.on_stream_opened(1);
    drain(&mut core);
    core.on_stream_failed(1, false, t(50));
    let actions = drain(&mut core);
    assert!(actions
        .iter()
        .any(|a| matches!(a, VoiceAction::Synthesize { recovery: true, .. })));
}

#[test]
fn the_schedule_plays_a_stream_of_many_parts_gapless_then_the_next_sentence() {
    let mut schedule = PlaybackSchedule::new();
    let one = schedule.enqueue("turn-1").unwrap_or_default();
    let two = schedule.enqueue("turn-1").unwrap_or_default();
    let mut starts = Vec::new();
    for part in 0..10 {
        assert!(schedule.append(one, 0.05));
        for scheduled in schedule.schedule(f64::from(part) * 0.01, true) {
            assert_eq!(scheduled.gap_ms, 0.0);
            starts.push(scheduled.start);
        }
    }
    assert!(schedule.decoded(two, 1.0));
    assert!(
        schedule.schedule(0.2, true).is_empty(),
        "waits for the close"
    );
    schedule.close(one, 0.2);
    let next = schedule.schedule(0.2, true);
    assert_eq!(next.len(), 1);
    assert!(
        (next[0].start - 0.5).abs() < 1e-9,
        "right after the stream's 10 parts"
    );
    for (index, start) in starts.iter().enumerate() {
        assert!((start - index as f64 * 0.05).abs() < 1e-9);
    }
}
