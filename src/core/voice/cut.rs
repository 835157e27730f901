//! What the user heard of a cut turn (P3): each answer sentence's fate when the turn ended, the
//! player's measurement of the cut ones, and the session's measured speech rate for a stream cut
//! before all of it arrived.

use super::turn::{Sentence, SpeakingTurn};
use super::{VoiceAction, VoiceCore};
use crate::core::voice::echo_words::words_around;
use crate::core::voice::heard::{heard_text, SpokenSentence, FULL_TOLERANCE_MS};
use crate::core::voice::playback::ChunkHeard;
use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec::Vec;

/// Milliseconds of speech per character assumed before the session measured any: slower than
/// the TTS voices measured (espeak-ng 175 wpm ≈ 65 ms, OpenAI's voices ≈ 60–70 ms), so an
/// unmeasured estimate errs long and counts fewer words heard, never more (P3).
pub const DEFAULT_MS_PER_CHAR: f64 = 90.0;

/// What became of one answer sentence by the time its turn was cut (P3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fate {
    /// Its audio played to the end (the chunk ended).
    Played,
    /// Synthesis or decoding failed: it was never spoken and is left out.
    Skipped,
    /// Its audio went to the player: the audio clock says how much played.
    Cut(u64),
    /// Its audio was still streaming in: how much played is measured, its total length is
    /// estimated (see [`VoiceCore::estimated_ms`]).
    CutStream(u64),
    /// Its stream failed after some of it sounded: it never played to its end, and heard text
    /// stops in it (what played after it came after a gap).
    Broken(u64),
    /// Not yet synthesized: nothing of it played.
    Unplayed,
}

impl Fate {
    pub(super) fn of(sentence: &Sentence) -> Self {
        if let (true, Some(job)) = (sentence.broken, sentence.job) {
            return Fate::Broken(job);
        }
        match (sentence.job, sentence.enqueued, sentence.finished) {
            (Some(_), true, true) => Fate::Played,
            (Some(job), true, false) if sentence.streaming => Fate::CutStream(job),
            (Some(job), true, false) => Fate::Cut(job),
            (_, false, true) => Fate::Skipped,
            _ => Fate::Unplayed,
        }
    }
}

/// The text a turn that ran to its end spoke: its answer sentences that played, without those
/// TTS skipped, up to a stream that broke (what followed it came after a gap).
pub(super) fn spoken_of_finished(turn: &SpeakingTurn) -> String {
    let mut spoken: Vec<&str> = Vec::new();
    for sentence in turn.sentences.iter().filter(|sentence| !sentence.recovery) {
        match Fate::of(sentence) {
            Fate::Played => spoken.push(sentence.text.trim()),
            Fate::Skipped => {}
            _ => break,
        }
    }
    spoken.retain(|text| !text.is_empty());
    spoken.join(" ")
}

impl VoiceCore {
    /// A sentence's audio played in full and lasted `duration_ms`: one more measurement of the
    /// session's speech rate.
    pub fn on_audio_measured(&mut self, job: u64, duration_ms: f64) {
        let chars = self
            .turn
            .as_ref()
            .and_then(|turn| turn.sentences.iter().find(|s| s.job == Some(job)))
            // A broken stream's audio is only part of its text: no measure of the rate.
            .filter(|s| !s.broken)
            .map(|s| s.text.trim().chars().count());
        if let Some(chars) = chars.filter(|chars| *chars > 0) {
            if duration_ms.is_finite() && duration_ms > 0.0 {
                self.measured_ms += duration_ms;
                self.measured_chars += chars as f64;
            }
        }
    }

    /// The estimated length of `text` spoken: the session's measured milliseconds per
    /// character, or [`DEFAULT_MS_PER_CHAR`] before any sentence played in full.
    #[must_use]
    pub fn estimated_ms(&self, text: &str) -> f64 {
        let per_char = if self.measured_chars > 0.0 {
            self.measured_ms / self.measured_chars
        } else {
            DEFAULT_MS_PER_CHAR
        };
        per_char * text.trim().chars().count() as f64
    }

