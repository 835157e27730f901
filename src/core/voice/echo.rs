//! The agent's own voice in the microphone, measured at run time (V8).
//!
//! Where the browser's echo canceller is off, missing or weak, the microphone hears the agent, and
//! the voice detector would take it for the user. That echo is the player's output come back
//! through the room and the capture's gain: a copy of it, some decibels down (the *return loss*).
//! The loss is measured on mean levels over the first `MEASURE_MS` each time the agent starts to
//! sound (the user rarely speaks then, and a mean over a second does not care for the echo's
//! delay): what the player played against what the microphone heard. While the agent sounds, and
//! for `TAIL_MS` after (the echo's delay and the room's reverberation), the loudest echo to expect
//! is the player's loudest 10 ms less that loss, and voice must be `MARGIN_DB` above it. The loss
//! that holds is the median of the last `KEPT` measurements: a capture's gain control that raises
//! the echo over time is followed. A window the detector heard voice in may hold the user's voice
//! (they spoke over the start) or a loud echo (a weak canceller): it holds only until a window
//! without voice is measured, which opens once the voice ends (the same start, or the next), so
//! a user who spoke over the first answer's start is not taken for a loud echo in the next.
//! Where the expected echo is far below voice (a working canceller), nothing changes.
//!
//! The provider hears the echo too, and transcribes it: while the echo would pass for voice, words
//! count only when the detector heard voice above the echo lately ([`EchoMeter::masks_words`]).
//! A working canceller still leaks now and then, and a recognizer makes a word or two of a leak the
//! detector did not take for voice: while the agent sounds, once the detector has heard voice at
//! all, the provider's short words count only with its voice too
//! ([`VoiceCore::set_short_words_need_voice`](crate::core::voice::VoiceCore::set_short_words_need_voice)).

use crate::core::queue::Queue;
use crate::core::time::Millis;
use crate::core::voice::vad::{level_db, Heard};

/// How long after the agent starts to sound the echo is measured.
pub const MEASURE_MS: u64 = 1000;
/// Above the loudest expected echo by this much is voice while the agent sounds.
pub const MARGIN_DB: f64 = 6.0;
/// The echo outlasts the agent's sound by its delay and the room's reverberation.
pub const TAIL_MS: u64 = 300;
/// The provider's words about the echo come this long after it, at most (its latency).
pub const WORDS_TAIL_MS: u64 = 2500;
/// The measurements the loss is the median of.
const KEPT: usize = 5;

/// What the first measurement found (the `echo` event).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EchoReport {
    /// The mean level the microphone heard while the agent sounded, in dBFS.
    pub echo_db: f64,
    /// The player's mean level minus the echo's, in dB, where the player's level is known:
    /// how much the room and the canceller took away.
    pub return_loss_db: Option<f64>,
    /// The echo would pass for voice: the threshold rises while the agent sounds.
    pub raised: bool,
}

/// A measurement under way: the playback start it belongs to, when it opened, the captured
/// blocks' power, and whether the detector heard voice in them.
#[derive(Clone, Copy, Debug)]
struct Window {
    since: Millis,
    opened: Millis,
    power: f64,
    blocks: u32,
    voiced: bool,
}

impl Window {
    fn opened(since: Millis, opened: Millis) -> Self {
        Self {
            since,
            opened,
            power: 0.0,
            blocks: 0,
            voiced: false,
        }
    }
}

/// The echo's level, measured each time the agent starts to sound.
#[derive(Clone, Debug, Default)]
pub struct EchoMeter {
    /// The browser said the capture has no echo canceller: every first window is held too.
    canceller_off: bool,
    /// The mean power of what the player plays, over every buffer so far, and their count.
    output_power: f64,
    output_buffers: u32,
    /// The loudest 10 ms block of any buffer the player played (dBFS).
    output_peak_db: Option<f64>,
    window: Option<Window>,
    /// The playback start whose window was measured without voice in it.
    measured: Option<Millis>,
    /// The playback start whose window had voice in it: another opens once the voice ends.
    again: Option<Millis>,
    /// The last return losses measured (dB), where the player's level was known.
    losses: Queue<f64>,
    /// The last mean echoes measured (dBFS), for a player whose level is not known.
    echoes: Queue<f64>,
    /// The newest of them had voice in its window: the next measurement takes its place.
    provisional: bool,
    /// When the agent was last heard to sound: its echo's tail follows.
    sounded_at: Option<Millis>,
    reported: bool,
}

impl EchoMeter {
    /// The capture's own word on its canceller (`getSettings().echoCancellation`).
    pub fn set_canceller(&mut self, on: bool) {
        self.canceller_off = !on;
    }

    /// A buffer the player is about to play: its mean level and its loudest 10 ms (dBFS).
    pub fn on_output(&mut self, mean_db: f64, peak_db: f64) {
        if !(mean_db.is_finite() && peak_db.is_finite()) {
            return;
        }
        self.output_power += power(mean_db);
        self.output_buffers = self.output_buffers.saturating_add(1);
        self.output_peak_db = Some(self.output_peak_db.map_or(peak_db, |p| p.max(peak_db)));
    }

    /// The loudest echo to expect while the agent sounds (dBFS), once measured.
    fn expected_echo_db(&self) -> Option<f64> {
        match (self.output_peak_db, median(&self.losses)) {
            (Some(peak), Some(loss)) => Some(peak - loss),
            // Without the player's level: the mean echo, and what a speech peak adds to a mean.
            _ => median(&self.echoes).map(|mean| mean + SPEECH_PEAK_OVER_MEAN_DB),
        }
    }

