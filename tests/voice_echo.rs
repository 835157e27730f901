//! The agent's echo measured at run time (V8): where the microphone hears the agent loud enough
//! to pass for voice, the detector's threshold rises above the loudest echo to expect while the
//! agent sounds, and the provider's words count only with voice heard above it; the user's louder
//! voice still counts. A working canceller changes nothing.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use turnguard::core::time::Millis;
use turnguard::core::voice::echo::{EchoMeter, EchoReport, MARGIN_DB, MEASURE_MS, WORDS_TAIL_MS};
use turnguard::core::voice::echo_words::RecentSpeech;
use turnguard::core::voice::vad::{VoiceChange, VoiceDetector, HANGOVER_MS};
use turnguard::core::voice::{
    BargeInCause, VoiceAction, VoiceConfig, VoiceCore, VoiceEvent, VoiceState,
};

const RATE: u32 = 16_000;
const SINCE: Millis = Millis(10_000);

/// `ms` of a 220 Hz tone at `db` dBFS (RMS).
fn tone(ms: u64, db: f64) -> Vec<u8> {
    let amplitude = 10f64.powf(db / 20.0) * std::f64::consts::SQRT_2;
    (0..u64::from(RATE) * ms / 1000)
        .flat_map(|i| {
            let phase = 2.0 * std::f64::consts::PI * 220.0 * i as f64 / f64::from(RATE);
            ((amplitude * phase.sin() * 32767.0) as i16).to_le_bytes()
        })
        .collect()
}

/// A detector that has heard a quiet room (its floor near -70 dBFS).
fn detector() -> VoiceDetector {
    let mut vad = VoiceDetector::new(RATE);
    vad.push(&tone(500, -70.0), |_| {});
    vad.take_heard(); // as the session does with every frame
    vad
}

/// A meter whose player plays speech at a mean of -20 dBFS with peaks of -10 dBFS.
fn meter() -> EchoMeter {
    let mut meter = EchoMeter::default();
    meter.on_output(-20.0, -10.0);
    meter
}

/// Feeds 20 ms frames at `db` from `from` for `ms` while the agent sounds since `SINCE`, as the
/// session does: the echo's floor set before each frame, what was heard measured after.
fn sound(
    meter: &mut EchoMeter,
    vad: &mut VoiceDetector,
    from: u64,
    ms: u64,
    db: f64,
) -> (Vec<VoiceChange>, Vec<EchoReport>) {
    sound_since(meter, vad, SINCE, from, ms, db)
}

fn sound_since(
    meter: &mut EchoMeter,
    vad: &mut VoiceDetector,
    since: Millis,
    from: u64,
    ms: u64,
    db: f64,
) -> (Vec<VoiceChange>, Vec<EchoReport>) {
    let (mut changes, mut reports) = (Vec::new(), Vec::new());
    for at in (from..from + ms).step_by(20) {
        let now = Millis(at);
        vad.set_echo_floor_db(meter.voice_floor_db(Some(since), now));
        vad.push(&tone(20, db), |change| changes.push(change));
        reports.extend(meter.observe(vad.take_heard(), Some(since), now));
    }
    (changes, reports)
}

fn started(changes: &[VoiceChange]) -> bool {
    changes
        .iter()
        .any(|change| matches!(change, VoiceChange::Started { .. }))
}

/// The agent's echo at -30 dBFS, 10 dB under the player, through a canceller that says it is on:
/// voice to a detector that knows only the room's noise. Returns the report and its frame's time.
fn a_loud_echo_measured(meter: &mut EchoMeter, vad: &mut VoiceDetector) -> (EchoReport, Millis) {
    // The first window had voice in it (the echo, or the user speaking over the start: the meter
    // cannot tell): its measure holds at once, unreported, until a window without voice.
    let (changes, reports) = sound(meter, vad, SINCE.0, MEASURE_MS + 20, -30.0);
    assert!(started(&changes), "{changes:?}");
    assert!(reports.is_empty(), "{reports:?}");
    let held = Millis(SINCE.0 + MEASURE_MS + 20);
    // The loudest echo to expect: the player's peak less the loss, -20 dBFS.
    let floor = meter.voice_floor_db(Some(SINCE), held);
    assert!(
        floor.is_some_and(|floor| (floor - (-20.0 + MARGIN_DB)).abs() < 0.5),
        "{floor:?}"
    );
    // Under that floor the detector's voice ends, and the next window measures the echo alone.
    let ms = HANGOVER_MS + MEASURE_MS + 40;
    let (_, reports) = sound(meter, vad, held.0 + 20, ms, -30.0);
    let [report] = reports.as_slice() else {
        panic!("one report: {reports:?}");
    };
    (*report, Millis(held.0 + ms)) // the last frame's time
}

