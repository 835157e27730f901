//! The schedule of a speech player on the audio clock (P1, P3, P4).
//!
//! Audio of a turn arrives as chunks (one per sentence, say). Each chunk takes a place in line when
//! it is enqueued, before it is decoded, so chunks play in enqueue order even when their decodes
//! finish out of order. A decoded chunk at the head of the line starts exactly where the previous
//! one ends on the audio clock (gapless), or at `now` when the line had run dry.
//!
//! Heard time is measured, not guessed: it is the audio clock (`currentTime`, seconds) against
//! the start each buffer was scheduled at, clamped to the buffer's duration — never the wall clock.
//!
//! The schedule is sans-IO: the shell reads `currentTime`, passes it in, and performs what comes
//! back (start these buffers at these times, stop those sources).

use std::collections::VecDeque;

/// Turns whose later audio is dropped after a stop. Bounded so memory does not grow with a long
/// session; a turn stopped this many stops ago is long over.
const STOPPED_TURNS_KEPT: usize = 64;

/// One enqueued chunk, from its place in line to the end of its playback.
#[derive(Clone, Debug, PartialEq)]
struct Chunk {
    seq: u64,
    turn_id: String,
    /// Seconds of audio, once decoded.
    duration: Option<f64>,
    /// Audio-clock second it was scheduled to start at, once scheduled.
    start: Option<f64>,
}

/// A buffer the shell must start now, at `start` on the audio clock.
#[derive(Clone, Debug, PartialEq)]
pub struct Scheduled {
    pub seq: u64,
    pub turn_id: String,
    pub start: f64,
    /// True for the first buffer of a turn's playback: the shell reports `onPlaybackStart`.
    pub first_of_turn: bool,
    /// True for a later buffer of the turn that starts after silence (the line had run dry):
    /// the agent starts sounding again, which restarts the session's echo guard (V4).
    pub after_silence: bool,
}

/// How much of one chunk played, for heard text (P3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChunkHeard {
    pub seq: u64,
    pub duration_ms: f64,
    pub played_ms: f64,
}

/// What `stop` silenced.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Stopped {
    /// The turn that was playing (or first in line), if any.
    pub turn_id: Option<String>,
    /// Milliseconds of that turn that played, from the audio clock.
    pub heard_ms: f64,
    /// Every chunk of that turn that was scheduled, in play order.
    pub chunks: Vec<ChunkHeard>,
    /// Sources the shell must stop (scheduled, not yet ended).
    pub sources: Vec<u64>,
}

/// A turn whose audio ran out: every enqueued chunk of it has played.
#[derive(Clone, Debug, PartialEq)]
pub struct Ended {
    pub turn_id: String,
    pub heard_ms: f64,
}

/// The line of chunks and where the next one starts on the audio clock.
#[derive(Debug, Default)]
pub struct PlaybackSchedule {
    line: VecDeque<Chunk>,
    /// Chunks of the playing turn that already ended: still count for its heard time.
    played: Vec<Chunk>,
    /// Audio-clock second where the last scheduled buffer ends.
    cursor: f64,
    next_seq: u64,
    stopped_turns: VecDeque<String>,
}

impl PlaybackSchedule {
    #[must_use]
    pub fn new() -> Self {
        PlaybackSchedule::default()
    }

    /// Takes a place in line for a chunk of `turn_id`; `None` when that turn was stopped (its
    /// audio is dropped, even if it was requested before the stop).
    pub fn enqueue(&mut self, turn_id: &str) -> Option<u64> {
        if self.is_stopped(turn_id) {
            return None;
        }
        let seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        self.line.push_back(Chunk {
            seq,
            turn_id: turn_id.to_owned(),
            duration: None,
            start: None,
        });
        Some(seq)
    }

    /// Whether audio of `turn_id` is dropped because the turn was stopped.
    #[must_use]
    pub fn is_stopped(&self, turn_id: &str) -> bool {
        self.stopped_turns.iter().any(|stopped| stopped == turn_id)
    }

    /// The chunk's audio is decoded and lasts `seconds`. False when the chunk is no longer in
    /// line (stopped meanwhile): the shell discards the buffer.
    pub fn decoded(&mut self, seq: u64, seconds: f64) -> bool {
        match self.line.iter_mut().find(|chunk| chunk.seq == seq) {
            Some(chunk) => {
                chunk.duration = Some(if seconds.is_finite() {
                    seconds.max(0.0)
                } else {
                    0.0
                });
                true
            }
            None => false,
        }
    }

    /// The chunk could not be decoded: it leaves the line so the ones behind it are not held up.
    pub fn failed(&mut self, seq: u64) {
        self.line.retain(|chunk| chunk.seq != seq);
    }

