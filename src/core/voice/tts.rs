//! The voice session's speech path: TTS with a look-ahead of one sentence (P2), each sentence's
//! audio on its way to the player (whole or streamed), the TTS timeout, and the recovery text's
//! audio, synthesized once.

use super::turn::{Sentence, SpeakingTurn};
use super::{VoiceAction, VoiceCore, VoiceError, VoiceEvent, VoiceState};
use crate::core::time::Millis;
use alloc::borrow::ToOwned;

/// The recovery text's audio: synthesized once, then replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RecoveryAudio {
    Missing,
    Requested(u64),
    Cached,
}

impl VoiceCore {
    /// A synthesis finished: `ok` when it gave audio. Unknown (aborted) jobs are ignored: their
    /// audio never plays.
    pub fn on_synthesized(&mut self, job: u64, ok: bool, now: Millis) {
        if self.recovery_audio == RecoveryAudio::Requested(job) {
            self.recovery_audio = if ok {
                RecoveryAudio::Cached
            } else {
                RecoveryAudio::Missing
            };
        }
        let Some(turn) = self.turn.as_mut() else {
            return;
        };
        let Some(index) = turn.in_flight_index(job) else {
            return;
        };
        turn.in_flight = None;
        if let Some(latency) = turn.latency.as_mut().filter(|_| ok) {
            latency.first_audio_at.get_or_insert(now);
        }
        self.finish_synthesis(index, ok, now);
    }

    /// The job's audio could not be played (undecodable, or its turn was stopped meanwhile): the
    /// sentence counts as finished.
    pub fn on_play_failed(&mut self, job: u64, now: Millis) {
        if let Some(turn) = self.turn.as_mut() {
            if let Some(sentence) = turn.sentences.iter_mut().find(|s| s.job == Some(job)) {
                sentence.enqueued = false;
                sentence.finished = true;
            }
        }
        self.feed_tts(now);
        self.check_done();
    }

    /// One chunk (a sentence's audio) finished playing.
    pub fn on_chunk_ended(&mut self, job: u64, now: Millis) {
        if let Some(turn) = self.turn.as_mut() {
            if let Some(sentence) = turn.sentences.iter_mut().find(|s| s.job == Some(job)) {
                sentence.finished = true;
            }
        }
        self.feed_tts(now);
        self.check_done();
    }

    /// The sentence's audio is a stream (its `synthesize` resolved with one): its total length
    /// is known only once the stream closes.
    pub fn on_stream_opened(&mut self, job: u64) {
        if let Some(sentence) = self.sentence_mut(job) {
            sentence.streaming = true;
        }
    }

    /// The sentence's stream closed: every byte of its audio arrived.
    pub fn on_stream_closed(&mut self, job: u64) {
        if let Some(sentence) = self.sentence_mut(job) {
            sentence.streaming = false;
        }
    }

    /// The sentence's stream failed or stalled for `tts_timeout_ms` (`stalled`): it is skipped
    /// (whatever of it was already scheduled plays out), and the turn goes on. If some of it
    /// already sounded, the sentence is broken: heard text stops there when the turn is cut.
    pub fn on_stream_failed(&mut self, job: u64, stalled: bool, now: Millis) {
        let Some(turn) = self.turn.as_mut() else {
            return;
        };
        let Some(index) = turn
            .sentences
            .iter()
            .position(|s| s.job == Some(job) && !s.finished && !s.broken)
        else {
            return;
        };
        if let Some(sentence) = turn.sentences.get_mut(index) {
            sentence.streaming = false;
            if sentence.sounded {
                // Some of it is in the player and plays out: it ends with its chunk, and a
                // barge-in still stops it.
                sentence.broken = true;
            } else {
                sentence.enqueued = false;
            }
            if !sentence.recovery {
                turn.succeeded = turn.succeeded.saturating_sub(1);
            }
        }
        self.skip(index, stalled, now);
    }

    /// The first audio of the sentence of `job` was scheduled to start `lead_ms` from now on the
    /// audio clock (an event for timelines: first sound per sentence).
    pub fn on_sentence_audio(&mut self, job: u64, lead_ms: f64, now: Millis) {
        let Some(turn) = self.turn.as_mut() else {
            return;
        };
        let Some(index) = turn.sentences.iter().position(|s| s.job == Some(job)) else {
            return;
        };
        // `as` saturates: a negative or NaN lead is 0.
        let lead_us = (lead_ms * 1000.0) as u64;
        if let Some(sentence) = turn.sentences.get_mut(index) {
            sentence.sounded = true;
        }
        let latency = turn.latency.take();
        let event = VoiceEvent::SentenceAudio {
            turn_id: turn.turn_id.clone(),
            index,
            starts_in_us: lead_us,
        };
        self.push(VoiceAction::Event(event));
        // The turn's first sound: where its time went is known now.
        if let Some(mut latency) = latency {
            latency.first_audio_at.get_or_insert(now);
            latency.first_sound_at_us = Some(now.0.saturating_mul(1000).saturating_add(lead_us));
            self.push(VoiceAction::Event(VoiceEvent::TurnLatency(latency)));
        }
    }

    fn sentence_mut(&mut self, job: u64) -> Option<&mut Sentence> {
        self.turn
            .as_mut()?
            .sentences
            .iter_mut()
            .find(|s| s.job == Some(job))
    }