#[test]
fn an_echo_loud_enough_for_voice_raises_the_threshold_and_the_users_louder_voice_still_counts() {
    let mut meter = meter();
    let mut vad = detector();
    let (report, measured) = a_loud_echo_measured(&mut meter, &mut vad);
    assert!((report.echo_db + 30.0).abs() < 0.5, "{report:?}");
    assert_eq!(report.return_loss_db.map(f64::round), Some(10.0));
    assert!(report.raised);
    let floor = meter.voice_floor_db(Some(SINCE), measured);
    assert!(
        floor.is_some_and(|floor| (floor - (-20.0 + MARGIN_DB)).abs() < 0.5),
        "{floor:?}"
    );
    // Past the measure: the echo at its loudest for seconds is not voice, and nothing is
    // reported again.
    let start = measured.0 + 20;
    let (changes, reports) = sound(&mut meter, &mut vad, start, 3_000, -20.0);
    assert!(reports.is_empty());
    assert!(!started(&changes), "{changes:?}");
    // The user, louder than the loudest echo by more than the margin: voice.
    let (changes, _) = sound(&mut meter, &mut vad, start + 3_000, 400, -8.0);
    assert!(started(&changes), "{changes:?}");
}

#[test]
fn the_echos_tail_and_the_words_about_it_outlast_the_agents_sound() {
    let mut meter = meter();
    let mut vad = detector();
    let (report, last) = a_loud_echo_measured(&mut meter, &mut vad);
    assert!(report.raised);
    let voice = vad.voice_threshold_db();
    assert!(meter.masks_words(Some(SINCE), last, voice));
    // The agent fell silent: the echo's floor for its tail, then none; the provider's words
    // about the echo are masked for their latency, then not.
    assert!(meter.voice_floor_db(None, last.after(100)).is_some());
    assert_eq!(meter.voice_floor_db(None, last.after(1_000)), None);
    assert!(meter.masks_words(None, last.after(WORDS_TAIL_MS - 20), voice));
    assert!(!meter.masks_words(None, last.after(WORDS_TAIL_MS + 20), voice));
}

#[test]
fn a_cancelled_echo_changes_nothing() {
    let mut meter = meter();
    let mut vad = detector();
    // What a working canceller leaves: under the room's noise.
    let (_, reports) = sound(&mut meter, &mut vad, SINCE.0, MEASURE_MS + 20, -75.0);
    assert_eq!(reports.len(), 1);
    assert!(!reports[0].raised, "{reports:?}");
    assert!(reports[0].return_loss_db.is_some_and(|loss| loss > 50.0));
    let voice = vad.voice_threshold_db();
    assert!(!meter.masks_words(Some(SINCE), Millis(SINCE.0 + 2_000), voice));
    // The user's voice while the agent sounds: voice at once.
    let (changes, _) = sound(&mut meter, &mut vad, SINCE.0 + 2_000, 200, -30.0);
    assert!(started(&changes), "{changes:?}");
}

#[test]
fn a_user_who_spoke_over_one_start_does_not_pass_for_an_echo() {
    let mut meter = meter();
    let mut vad = detector();
    // Three answers start with a cancelled echo; the user talks over the start of the third.
    for (start, db) in [(10_000, -75.0), (20_000, -75.0), (30_000, -30.0)] {
        let since = Millis(start);
        sound_since(&mut meter, &mut vad, since, start, MEASURE_MS + 20, db);
        vad.push(&tone(3_000, -75.0), |_| {}); // the answer goes on, the room is quiet
        vad.take_heard();
    }
    let voice = vad.voice_threshold_db();
    let later = Millis(40_000);
    assert!(!meter.masks_words(Some(later), later, voice));
    let (changes, _) = sound_since(&mut meter, &mut vad, later, 40_000 + MEASURE_MS, 300, -30.0);
    assert!(started(&changes), "the user's voice counts: {changes:?}");
}