    /// What played of a stopped turn, per job, from the audio clock: the heard text goes to the
    /// history before anything queued after the stop (the next turn must see it).
    pub fn on_playback_stopped(&mut self, turn_id: &str, chunks: &[(u64, ChunkHeard)]) {
        let Some(index) = self.cut_turns.iter().position(|(cut, _)| cut == turn_id) else {
            return;
        };
        let (_, texts) = self.cut_turns.swap_remove(index);
        let text = self.heard_of(&texts, chunks);
        self.actions.push_front(VoiceAction::SetHeard {
            turn_id: turn_id.to_owned(),
            text,
        });
    }

    /// What played of the paused turn, per job, when the player paused (V7): the agent's words
    /// about that place are what a leak of its echo would be transcribed as (V8).
    pub fn on_playback_paused(&mut self, turn_id: &str, chunks: &[(u64, ChunkHeard)]) {
        let Some(turn) = self.turn.as_ref() else {
            return;
        };
        if turn.turn_id != turn_id || !self.is_paused() {
            return;
        }
        let mut texts: Vec<(Fate, String)> = Vec::new();
        let mut sounded = chunks.iter().any(|(_, chunk)| chunk.played_ms > 0.0);
        for sentence in &turn.sentences {
            let fate = Fate::of(sentence);
            sounded |= fate == Fate::Played;
            if fate != Fate::Skipped {
                texts.push((fate, sentence.text.clone()));
            }
        }
        // Nothing sounded yet (a thinking turn, audio scheduled ahead): nothing could leak.
        if !sounded {
            return;
        }
        let heard = self.heard_of(&texts, chunks);
        let spoken = texts.iter().map(|(_, text)| text.as_str());
        self.words.paused_on = words_around(heard.split_whitespace().count(), spoken);
    }

    /// The text heard of a turn's sentences (their fates and texts, in order) by the player's
    /// measure of each job's chunk.
    fn heard_of(&self, texts: &[(Fate, String)], chunks: &[(u64, ChunkHeard)]) -> String {
        // P3: only the audio clock says what played. A sentence whose chunk ended played in
        // full; a skipped one was never spoken; any other without a measured chunk (still
        // synthesizing, decoding, waiting for a gesture, dropped) played nothing.
        let chunk_of = |job: u64| {
            chunks
                .iter()
                .find(|(played_job, _)| *played_job == job)
                .map(|(_, chunk)| chunk)
        };
        let spoken: Vec<SpokenSentence<'_>> = texts
            .iter()
            .filter(|(fate, _)| *fate != Fate::Skipped)
            .map(|(fate, text)| {
                let estimate = self.estimated_ms(text);
                let measured = match fate {
                    Fate::Played => Some((1.0, 1.0)),
                    Fate::Cut(job) => chunk_of(*job).map(|c| (c.duration_ms, c.played_ms)),
                    // What arrived is a lower bound of its length; the estimate may be longer.
                    // The longer of the two counts fewer words: never more than the clock allows.
                    Fate::CutStream(job) => {
                        chunk_of(*job).map(|c| (c.duration_ms.max(estimate), c.played_ms))
                    }
                    // Longer than what arrived, and longer than what played: never in full.
                    Fate::Broken(job) => chunk_of(*job).map(|c| {
                        let at_least = c.played_ms + 2.0 * FULL_TOLERANCE_MS;
                        (c.duration_ms.max(estimate).max(at_least), c.played_ms)
                    }),
                    Fate::Skipped | Fate::Unplayed => None,
                };
                let (duration_ms, played_ms) = measured.unwrap_or((f64::INFINITY, 0.0));
                SpokenSentence {
                    text,
                    duration_ms,
                    played_ms,
                }
            })
            .collect();
        heard_text(&spoken)
    }
}