    /// When `handle_timeout` must be called next: a synthesis's deadline, or the pause's (V7).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Millis> {
        [self.tts_deadline(), self.pause_deadline()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Fires what is due. Early or repeated calls are harmless.
    pub fn handle_timeout(&mut self, now: Millis) {
        self.handle_tts_timeout(now);
        self.handle_pause_timeout(now);
    }

    fn tts_deadline(&self) -> Option<Millis> {
        self.turn
            .as_ref()
            .and_then(|turn| turn.in_flight)
            .map(|(_, deadline)| deadline)
    }

    fn handle_tts_timeout(&mut self, now: Millis) {
        let Some(turn) = self.turn.as_mut() else {
            return;
        };
        let Some((index, deadline)) = turn.in_flight else {
            return;
        };
        if now < deadline {
            return;
        }
        turn.in_flight = None;
        let job = turn.sentences.get(index).and_then(|s| s.job);
        if let Some(job) = job {
            if self.recovery_audio == RecoveryAudio::Requested(job) {
                self.recovery_audio = RecoveryAudio::Missing;
            }
            self.push(VoiceAction::AbortSynthesis { job });
        }
        self.skip(index, true, now);
    }

    fn finish_synthesis(&mut self, index: usize, ok: bool, now: Millis) {
        if !ok {
            self.skip(index, false, now);
            return;
        }
        let Some(turn) = self.turn.as_mut() else {
            return;
        };
        let Some(sentence) = turn.sentences.get_mut(index) else {
            return;
        };
        sentence.enqueued = true;
        turn.succeeded += 1;
        self.words.recent_speech.played(&sentence.text);
        let finished = VoiceEvent::TtsFinished {
            turn_id: turn.turn_id.clone(),
            index,
        };
        let action = VoiceAction::Play {
            job: sentence.job.unwrap_or_default(),
            turn_id: turn.turn_id.clone(),
            recovery: sentence.recovery,
        };
        self.push(VoiceAction::Event(finished));
        self.push(action);
        self.feed_tts(now);
    }

    fn skip(&mut self, index: usize, timed_out: bool, now: Millis) {
        let Some(turn) = self.turn.as_mut() else {
            return;
        };
        if let Some(sentence) = turn.sentences.get_mut(index) {
            // A broken stream's audio still plays: it finishes when its chunk ends.
            sentence.finished |= !sentence.broken;
            if !sentence.recovery {
                turn.failed += 1;
            }
        }
        let turn_id = turn.turn_id.clone();
        let error = if timed_out {
            VoiceError::TtsTimeout { turn_id }
        } else {
            VoiceError::TtsFailed { turn_id }
        };
        self.push(VoiceAction::Event(VoiceEvent::TtsFailed {
            turn_id: error.turn_id().to_owned(),
            index,
            code: error.code(),
        }));
        self.push(VoiceAction::Error(error));
        self.feed_tts(now);
        self.check_done();
    }

    /// Requests the next sentence when nothing is being synthesized and at most one sentence's
    /// audio waits or plays (a look-ahead of one).
    pub(super) fn feed_tts(&mut self, now: Millis) {
        let Some(turn) = self.turn.as_mut() else {
            return;
        };
        if self.state.is_terminal() || turn.in_flight.is_some() || turn.unfinished_audio() > 1 {
            return;
        }
        // Every sentence failed: the recovery text is spoken instead (once).
        if turn.text_complete && turn.all_failed() && !turn.wants_recovery {
            turn.wants_recovery = true;
        }
        if turn.wants_recovery && !turn.recovery_queued {
            turn.recovery_queued = true;
            let queued = VoiceEvent::SentenceQueued {
                turn_id: turn.turn_id.clone(),
                index: turn.sentences.len(),
                recovery: true,
                text: self.config.recovery_text.clone(),
            };
            turn.sentences
                .push(Sentence::recovery(&self.config.recovery_text));
            self.actions.push_back(VoiceAction::Event(queued));
        }
        let Some(index) = turn.next_unrequested() else {
            return;
        };
        let job = self.next_job;
        self.next_job = self.next_job.wrapping_add(1);
        let turn_id = turn.turn_id.clone();
        let Some(sentence) = turn.sentences.get_mut(index) else {
            return;
        };
        sentence.job = Some(job);
        if sentence.recovery && self.recovery_audio == RecoveryAudio::Cached {
            sentence.enqueued = true;
            self.words.recent_speech.played(&sentence.text);
            self.push(VoiceAction::Play {
                job,
                turn_id,
                recovery: true,
            });
            self.feed_tts(now);
            return;
        }
        if sentence.recovery {
            self.recovery_audio = RecoveryAudio::Requested(job);
        }
        let started = VoiceEvent::TtsStarted {
            turn_id: turn_id.clone(),
            index,
            recovery: sentence.recovery,
        };
        let action = VoiceAction::Synthesize {
            job,
            turn_id,
            text: sentence.text.clone(),
            recovery: sentence.recovery,
        };
        turn.in_flight = Some((index, now.after(self.config.tts_timeout_ms)));
        if let Some(latency) = turn.latency.as_mut() {
            latency.synthesize_at.get_or_insert(now);
        }
        self.push(VoiceAction::Event(started));
        self.push(action);
    }

    /// Back to listening once the turn has nothing left to say or play.
    pub(super) fn check_done(&mut self) {
        let done = self.turn.as_ref().is_some_and(SpeakingTurn::is_done);
        if done && !self.state.is_terminal() {
            if let Some(mut turn) = self.turn.take() {
                self.report_latency(&mut turn);
                if self.paused_at.take().is_some() {
                    // A turn that ended with nothing to play while paused: the player runs again.
                    self.push(VoiceAction::ResumePlayback {
                        turn_id: turn.turn_id.clone(),
                    });
                }
                if turn.failed > 0 {
                    // The history holds what was spoken, not a sentence TTS skipped (P3).
                    self.push(VoiceAction::SetHeard {
                        text: super::cut::spoken_of_finished(&turn),
                        turn_id: turn.turn_id,
                    });
                }
            }
            self.playback_started_at = None;
            self.set_state(VoiceState::Listening);
        }
    }
}