#[test]
fn a_user_who_spoke_over_the_first_start_is_heard_once_their_voice_ends() {
    let mut meter = meter();
    let mut vad = detector();
    // The first answer, its echo cancelled; the user speaks over its first second (400 ms at
    // -30 dBFS): that window reads as an echo 14 dB under the player, and holds while they speak.
    let mut reports = Vec::new();
    for (from, ms, db) in [(0, 300, -75.0), (300, 400, -30.0), (700, 320, -75.0)] {
        reports.extend(sound(&mut meter, &mut vad, SINCE.0 + from, ms, db).1);
    }
    assert!(reports.is_empty(), "{reports:?}");
    let held = Millis(SINCE.0 + MEASURE_MS + 20);
    assert!(meter
        .voice_floor_db(Some(SINCE), held)
        .is_some_and(|floor| floor > -30.0));
    // Their voice ended: the window after it hears the cancelled echo alone, and that measure
    // takes the held one's place.
    let (_, reports) = sound(&mut meter, &mut vad, held.0 + 20, MEASURE_MS + 20, -75.0);
    let [report] = reports.as_slice() else {
        panic!("one report: {reports:?}");
    };
    assert!(!report.raised, "{report:?}");
    assert!(
        report.return_loss_db.is_some_and(|loss| loss > 50.0),
        "{report:?}"
    );
    // The rest of the answer, and the next: the user's voice counts at once.
    let later = Millis(held.0 + MEASURE_MS + 60);
    assert!(!meter.masks_words(Some(SINCE), later, vad.voice_threshold_db()));
    let (changes, _) = sound(&mut meter, &mut vad, later.0, 200, -30.0);
    assert!(started(&changes), "{changes:?}");
    vad.push(&tone(1_000, -75.0), |_| {}); // they stop, the answer ends
    vad.take_heard();
    let next = Millis(later.0 + 10_000);
    let (changes, _) = sound_since(&mut meter, &mut vad, next, next.0 + 500, 200, -30.0);
    assert!(started(&changes), "{changes:?}");
}

#[test]
fn without_a_canceller_nothing_is_voice_until_the_echo_is_measured() {
    let mut meter = EchoMeter::default();
    meter.set_canceller(false);
    assert_eq!(
        meter.voice_floor_db(Some(SINCE), SINCE),
        Some(f64::INFINITY),
        "the first second of the agent's sound is held"
    );
    let mut vad = detector();
    let (changes, reports) = sound(&mut meter, &mut vad, SINCE.0, MEASURE_MS + 20, -30.0);
    assert!(
        !started(&changes),
        "the echo never started a voice: {changes:?}"
    );
    assert!(reports[0].raised);
    assert_eq!(
        reports[0].return_loss_db, None,
        "no level of the player known"
    );
    // Without the player's level: the mean echo and what speech's peaks add to it.
    let floor = meter.voice_floor_db(Some(SINCE), Millis(SINCE.0 + 2_000));
    assert!(
        floor.is_some_and(|floor| floor > -30.0 + MARGIN_DB),
        "{floor:?}"
    );
    // The agent sounds again after silence: measured again; the threshold stays.
    let again = Millis(SINCE.0 + 10_000);
    assert_eq!(meter.voice_floor_db(Some(again), again), floor);
}

#[test]
fn voice_that_comes_only_after_the_window_is_the_users() {
    // No frame came while the agent began to sound (audio sent in bursts): nothing is measured,
    // and the user's voice later is voice.
    let mut meter = meter();
    let mut vad = detector();
    let (changes, reports) = sound(&mut meter, &mut vad, SINCE.0 + MEASURE_MS, 400, -20.0);
    assert!(reports.is_empty(), "{reports:?}");
    assert!(started(&changes), "{changes:?}");
    assert_eq!(
        meter.voice_floor_db(Some(SINCE), Millis(SINCE.0 + 2_000)),
        None
    );
}

/// A voice core speaking turn-1 since 1000 ms, its echo guard over by 1500 ms.
fn speaking() -> VoiceCore {
    let mut core = VoiceCore::new(VoiceConfig {
        echo_guard_ms: 500,
        ..VoiceConfig::new("Sorry?")
    });
    core.start();
    core.on_final("tell me about the weather", Millis(0));
    core.on_sentence("turn-1", "It is sunny all day long, and warm.", Millis(10));
    core.on_playback_started("turn-1", Millis(1000));
    while core.poll_action().is_some() {}
    core
}

fn cut(core: &mut VoiceCore) -> Option<BargeInCause> {
    std::iter::from_fn(|| core.poll_action()).find_map(|action| match action {
        VoiceAction::Event(VoiceEvent::BargeIn { cause, .. }) => Some(cause),
        _ => None,
    })
}

