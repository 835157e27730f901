//! Preemptive attempts in a voice session (T17): Deepgram Flux's `EagerEndOfTurn` and the
//! session's own guess (a partial still for `eagerSilenceMs`) start the next turn's first attempt
//! before its final; the final keeps it or a changed text, `TurnResumed` or new speech discards
//! it; nothing of it is synthesized before the final.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use turnguard::core::stt::protocol::Profile;
use turnguard::core::stt::protocols::deepgram_flux::PROFILE as FLUX;
use turnguard::core::stt::protocols::gladia::PROFILE as GLADIA;
use turnguard::core::stt::transcriber::{Transcriber, TranscriberConfig};
use turnguard::core::time::Millis;
use turnguard::core::turn::record::{AttemptResult, TurnStatus};
use turnguard::core::turn::{self as ladder, AttemptId, RouteSpec, TurnConfig, TurnLadder};
use turnguard::core::voice::latency::{Preemption, TurnLatency};
use turnguard::core::voice::session::{SessionAction, SessionCore};
use turnguard::core::voice::{VoiceAction, VoiceConfig, VoiceCore, VoiceEvent};

const RECOVERY: &str = "Sorry, could you say that again?";
const SILENCE_MS: u64 = 300;

fn session(profile: &'static Profile) -> SessionCore {
    let mut turns = TurnConfig::new(vec![RouteSpec::named("primary")], RECOVERY);
    turns.emit_events = true;
    let voice = VoiceConfig {
        session_id: Some("s".into()),
        ..VoiceConfig::new(RECOVERY)
    };
    let stt = Transcriber::new(TranscriberConfig::new(profile));
    let mut session = SessionCore::new(TurnLadder::new(turns), VoiceCore::new(voice), Some(stt));
    session.enable_preemptive(SILENCE_MS);
    session.start(Millis(0));
    session.transcriber_at(Millis(0)).unwrap().start(Millis(0));
    drain(&mut session);
    let stt = session.transcriber_at(Millis(5)).unwrap();
    stt.on_provisioned("wss://stt.example/listen?token=one", Millis(5));
    drain(&mut session);
    session
        .transcriber_at(Millis(6))
        .unwrap()
        .on_open(Millis(6));
    drain(&mut session);
    session
}

fn drain(session: &mut SessionCore) -> Vec<SessionAction> {
    std::iter::from_fn(|| session.poll_action()).collect()
}

fn hear(session: &mut SessionCore, message: &str, at: u64) -> Vec<SessionAction> {
    session
        .transcriber_at(Millis(at))
        .unwrap()
        .on_text(message, Millis(at));
    drain(session)
}

fn wait(session: &mut SessionCore, at: u64) -> Vec<SessionAction> {
    session.handle_timeout(Millis(at));
    drain(session)
}

fn route_calls(actions: &[SessionAction]) -> Vec<AttemptId> {
    actions
        .iter()
        .filter_map(|action| match action {
            SessionAction::Turn(ladder::Action::StartAttempt { request_id, .. }) => {
                Some(request_id.clone())
            }
            _ => None,
        })
        .collect()
}

fn aborted(actions: &[SessionAction]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|action| match action {
            SessionAction::Turn(ladder::Action::AbortAttempt { request_id }) => {
                Some(request_id.as_str().to_owned())
            }
            _ => None,
        })
        .collect()
}

