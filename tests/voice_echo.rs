//! The agent's echo measured at run time (V8): where the microphone hears the agent loud enough
//! to pass for voice, the detector's threshold rises above it while the agent sounds, so the
//! agent does not pause or cut itself; the user's louder voice still counts.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use turnguard::core::time::Millis;
use turnguard::core::voice::echo::{EchoMeter, EchoReport, MARGIN_DB, MEASURE_MS};
use turnguard::core::voice::vad::{VoiceChange, VoiceDetector};

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
    vad
}

/// Feeds 20 ms frames of `frame` from `from` for `ms` while the agent sounds since `SINCE`, as
/// the session does: the echo's floor set before each frame, the frame's peak measured after.
fn sound(
    meter: &mut EchoMeter,
    vad: &mut VoiceDetector,
    from: u64,
    ms: u64,
    db: f64,
) -> (Vec<VoiceChange>, Vec<EchoReport>) {
    let (mut changes, mut reports) = (Vec::new(), Vec::new());
    for at in (from..from + ms).step_by(20) {
        let now = Millis(at);
        vad.set_echo_floor_db(meter.voice_floor_db(Some(SINCE), now));
        vad.push(&tone(20, db), |change| changes.push(change));
        let (peak, voice) = (vad.take_peak_db(), vad.voice_threshold_db());
        reports.extend(meter.observe(peak, voice, Some(SINCE), now));
    }
    (changes, reports)
}

#[test]
fn an_echo_loud_enough_for_voice_raises_the_threshold_and_the_users_louder_voice_still_counts() {
    let mut meter = EchoMeter::default();
    meter.set_output_level(-20.0);
    let mut vad = detector();
    // The agent's echo at -30 dBFS: voice to a detector that knows only the room's noise.
    let (_, reports) = sound(&mut meter, &mut vad, SINCE.0, MEASURE_MS + 20, -30.0);
    let [report] = reports.as_slice() else {
        panic!("one report: {reports:?}");
    };
    assert!((report.echo_db + 30.0).abs() < 0.5, "{report:?}");
    assert_eq!(report.return_loss_db.map(f64::round), Some(10.0));
    assert!(report.raised);
    let floor = meter.voice_floor_db(Some(SINCE), Millis(SINCE.0 + 1_000));
    assert!(
        floor.is_some_and(|floor| (floor - (-30.0 + MARGIN_DB)).abs() < 0.5),
        "{floor:?}"
    );
    // Past the measure: the same echo for seconds is not voice, and nothing is reported again.
    let start = SINCE.0 + MEASURE_MS + 40;
    let (changes, reports) = sound(&mut meter, &mut vad, start, 3_000, -30.0);
    assert!(reports.is_empty());
    assert!(
        !changes
            .iter()
            .any(|change| matches!(change, VoiceChange::Started { .. })),
        "{changes:?}"
    );
    // The user, 10 dB louder than the echo: voice.
    let (changes, _) = sound(&mut meter, &mut vad, start + 3_000, 400, -20.0);
    assert!(
        matches!(changes.first(), Some(VoiceChange::Started { .. })),
        "{changes:?}"
    );
    // The agent silent: no echo floor at all.
    assert_eq!(meter.voice_floor_db(None, Millis(start + 4_000)), None);
}

#[test]
fn a_cancelled_echo_changes_nothing() {
    let mut meter = EchoMeter::default();
    meter.set_output_level(-20.0);
    let mut vad = detector();
    // What a working canceller leaves: barely above the room.
    let (_, reports) = sound(&mut meter, &mut vad, SINCE.0, MEASURE_MS + 20, -66.0);
    assert_eq!(reports.len(), 1);
    assert!(!reports[0].raised);
    assert!(reports[0].return_loss_db.is_some_and(|loss| loss > 40.0));
    assert_eq!(
        meter.voice_floor_db(Some(SINCE), Millis(SINCE.0 + 2_000)),
        None
    );
    // The user's voice while the agent sounds: voice at once.
    let (changes, _) = sound(&mut meter, &mut vad, SINCE.0 + 1_000, 200, -30.0);
    assert!(
        matches!(changes.first(), Some(VoiceChange::Started { .. })),
        "{changes:?}"
    );
}

#[test]
fn without_a_canceller_nothing_is_voice_until_the_echo_is_measured() {
    let mut meter = EchoMeter::default();
    meter.set_canceller(false);
    assert_eq!(
        meter.voice_floor_db(Some(SINCE), SINCE),
        Some(f64::INFINITY),
        "the first half second of the agent's sound is held"
    );
    let mut vad = detector();
    let (changes, reports) = sound(&mut meter, &mut vad, SINCE.0, MEASURE_MS + 20, -30.0);
    assert!(
        changes.is_empty(),
        "the echo never started a voice: {changes:?}"
    );
    assert!(reports[0].raised);
    assert_eq!(
        reports[0].return_loss_db, None,
        "no level of the player known"
    );
    let floor = meter.voice_floor_db(Some(SINCE), Millis(SINCE.0 + 1_000));
    assert!(floor.is_some_and(f64::is_finite));
    // The agent sounds again after silence: measured again; the threshold never drops below the
    // loudest echo measured.
    let again = Millis(SINCE.0 + 10_000);
    assert_eq!(meter.voice_floor_db(Some(again), again), floor);
}

#[test]
fn voice_that_comes_only_after_the_window_is_the_users() {
    // No frame came while the agent began to sound (audio sent in bursts): nothing is measured,
    // and the user's voice later is voice.
    let mut meter = EchoMeter::default();
    let mut vad = detector();
    let (changes, reports) = sound(&mut meter, &mut vad, SINCE.0 + MEASURE_MS, 400, -20.0);
    assert!(reports.is_empty(), "{reports:?}");
    assert!(
        matches!(changes.first(), Some(VoiceChange::Started { .. })),
        "{changes:?}"
    );
    assert_eq!(
        meter.voice_floor_db(Some(SINCE), Millis(SINCE.0 + 2_000)),
        None
    );
}