    /// Schedules every decoded chunk at the head of the line, in order, at `now` (the audio
    /// clock, seconds). Nothing while the context is not running (P4: audio waits in order).
    pub fn schedule(&mut self, now: f64, running: bool) -> Vec<Scheduled> {
        let mut out = Vec::new();
        if !running {
            return out;
        }
        let playing_turn = self.playing_turn().map(str::to_owned);
        for chunk in &mut self.line {
            if chunk.start.is_some() {
                continue;
            }
            let Some(duration) = chunk.duration else {
                break; // keep enqueue order: wait for this decode
            };
            let silent_before = self.cursor < now;
            let start = if self.cursor > now { self.cursor } else { now };
            chunk.start = Some(start);
            self.cursor = start + duration;
            let first_of_turn = playing_turn.as_deref() != Some(chunk.turn_id.as_str())
                && !out.iter().any(|s: &Scheduled| s.turn_id == chunk.turn_id);
            out.push(Scheduled {
                seq: chunk.seq,
                turn_id: chunk.turn_id.clone(),
                start,
                first_of_turn,
                after_silence: silent_before && !first_of_turn,
            });
        }
        if let Some(first) = out.first() {
            if first.first_of_turn {
                // A new turn's playback: earlier turns' chunks no longer count.
                let turn = first.turn_id.clone();
                self.played.retain(|chunk| chunk.turn_id == turn);
            }
        }
        out
    }

    /// The turn whose audio is playing: the oldest scheduled chunk in line, else the last played.
    fn playing_turn(&self) -> Option<&str> {
        self.line
            .iter()
            .find(|chunk| chunk.start.is_some())
            .or(self.played.last())
            .map(|chunk| chunk.turn_id.as_str())
    }

    /// A scheduled chunk's source ended. When that was the last chunk in line of its turn, the
    /// turn's audio ran out.
    pub fn ended(&mut self, seq: u64, now: f64) -> Option<Ended> {
        let index = self.line.iter().position(|chunk| chunk.seq == seq)?;
        let chunk = self.line.remove(index)?;
        let turn_id = chunk.turn_id.clone();
        self.played.push(chunk);
        if self.line.iter().any(|chunk| chunk.turn_id == turn_id) {
            return None;
        }
        Some(Ended {
            heard_ms: self.heard_ms(&turn_id, now),
            turn_id,
        })
    }

    /// Milliseconds of `turn_id` played by audio time `now`.
    #[must_use]
    pub fn heard_ms(&self, turn_id: &str, now: f64) -> f64 {
        self.chunks_of(turn_id, now)
            .iter()
            .map(|chunk| chunk.played_ms)
            .sum()
    }

    // `max`/`min`, not `clamp`: its NaN assertion pulls float formatting into the wasm.
    #[allow(clippy::manual_clamp)]
    fn chunks_of(&self, turn_id: &str, now: f64) -> Vec<ChunkHeard> {
        let mut chunks: Vec<ChunkHeard> = self
            .played
            .iter()
            .chain(self.line.iter())
            .filter(|chunk| chunk.turn_id == turn_id)
            .filter_map(|chunk| {
                let (start, duration) = (chunk.start?, chunk.duration?);
                Some(ChunkHeard {
                    seq: chunk.seq,
                    duration_ms: duration * 1000.0,
                    played_ms: (now - start).max(0.0).min(duration) * 1000.0,
                })
            })
            .collect();
        chunks.sort_by_key(|chunk| chunk.seq);
        chunks
    }

    /// Silences everything at audio time `now`: every turn in line is stopped (its later audio is
    /// dropped), and the playing turn's heard time is measured.
    pub fn stop(&mut self, now: f64) -> Stopped {
        let turn_id = self
            .playing_turn()
            .or(self.line.front().map(|chunk| chunk.turn_id.as_str()))
            .map(str::to_owned);
        let mut stopped = Stopped::default();
        if let Some(turn) = &turn_id {
            stopped.chunks = self.chunks_of(turn, now);
            stopped.heard_ms = stopped.chunks.iter().map(|chunk| chunk.played_ms).sum();
        }
        stopped.sources = self
            .line
            .iter()
            .filter(|chunk| chunk.start.is_some())
            .map(|chunk| chunk.seq)
            .collect();
        let mut turns: Vec<String> = self.line.drain(..).map(|chunk| chunk.turn_id).collect();
        turns.extend(turn_id.clone());
        for turn in turns {
            self.mark_stopped(&turn);
        }
        self.played.clear();
        self.cursor = now;
        stopped.turn_id = turn_id;
        stopped
    }

    /// Drops the later audio of `turn_id` without touching what plays (a turn that ended).
    pub fn mark_stopped(&mut self, turn_id: &str) {
        if self.is_stopped(turn_id) {
            return;
        }
        if self.stopped_turns.len() == STOPPED_TURNS_KEPT {
            self.stopped_turns.pop_front();
        }
        self.stopped_turns.push_back(turn_id.to_owned());
    }