    fn measuring(&self, sounding_since: Option<Millis>, now: Millis) -> bool {
        sounding_since
            .is_some_and(|since| now < since.after(MEASURE_MS) && self.measured != Some(since))
    }

    /// The agent sounds, or its echo's tail still may.
    fn echoing(&self, sounding_since: Option<Millis>, now: Millis, tail_ms: u64) -> bool {
        sounding_since.is_some() || self.sounded_at.is_some_and(|at| now < at.after(tail_ms))
    }

    /// The agent sounds, or did within [`WORDS_TAIL_MS`]: the provider's words now may be about
    /// its sound.
    #[must_use]
    pub fn sounds_lately(&self, sounding_since: Option<Millis>, now: Millis) -> bool {
        self.echoing(sounding_since, now, WORDS_TAIL_MS)
    }

    /// The least level that counts as voice now: `None` when the agent is silent or no echo was
    /// measured; while the first window of a sounding agent is measured with no canceller and
    /// nothing was measured before, nothing counts.
    #[must_use]
    pub fn voice_floor_db(&self, sounding_since: Option<Millis>, now: Millis) -> Option<f64> {
        if !self.echoing(sounding_since, now, TAIL_MS) {
            return None;
        }
        match self.expected_echo_db() {
            Some(echo) => Some(echo + MARGIN_DB),
            None if self.canceller_off && self.measuring(sounding_since, now) => {
                Some(f64::INFINITY)
            }
            None => None,
        }
    }

    /// Whether the provider's words now may be the agent's echo: it sounds (or did within
    /// [`WORDS_TAIL_MS`]) and its echo would pass for voice to a detector whose own threshold is
    /// `voice_db`. Such words count only with voice heard above the echo.
    #[must_use]
    pub fn masks_words(&self, sounding_since: Option<Millis>, now: Millis, voice_db: f64) -> bool {
        if !self.echoing(sounding_since, now, WORDS_TAIL_MS) {
            return false;
        }
        match self.expected_echo_db() {
            Some(echo) => echo + MARGIN_DB >= voice_db,
            None => self.canceller_off && self.measuring(sounding_since, now),
        }
    }

    /// What the detector heard since the last call, while the agent sounded since
    /// `sounding_since` (`None`: silent or paused). Returns the first measurement without voice
    /// in its window, once per session.
    pub fn observe(
        &mut self,
        heard: Heard,
        sounding_since: Option<Millis>,
        now: Millis,
    ) -> Option<EchoReport> {
        let since = sounding_since?;
        self.sounded_at = Some(now);
        if self.measured == Some(since) {
            return None;
        }
        let window = match self.window.filter(|window| window.since == since) {
            Some(window) => window,
            // The agent's first second, or a second from a frame without voice after a window
            // that had voice in it.
            None if now < since.after(MEASURE_MS) => Window::opened(since, since),
            None if self.again == Some(since) && !heard.voiced => Window::opened(since, now),
            None => return None,
        };
        if now < window.opened.after(MEASURE_MS) {
            self.window = Some(Window {
                power: window.power + heard.power,
                blocks: window.blocks.saturating_add(heard.blocks),
                voiced: window.voiced || heard.voiced,
                ..window
            });
            return None;
        }
        // The window is over: measured by the frames that came in it (this one came after), or
        // not at all when none did (audio that was not flowing then says nothing of the echo).
        self.window = None;
        if window.voiced {
            self.again = Some(since);
        } else {
            self.measured = Some(since);
        }
        if window.blocks == 0 {
            return None;
        }
        // The room's own noise is in the mean too: what is left above it is the echo.
        let mean = window.power / f64::from(window.blocks);
        let echo_db = level_db(mean - power(heard.noise_db));
        let output_db = (self.output_buffers > 0)
            .then(|| level_db(self.output_power / f64::from(self.output_buffers)));
        let loss = output_db.map(|output| output - echo_db);
        if core::mem::replace(&mut self.provisional, window.voiced) {
            drop_newest(&mut self.losses);
            drop_newest(&mut self.echoes);
        }
        if let Some(loss) = loss {
            keep(&mut self.losses, loss);
        }
        keep(&mut self.echoes, echo_db);
        if window.voiced || core::mem::replace(&mut self.reported, true) {
            return None;
        }
        let raised = self
            .expected_echo_db()
            .is_some_and(|echo| echo + MARGIN_DB >= heard.voice_db);
        Some(EchoReport {
            echo_db,
            return_loss_db: loss,
            raised,
        })
    }
}

/// Speech's loudest 10 ms stand about this far above its mean (espeak-ng's voices: 9 to 11 dB),
/// for an echo whose player's level is not known.
const SPEECH_PEAK_OVER_MEAN_DB: f64 = 12.0;

fn drop_newest(last: &mut Queue<f64>) {
    if let Some(newest) = last.len().checked_sub(1) {
        last.remove(newest);
    }
}

fn keep(last: &mut Queue<f64>, value: f64) {
    if last.len() == KEPT {
        last.pop_front();
    }
    last.push_back(value);
}

/// The middle value (the lower of the two middle ones for an even count): the one with as many
/// values below it as that position. (Five values at most: no sort is worth its code here.)
fn median(values: &Queue<f64>) -> Option<f64> {
    let middle = values.len().saturating_sub(1) / 2;
    values.iter().enumerate().find_map(|(i, value)| {
        let below = values
            .iter()
            .enumerate()
            .filter(|(j, other)| *other < value || (*other == value && *j < i))
            .count();
        (below == middle).then_some(*value)
    })
}

/// 10^(dB/10), as `exp`: `libm::pow` is four times its code (1.6 KB) for a base that never changes.
fn power(db: f64) -> f64 {
    libm::exp(db * (core::f64::consts::LN_10 / 10.0))
}