fn synthesized(actions: &[SessionAction]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|action| match action {
            SessionAction::Voice(VoiceAction::Synthesize { text, .. }) => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn gladia(text: &str, is_final: bool) -> String {
    format!(
        r#"{{"type":"transcript","data":{{"is_final":{is_final},"utterance":{{"text":"{text}"}}}}}}"#
    )
}

fn flux(event: &str, index: u64, transcript: &str) -> String {
    format!(
        r#"{{"type":"TurnInfo","request_id":"r","sequence_id":1,"event":"{event}","turn_index":{index},"audio_window_start":0.0,"audio_window_end":1.0,"transcript":"{transcript}","words":[],"end_of_turn_confidence":0.5}}"#
    )
}

#[test]
fn a_still_partial_starts_the_attempt_and_a_matching_final_keeps_it() {
    let mut s = session(&GLADIA);
    assert!(route_calls(&hear(&mut s, &gladia("what is the weather", false), 100)).is_empty());
    assert_eq!(s.poll_timeout(), Some(Millis(100 + SILENCE_MS)));
    let actions = wait(&mut s, 100 + SILENCE_MS);
    let calls = route_calls(&actions);
    assert_eq!(
        calls.iter().map(|id| id.as_str()).collect::<Vec<_>>(),
        ["s:turn-1:preemptive:1"]
    );
    // The answer comes before the final: held, nothing synthesized.
    s.ladder_at(Millis(500))
        .on_attempt_result(&calls[0], Ok("It is sunny.".into()), Millis(500));
    let actions = drain(&mut s);
    assert!(synthesized(&actions).is_empty(), "nothing before the final");
    let actions = hear(&mut s, &gladia("What is the weather?", true), 600);
    assert!(route_calls(&actions).is_empty(), "no second request");
    assert_eq!(synthesized(&actions), ["It is sunny."]);
    let record = s.ladder().turn("s:turn-1").unwrap();
    assert_eq!(record.status, TurnStatus::Accepted);
    assert_eq!(record.input, "What is the weather?");
    assert!(record.attempts[0].preemptive);
}

#[test]
fn a_partial_that_goes_on_withdraws_the_guess_and_the_final_runs_its_own_attempt() {
    let mut s = session(&GLADIA);
    hear(&mut s, &gladia("book a table", false), 100);
    let first = route_calls(&wait(&mut s, 100 + SILENCE_MS));
    assert_eq!(first.len(), 1);
    let actions = hear(&mut s, &gladia("book a table for two", false), 500);
    assert_eq!(
        aborted(&actions),
        [first[0].as_str()],
        "a changed partial discards it"
    );
    let actions = hear(&mut s, &gladia("book a table for two", true), 600);
    let calls = route_calls(&actions);
    assert_eq!(
        calls.iter().map(|id| id.as_str()).collect::<Vec<_>>(),
        ["s:turn-1:attempt:1"]
    );
    // The discarded attempt answers anyway: never spoken.
    s.ladder_at(Millis(700))
        .on_attempt_result(&first[0], Ok("Wrong answer.".into()), Millis(700));
    s.ladder_at(Millis(800))
        .on_attempt_result(&calls[0], Ok("Done.".into()), Millis(800));
    assert_eq!(synthesized(&drain(&mut s)), ["Done."]);
    let record = s.ladder().turn("s:turn-1").unwrap();
    assert_eq!(record.attempts[0].result, AttemptResult::Discarded);
}

#[test]
fn fluxs_eager_end_of_turn_starts_it_and_turn_resumed_discards_it() {
    let mut s = session(&FLUX);
    hear(&mut s, &flux("StartOfTurn", 0, ""), 50);
    hear(&mut s, &flux("Update", 0, "turn on"), 100);
    let calls = route_calls(&hear(&mut s, &flux("EagerEndOfTurn", 0, "turn on"), 150));
    assert_eq!(
        calls.iter().map(|id| id.as_str()).collect::<Vec<_>>(),
        ["s:turn-1:preemptive:1"],
        "the provider's guess, without waiting for a still partial"
    );
    let actions = hear(&mut s, &flux("TurnResumed", 0, "turn on"), 200);
    assert_eq!(aborted(&actions), ["s:turn-1:preemptive:1"]);
    hear(&mut s, &flux("Update", 0, "turn on the lights"), 300);
    let calls = route_calls(&hear(
        &mut s,
        &flux("EagerEndOfTurn", 0, "turn on the lights"),
        350,
    ));
    assert_eq!(
        calls.iter().map(|id| id.as_str()).collect::<Vec<_>>(),
        ["s:turn-1:preemptive:2"]
    );
    let actions = hear(&mut s, &flux("EndOfTurn", 0, "turn on the lights"), 600);
    assert!(route_calls(&actions).is_empty(), "the second guess is kept");
    s.ladder_at(Millis(700))
        .on_attempt_result(&calls[0], Ok("Lights on.".into()), Millis(700));
    assert_eq!(synthesized(&drain(&mut s)), ["Lights on."]);
}

#[test]
fn without_preemptive_nothing_starts_before_the_final() {
    let mut turns = TurnConfig::new(vec![RouteSpec::named("primary")], RECOVERY);
    turns.emit_events = true;
    let voice = VoiceConfig::new(RECOVERY);
    let stt = Transcriber::new(TranscriberConfig::new(&FLUX));
    let mut s = SessionCore::new(TurnLadder::new(turns), VoiceCore::new(voice), Some(stt));
    s.start(Millis(0));
    s.transcriber_at(Millis(0)).unwrap().start(Millis(0));
    drain(&mut s);
    s.transcriber_at(Millis(5))
        .unwrap()
        .on_provisioned("wss://stt.example/listen", Millis(5));
    drain(&mut s);
    s.transcriber_at(Millis(6)).unwrap().on_open(Millis(6));
    drain(&mut s);
    assert!(route_calls(&hear(&mut s, &flux("EagerEndOfTurn", 0, "turn on"), 150)).is_empty());
    hear(&mut s, &flux("Update", 0, "turn on"), 200);
    assert!(
        route_calls(&wait(&mut s, 200 + SILENCE_MS)).is_empty(),
        "no guess of its own"
    );
    assert_eq!(
        route_calls(&hear(&mut s, &flux("EndOfTurn", 0, "turn on"), 600)).len(),
        1
    );
}

#[test]
fn stopping_with_a_guess_standing_aborts_its_attempt() {
    let mut s = session(&GLADIA);
    hear(&mut s, &gladia("cancel my order", false), 100);
    let calls = route_calls(&wait(&mut s, 100 + SILENCE_MS));
    assert_eq!(calls.len(), 1);
    s.stop(Millis(500));
    let actions = drain(&mut s);
    assert!(actions.iter().any(|action| matches!(
        action,
        SessionAction::Turn(ladder::Action::AbortTurn { turn_id }) if turn_id == "s:turn-1"
    )));
    assert_eq!(
        s.ladder().turn("s:turn-1").unwrap().status,
        TurnStatus::Cancelled
    );
}

fn latencies(actions: &[SessionAction]) -> Vec<TurnLatency> {
    actions
        .iter()
        .filter_map(|action| match action {
            SessionAction::Voice(VoiceAction::Event(VoiceEvent::TurnLatency(latency))) => {
                Some((**latency).clone())
            }
            _ => None,
        })
        .collect()
}

fn job_of(actions: &[SessionAction]) -> u64 {
    actions
        .iter()
        .find_map(|action| match action {
            SessionAction::Voice(VoiceAction::Synthesize { job, .. }) => Some(*job),
            _ => None,
        })
        .unwrap()
}

#[test]
fn every_turn_reports_where_its_time_went_once() {
    let mut s = session(&GLADIA);
    hear(&mut s, &gladia("what time", false), 100);
    hear(&mut s, &gladia("what time is it", false), 180);
    let calls = route_calls(&wait(&mut s, 180 + SILENCE_MS));
    let actions = hear(&mut s, &gladia("What time is it?", true), 700);
    assert!(route_calls(&actions).is_empty());
    s.ladder_at(Millis(900))
        .on_attempt_chunk(&calls[0], "It is noon. And", Millis(900));
    let actions = drain(&mut s);
    let job = job_of(&actions);
    s.voice_at(Millis(960))
        .on_synthesized(job, true, Millis(960));
    assert!(
        latencies(&drain(&mut s)).is_empty(),
        "not before the first sound"
    );
    s.voice_at(Millis(970))
        .on_sentence_audio(job, 12.5, Millis(970));
    let reported = latencies(&drain(&mut s));
    assert_eq!(
        reported,
        [TurnLatency {
            turn_id: "s:turn-1".into(),
            speech_end_at: Some(Millis(180)),
            final_at: Some(Millis(700)),
            route_called_at: Some(Millis(480)),
            first_token_at: Some(Millis(900)),
            first_sentence_at: Some(Millis(900)),
            synthesize_at: Some(Millis(900)),
            first_audio_at: Some(Millis(960)),
            first_sound_at_us: Some(982_500),
            preemption: Preemption::Kept,
        }]
    );
    assert_eq!(reported[0].voice_to_voice_us(), Some(802_500));
    // The turn goes on and ends: nothing more is reported for it.
    s.ladder_at(Millis(1_000))
        .on_stream_end(&calls[0], Millis(1_000));
    s.stop(Millis(1_100));
    assert!(latencies(&drain(&mut s)).is_empty(), "once per turn");
}

#[test]
fn a_turn_cut_before_it_sounded_reports_what_it_reached() {
    let mut s = session(&GLADIA);
    let actions = hear(&mut s, &gladia("hello", true), 100);
    assert_eq!(route_calls(&actions).len(), 1);
    s.interrupt(Millis(300));
    let reported = latencies(&drain(&mut s));
    assert_eq!(reported.len(), 1);
    assert_eq!(reported[0].final_at, Some(Millis(100)));
    assert_eq!(
        reported[0].speech_end_at,
        Some(Millis(100)),
        "no partial: the final"
    );
    assert_eq!(reported[0].route_called_at, Some(Millis(100)));
    assert_eq!(reported[0].first_sound_at_us, None);
    assert_eq!(reported[0].preemption, Preemption::NotTried);
}

/// 20 ms frames from `from` ms: a tone (`loud`) or quiet room noise, fed to the session in time.
fn feed(session: &mut SessionCore, from: u64, ms: u64, loud: bool) -> Vec<SessionAction> {
    let mut actions = Vec::new();
    let mut seed = 0x9e37_79b9_u32 ^ from as u32;
    for frame in 0..ms / 20 {
        let start = from + frame * 20;
        let pcm: Vec<u8> = (0..320u64)
            .flat_map(|i| {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                let value = if loud {
                    let t = (start * 16 + i) as f64 / 16_000.0;
                    (0.3 * (2.0 * std::f64::consts::PI * 220.0 * t).sin() * 32767.0) as i16
                } else {
                    ((f64::from(seed) / f64::from(u32::MAX) - 0.5) * 100.0) as i16
                };
                value.to_le_bytes()
            })
            .collect();
        let now = Millis(start + 20);
        session.handle_timeout(now);
        session.on_audio(pcm, now);
        actions.extend(drain(session));
    }
    actions
}

fn voice_events(actions: &[SessionAction]) -> Vec<(bool, u64)> {
    actions
        .iter()
        .filter_map(|action| match action {
            SessionAction::Voice(VoiceAction::Event(VoiceEvent::Voice { speaking, audio_ms })) => {
                Some((*speaking, *audio_ms))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn the_voice_detector_reports_speech_and_a_guess_waits_for_its_silence() {
    let mut s = session(&GLADIA);
    assert!(
        voice_events(&feed(&mut s, 0, 500, false)).is_empty(),
        "room noise"
    );
    let spoken = feed(&mut s, 500, 600, true);
    assert_eq!(voice_events(&spoken), [(true, 500)]);
    hear(&mut s, &gladia("book a table", false), 1_000);
    // Still talking past eagerSilenceMs after the partial: no guess while the voice goes on.
    assert!(route_calls(&spoken).is_empty());
    let quiet = feed(&mut s, 1_100, 800, false);
    assert_eq!(
        voice_events(&quiet),
        [(false, 1_100)],
        "the voice ended where the tone did"
    );
    let calls = route_calls(&quiet);
    assert_eq!(
        calls.len(),
        1,
        "a guess once the silence lasted eagerSilenceMs"
    );
    // The guess came 300 ms after the silence began (1100 ms), not after the partial (1000 ms).
    let record = s.ladder().turn("s:turn-1").unwrap();
    assert!(
        record.attempts[0].started_at >= Millis(1_400),
        "{:?}",
        record.attempts[0].started_at
    );
    // The final: kept, and the latency record's speech end is the detector's.
    hear(&mut s, &gladia("book a table", true), 2_000);
    let record = s.ladder().turn("s:turn-1").unwrap();
    assert_eq!(record.attempts.len(), 1);
    s.interrupt(Millis(2_100));
    let reported = latencies(&drain(&mut s));
    assert_eq!(reported[0].speech_end_at, Some(Millis(1_100)));
}

fn barge_ins(actions: &[SessionAction]) -> usize {
    actions
        .iter()
        .filter(|action| {
            matches!(
                action,
                SessionAction::Voice(VoiceAction::Event(VoiceEvent::BargeIn { .. }))
            )
        })
        .count()
}

fn echo_raised(actions: &[SessionAction]) -> Option<bool> {
    actions.iter().find_map(|action| match action {
        SessionAction::Voice(VoiceAction::Event(VoiceEvent::Echo { raised, .. })) => Some(*raised),
        _ => None,
    })
}

/// V8 in a whole session: without a canceller the agent's answer comes back louder than it was
/// played (a capture's gain control). The provider's words about that echo cut nothing while it
/// sounds, and after it a still partial starts no preemptive attempt and the final no turn.
#[test]
fn an_echo_that_passes_for_voice_cuts_nothing_and_starts_no_turn() {
    let mut s = session(&GLADIA);
    s.set_echo_canceller(false); // what the capture's getSettings() says
    feed(&mut s, 0, 500, false);
    let calls = route_calls(&hear(&mut s, &gladia("What time is it?", true), 600));
    s.ladder_at(Millis(700))
        .on_attempt_chunk(&calls[0], "It is noon.", Millis(700));
    s.ladder_at(Millis(700))
        .on_stream_end(&calls[0], Millis(700));
    let job = job_of(&drain(&mut s));
    s.on_output_level(-20.0, -10.0);
    s.voice_at(Millis(800))
        .on_synthesized(job, true, Millis(800));
    s.voice_at(Millis(800))
        .on_playback_started("s:turn-1", Millis(800));
    drain(&mut s);
    // The agent sounds; the microphone hears it (a tone at -13.5 dBFS).
    let actions = feed(&mut s, 800, 1_400, true);
    assert_eq!(
        echo_raised(&actions),
        Some(true),
        "the echo passes for voice"
    );
    assert!(voice_events(&actions).is_empty(), "the echo is no voice");
    let mut actions = hear(&mut s, &gladia("it is new", false), 2_200);
    actions.extend(hear(&mut s, &gladia("it is noon", true), 2_300));
    assert_eq!(barge_ins(&actions), 0, "the echo's words cut nothing");
    // The answer ends; the recognizer's words about its echo come on after it.
    s.voice_at(Millis(2_400)).on_chunk_ended(job, Millis(2_400));
    drain(&mut s);
    let mut actions = feed(&mut s, 2_400, 200, false);
    actions.extend(hear(&mut s, &gladia("it is noon and", false), 2_600));
    actions.extend(wait(&mut s, 2_600 + SILENCE_MS + 50));
    actions.extend(hear(&mut s, &gladia("It is noon and.", true), 3_100));
    assert!(route_calls(&actions).is_empty(), "no guess, no turn");
    // The user, after the words' tail: a turn as always.
    feed(&mut s, 3_100, 2_600, false);
    let actions = hear(&mut s, &gladia("Thanks!", true), 5_800);
    assert_eq!(route_calls(&actions).len(), 1);
}