    /// True while any chunk waits or plays.
    #[must_use]
    pub fn is_busy(&self) -> bool {
        !self.line.is_empty()
    }

    /// Audio-clock second where the last scheduled buffer ends.
    #[must_use]
    pub fn cursor(&self) -> f64 {
        self.cursor
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn chunks_play_back_to_back_in_enqueue_order_even_when_decoded_out_of_order() {
        let mut schedule = PlaybackSchedule::new();
        let a = schedule.enqueue("t1").unwrap();
        let b = schedule.enqueue("t1").unwrap();
        let c = schedule.enqueue("t1").unwrap();
        assert!(schedule.decoded(c, 0.3));
        assert!(schedule.decoded(b, 0.2));
        assert!(
            schedule.schedule(1.0, true).is_empty(),
            "waits for the first decode"
        );
        assert!(schedule.decoded(a, 0.5));
        let scheduled = schedule.schedule(1.0, true);
        let starts: Vec<(u64, f64)> = scheduled.iter().map(|s| (s.seq, s.start)).collect();
        assert_eq!(starts, [(a, 1.0), (b, 1.5), (c, 1.7)]);
        assert!(scheduled[0].first_of_turn && !scheduled[1].first_of_turn);
        assert!(
            !scheduled[1].after_silence && !scheduled[2].after_silence,
            "gapless"
        );
    }

    #[test]
    fn heard_is_the_audio_clock_against_scheduled_starts() {
        let mut schedule = PlaybackSchedule::new();
        let a = schedule.enqueue("t1").unwrap();
        let b = schedule.enqueue("t1").unwrap();
        schedule.decoded(a, 0.5);
        schedule.decoded(b, 0.5);
        schedule.schedule(2.0, true);
        assert!((schedule.heard_ms("t1", 2.7) - 700.0).abs() < 1e-6);
        let stopped = schedule.stop(2.7);
        assert_eq!(stopped.turn_id.as_deref(), Some("t1"));
        assert!((stopped.heard_ms - 700.0).abs() < 1e-6);
        assert_eq!(stopped.sources, [a, b]);
        assert!((stopped.chunks[1].played_ms - 200.0).abs() < 1e-6);
    }

    #[test]
    fn audio_of_a_stopped_turn_is_dropped_even_when_its_decode_finishes_later() {
        let mut schedule = PlaybackSchedule::new();
        let a = schedule.enqueue("t1").unwrap();
        schedule.stop(0.0);
        assert!(
            !schedule.decoded(a, 0.5),
            "in line before the stop, decoded after"
        );
        assert_eq!(schedule.enqueue("t1"), None, "enqueued after the stop");
        assert!(schedule.enqueue("t2").is_some(), "another turn plays");
    }

    #[test]
    fn a_suspended_context_schedules_nothing_until_it_runs() {
        let mut schedule = PlaybackSchedule::new();
        let a = schedule.enqueue("t1").unwrap();
        schedule.decoded(a, 0.5);
        assert!(schedule.schedule(0.0, false).is_empty());
        assert_eq!(schedule.schedule(0.0, true).len(), 1);
    }

    #[test]
    fn a_line_that_ran_dry_starts_at_now_and_the_turn_end_is_reported_once() {
        let mut schedule = PlaybackSchedule::new();
        let a = schedule.enqueue("t1").unwrap();
        schedule.decoded(a, 0.5);
        schedule.schedule(0.0, true);
        let ended = schedule.ended(a, 0.6).unwrap();
        assert!((ended.heard_ms - 500.0).abs() < 1e-6);
        let b = schedule.enqueue("t1").unwrap();
        schedule.decoded(b, 0.5);
        let scheduled = schedule.schedule(3.0, true);
        assert_eq!(scheduled[0].start, 3.0);
        assert!(!scheduled[0].first_of_turn, "same turn, continued");
        assert!(scheduled[0].after_silence, "after the line ran dry");
        assert!((schedule.heard_ms("t1", 3.1) - 600.0).abs() < 1e-6);
        assert_eq!(schedule.ended(b, 3.6).unwrap().turn_id, "t1");
        assert_eq!(schedule.ended(b, 3.6), None);
    }

    #[test]
    fn a_failed_decode_does_not_hold_up_the_line() {
        let mut schedule = PlaybackSchedule::new();
        let a = schedule.enqueue("t1").unwrap();
        let b = schedule.enqueue("t1").unwrap();
        schedule.decoded(b, 0.2);
        schedule.failed(a);
        assert_eq!(schedule.schedule(0.0, true)[0].seq, b);
    }

    #[test]
    fn stopped_turns_are_bounded() {
        let mut schedule = PlaybackSchedule::new();
        for n in 0..200 {
            schedule.mark_stopped(&format!("t{n}"));
        }
        assert!(schedule.stopped_turns.len() <= STOPPED_TURNS_KEPT);
        assert!(schedule.is_stopped("t199"));
    }
}