#[test]
fn words_while_the_echo_passes_for_voice_count_only_with_voice_heard_above_it() {
    let mut core = speaking();
    core.set_echo_masks_words(true);
    // The provider transcribes the agent's echo: captions only, no cut, no turn.
    core.on_partial("it is sunny all day long", Millis(2_000));
    core.on_spoken_final("it is sunny all day long", Millis(2_100));
    core.on_speech_start(Millis(2_200));
    assert_eq!(cut(&mut core), None);
    assert_eq!(core.state(), VoiceState::Speaking);
    assert_eq!(core.current_turn(), Some("turn-1"));
    // The user's voice over the echo, then their words: a cut and a new turn.
    core.on_voice(true, Millis(3_000), 3_000);
    core.on_voice(false, Millis(3_400), 3_400);
    core.on_spoken_final("stop there please", Millis(4_000));
    assert_eq!(cut(&mut core), Some(BargeInCause::Final));
    assert_eq!(core.current_turn(), Some("turn-2"));
}

#[test]
fn without_the_mask_the_providers_words_cut_as_before() {
    let mut core = speaking();
    core.on_partial("it is sunny all day long", Millis(2_000));
    assert_eq!(cut(&mut core), Some(BargeInCause::Partial));
}

/// A voice core speaking the dev stack's answer to `tell me about the weather`, its three
/// sentences handed to the player, the echo guard over, the echo passing for voice.
fn speaking_the_answer() -> VoiceCore {
    let mut core = VoiceCore::new(VoiceConfig {
        echo_guard_ms: 500,
        ..VoiceConfig::new("Sorry?")
    });
    core.start();
    core.on_final("tell me about the weather", Millis(0));
    for (i, sentence) in [
        "I heard: tell me about the weather.",
        "I am a mock model, so I have no real answer to that.",
        "Try asking about the weather.",
    ]
    .into_iter()
    .enumerate()
    {
        core.on_sentence("turn-1", sentence, Millis(10 + i as u64));
        let job = std::iter::from_fn(|| core.poll_action())
            .find_map(|action| match action {
                VoiceAction::Synthesize { job, .. } => Some(job),
                _ => None,
            })
            .expect("the sentence is synthesized");
        core.on_synthesized(job, true, Millis(20 + i as u64));
        if i < 2 {
            // Played out: the next one is requested (a look-ahead of one).
            core.on_chunk_ended(job, Millis(25 + i as u64));
        }
    }
    core.on_accepted("turn-1", Millis(30));
    core.on_playback_started("turn-1", Millis(1000));
    core.set_echo_masks_words(true);
    while core.poll_action().is_some() {}
    core
}

fn turns_started(core: &mut VoiceCore) -> Vec<String> {
    std::iter::from_fn(|| core.poll_action())
        .filter_map(|action| match action {
            VoiceAction::StartTurn { input, .. } => Some(input),
            _ => None,
        })
        .collect()
}

#[test]
fn an_utterance_that_began_as_the_echo_is_no_turn_though_the_user_speaks_when_it_ends() {
    let mut core = speaking_the_answer();
    // The provider's utterance begins with the echo, nobody else speaking.
    core.on_partial("so i have no real", Millis(3_000));
    // The user starts the next question; the provider ends its utterance with the echo's
    // (misheard) words only.
    core.on_voice(true, Millis(3_500), 3_500);
    core.on_spoken_final(
        "so i have no real answer to that try asking about the way up",
        Millis(3_900),
    );
    assert_eq!(cut(&mut core), None);
    assert_eq!(core.current_turn(), Some("turn-1"));
    assert_eq!(core.state(), VoiceState::Speaking);
}

#[test]
fn the_users_words_after_the_echo_in_one_final_are_the_turn() {
    let mut core = speaking_the_answer();
    core.on_partial("try asking", Millis(3_000));
    assert!(core.utterance_began_as_echo());
    core.on_voice(true, Millis(3_500), 3_500);
    core.on_spoken_final(
        "try asking about the weather what time is it",
        Millis(4_500),
    );
    assert_eq!(turns_started(&mut core), ["what time is it"]);
    // The next utterance is judged afresh: the user's voice is heard, so it is theirs.
    core.on_partial("tell me a joke", Millis(6_000));
    assert!(!core.utterance_began_as_echo());
}

