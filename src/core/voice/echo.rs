//! The agent's own voice in the microphone, measured at run time (V8).
//!
//! The browser's echo canceller usually leaves little of the agent in the captured audio; where it
//! is off (`echoCancellation: false`), missing or weak, the voice detector would take the agent's
//! echo for the user and pause, or cut, the agent. So the first `MEASURE_MS` after each time the
//! agent starts to sound, the loudest block the microphone hears is the echo's level (the user
//! rarely speaks in the first half second of an answer). Where that echo would count as voice,
//! the detector's threshold rises above it, with `MARGIN_DB`, whenever the agent sounds; the user
//! must then be louder than the agent's echo to pause it. The first measurement is reported once,
//! with the return loss where the level of what the player plays is known.

use crate::core::time::Millis;

/// How long after the agent starts to sound the echo is measured.
pub const MEASURE_MS: u64 = 500;
/// Above the echo by this much is voice while the agent sounds.
pub const MARGIN_DB: f64 = 6.0;

/// What the first measurement found (the `echo` event).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EchoReport {
    /// The loudest 10 ms block the microphone heard while the agent sounded, in dBFS.
    pub echo_db: f64,
    /// The level of what the player played minus the echo's, in dB, where the player's level is
    /// known (an answer of whole buffers): how much the room and the canceller took away.
    pub return_loss_db: Option<f64>,
    /// The echo would have counted as voice: the threshold rises while the agent sounds.
    pub raised: bool,
}

/// The echo's level, measured each time the agent starts to sound.
#[derive(Clone, Debug, Default)]
pub struct EchoMeter {
    /// The browser said the capture has no echo canceller: every first window is held too.
    canceller_off: bool,
    /// The level (dBFS, RMS) of the audio the player played last.
    output_db: Option<f64>,
    /// The window being measured: the playback start it belongs to and the loudest block so far.
    window: Option<(Millis, f64)>,
    /// The playback start whose window was measured last.
    measured: Option<Millis>,
    /// The loudest echo measured that counts as voice: the threshold while the agent sounds.
    echo_floor_db: Option<f64>,
    reported: bool,
}

impl EchoMeter {
    /// The capture's own word on its canceller (`getSettings().echoCancellation`).
    pub fn set_canceller(&mut self, on: bool) {
        self.canceller_off = !on;
    }

    /// The level of the audio the player plays (RMS over a buffer, dBFS).
    pub fn set_output_level(&mut self, db: f64) {
        if db.is_finite() {
            self.output_db = Some(db);
        }
    }

    /// The least level that counts as voice now: `None` when the agent is silent or its echo
    /// was never loud enough to matter; while the first window of a sounding agent is measured
    /// with no canceller, nothing counts.
    #[must_use]
    pub fn voice_floor_db(&self, sounding_since: Option<Millis>, now: Millis) -> Option<f64> {
        let since = sounding_since?;
        let measuring = now < since.after(MEASURE_MS) && self.measured != Some(since);
        match self.echo_floor_db {
            Some(floor) => Some(floor),
            None if measuring && self.canceller_off => Some(f64::INFINITY),
            None => None,
        }
    }

    /// The loudest block of one captured frame (`peak_db`), heard while the agent sounded since
    /// `sounding_since` (`None`: silent or paused), when the detector took `voice_db` for voice.
    /// Returns the first measurement, once per session.
    pub fn observe(
        &mut self,
        peak_db: f64,
        voice_db: f64,
        sounding_since: Option<Millis>,
        now: Millis,
    ) -> Option<EchoReport> {
        let since = sounding_since?;
        if self.measured == Some(since) {
            return None;
        }
        let window = self.window.filter(|(start, _)| *start == since);
        if now < since.after(MEASURE_MS) {
            let peak = window.map_or(peak_db, |(_, peak)| peak.max(peak_db));
            self.window = Some((since, peak));
            return None;
        }
        // The window is over: measured by the frames that came in it (this one came after), or
        // not at all when none did (audio that was not flowing then says nothing of the echo).
        self.window = None;
        self.measured = Some(since);
        let (_, peak) = window?;
        let raised = peak >= voice_db;
        if raised {
            let floor = peak + MARGIN_DB;
            self.echo_floor_db = Some(self.echo_floor_db.map_or(floor, |old| old.max(floor)));
        }
        if std::mem::replace(&mut self.reported, true) {
            return None;
        }
        Some(EchoReport {
            echo_db: peak,
            return_loss_db: self.output_db.map(|output| output - peak),
            raised,
        })
    }
}