#[test]
fn an_empty_partial_ends_an_utterance_that_never_got_its_final() {
    let mut core = speaking_the_answer();
    core.on_partial("try asking", Millis(3_000));
    assert!(core.utterance_began_as_echo());
    // The provider gave the echo up with no final; the user speaks next.
    core.on_partial("", Millis(3_400));
    core.on_voice(true, Millis(3_500), 3_500);
    core.on_partial("about", Millis(3_800));
    assert!(!core.utterance_began_as_echo());
    core.on_spoken_final("about the weather", Millis(4_200));
    assert_eq!(turns_started(&mut core), ["about the weather"]);
}

#[test]
fn an_utterance_that_began_with_the_users_voice_is_theirs_whatever_its_words() {
    let mut core = speaking_the_answer();
    core.on_voice(true, Millis(3_000), 3_000);
    core.on_partial("tell me about", Millis(3_300));
    assert!(!core.utterance_began_as_echo());
    core.on_spoken_final("tell me about the weather", Millis(3_900));
    assert_eq!(turns_started(&mut core), ["tell me about the weather"]);
}

#[test]
fn the_agents_words_are_found_in_its_order_across_a_misheard_word() {
    let mut recent = RecentSpeech::default();
    recent.played("I heard: tell me about the weather.");
    recent.played("I am a mock model, so I have no real answer to that.");
    recent.played("Try asking about the weather.");
    // All the agent's, one word misheard ("answers"), the end misheard ("the way up").
    assert_eq!(
        recent.users_words("so i have no real answers to that try asking about the way up"),
        None
    );
    // The user's after the agent's.
    assert_eq!(
        recent.users_words("no real answer to that try asking about the weather what is your name"),
        Some("what is your name".to_owned())
    );
    // Nothing of the agent's: all of it is the user's, however short.
    assert_eq!(recent.users_words("stop"), Some("stop".to_owned()));
    // The agent's words out of its order are not its echo: "weather" then "tell".
    assert_eq!(
        recent.users_words("weather tell me a joke"),
        Some("tell me a joke".to_owned())
    );
    // Only the last three sentences are kept.
    recent.played("It is sunny.");
    assert_eq!(
        recent.users_words("tell me about the weather"),
        Some("tell me about the weather".to_owned())
    );
}

/// A listening session with a Gladia transcriber whose socket is open, fed 20 ms frames.
mod session {
    use super::*;
    use turnguard::core::stt::protocols::gladia::PROFILE as GLADIA;
    use turnguard::core::stt::transcriber::{Transcriber, TranscriberConfig};
    use turnguard::core::turn::{self, RouteSpec, TurnConfig, TurnLadder};
    use turnguard::core::voice::session::{SessionAction, SessionCore};

    pub fn listening() -> SessionCore {
        let turns = TurnConfig::new(vec![RouteSpec::named("primary")], "Sorry?");
        let voice = VoiceConfig {
            echo_guard_ms: 0,
            session_id: Some("s".into()),
            ..VoiceConfig::new("Sorry?")
        };
        let stt = Transcriber::new(TranscriberConfig::new(&GLADIA));
        let mut s = SessionCore::new(TurnLadder::new(turns), VoiceCore::new(voice), Some(stt));
        s.set_echo_canceller(true);
        s.start(Millis(0));
        drain(&mut s);
        type Step = fn(&mut Transcriber, Millis);
        let steps: [(u64, Step); 3] = [
            (0, |stt, now| stt.start(now)),
            (5, |stt, now| {
                stt.on_provisioned("wss://stt.example/v2/live?token=one", now)
            }),
            (6, |stt, now| stt.on_open(now)),
        ];
        for (at, step) in steps {
            step(
                s.transcriber_at(Millis(at)).expect("a transcriber"),
                Millis(at),
            );
            drain(&mut s);
        }
        assert_eq!(s.voice().state(), VoiceState::Listening);
        s
    }

    pub fn drain(s: &mut SessionCore) -> Vec<SessionAction> {
        std::iter::from_fn(|| s.poll_action()).collect()
    }

    /// `ms` of frames from `from`: a voice at -20 dBFS or a quiet room at -70.
    pub fn feed(s: &mut SessionCore, from: u64, ms: u64, voice: bool) -> Vec<SessionAction> {
        let db = if voice { -20.0 } else { -70.0 };
        let pcm = tone(ms, db);
        let mut actions = Vec::new();
        for (i, frame) in pcm.chunks(640).enumerate() {
            let now = Millis(from + 20 * (i as u64 + 1));
            s.handle_timeout(now);
            s.on_audio(frame.to_vec(), now);
            actions.extend(drain(s));
        }
        actions
    }

    pub fn transcript(s: &mut SessionCore, text: &str, now: Millis) -> Vec<SessionAction> {
        let json = [
            r#"{"type":"transcript","data":{"is_final":true,"utterance":{"text":""#,
            text,
            r#""}}}"#,
        ]
        .concat();
        s.transcriber_at(now)
            .expect("a transcriber")
            .on_text(&json, now);
        drain(s)
    }

    /// A final from the provider: the turns it started and the barge-ins it made.
    pub fn said(s: &mut SessionCore, text: &str, now: Millis) -> (Vec<String>, usize) {
        let actions = transcript(s, text, now);
        turns_and_cuts(s, &actions)
    }

    /// The inputs of the turns whose route was called, and the barge-ins.
    pub fn turns_and_cuts(s: &SessionCore, actions: &[SessionAction]) -> (Vec<String>, usize) {
        let turns = actions
            .iter()
            .filter_map(|action| match action {
                SessionAction::Turn(turn::Action::StartAttempt { request_id, .. }) => s
                    .ladder()
                    .turn(request_id.turn_id())
                    .map(|record| record.input.clone()),
                _ => None,
            })
            .collect();
        let cuts = actions
            .iter()
            .filter(|action| {
                matches!(
                    action,
                    SessionAction::Voice(VoiceAction::Event(VoiceEvent::BargeIn { .. }))
                )
            })
            .count();
        (turns, cuts)
    }

    /// The user asked (voice, then the final), and the answer sounds from `at`.
    pub fn answering(s: &mut SessionCore, voice_heard: bool, at: u64) {
        feed(s, 0, 1_000, false);
        feed(s, 1_000, 600, voice_heard);
        feed(s, 1_600, 400, false);
        let actions = transcript(s, "what is the weather", Millis(2_000));
        let (turns, _) = turns_and_cuts(s, &actions);
        assert_eq!(turns, ["what is the weather"]);
        s.voice_at(Millis(at))
            .on_playback_started("s:turn-1", Millis(at));
        drain(s);
    }

    /// The agent answers from 2.1 s (the detector heard the question's voice, or only silence),
    /// the room is quiet to the detector for 2 s, and the provider writes `words`: the session,
    /// the turns the words started and the cuts.
    pub fn words_over_the_answer(
        voice_heard: bool,
        words: &str,
    ) -> (SessionCore, Vec<String>, usize) {
        let mut s = listening();
        answering(&mut s, voice_heard, 2_100);
        feed(&mut s, 2_100, 2_000, false);
        let (turns, cuts) = said(&mut s, words, Millis(4_100));
        (s, turns, cuts)
    }
}

#[test]
fn while_the_agent_sounds_short_words_that_came_with_no_voice_are_not_the_users() {
    // A working canceller (nothing raised), a detector that heard the user's question; the
    // agent sounds, the room is quiet to the detector, and the recognizer writes a word.
    let (mut s, turns, cuts) = session::words_over_the_answer(true, "and ah");
    assert_eq!((turns.len(), cuts), (0, 0), "{turns:?}");
    assert_eq!(s.voice_at(Millis(4_100)).current_turn(), Some("s:turn-1"));
    // The user's voice, then their words: a cut and their turn.
    let mut actions = session::feed(&mut s, 4_100, 400, true);
    actions.extend(session::feed(&mut s, 4_500, 300, false));
    actions.extend(session::transcript(&mut s, "stop please", Millis(4_800)));
    let (turns, cuts) = session::turns_and_cuts(&s, &actions);
    assert_eq!((turns, cuts), (vec!["stop please".to_owned()], 1));
}

#[test]
fn a_detector_that_never_heard_voice_leaves_the_words_to_the_provider() {
    // Silent frames only (a capture the detector does not hear, or an app's own frames): its
    // silence says nothing, and the provider's final cuts as before.
    let (_, turns, cuts) = session::words_over_the_answer(false, "stop please");
    assert_eq!((turns, cuts), (vec!["stop please".to_owned()], 1));
}

#[test]
fn words_long_enough_to_cut_by_themselves_cut_without_voice() {
    // A user the detector does not hear over a noisy room: words as long as a partial that cuts
    // by itself (`min_partial_chars`) are still theirs.
    let (_, turns, cuts) = session::words_over_the_answer(true, "please stop talking now");
    assert_eq!(
        (turns, cuts),
        (vec!["please stop talking now".to_owned()], 1)
    );
}
