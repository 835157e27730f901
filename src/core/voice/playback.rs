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

use crate::core::queue::Queue;
use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec::Vec;

/// Turns whose later audio is dropped after a stop. Bounded so memory does not grow with a long
/// session; a turn stopped this many stops ago is long over.
const STOPPED_TURNS_KEPT: usize = 64;

/// One enqueued chunk, from its place in line to the end of its playback. A chunk is one
/// sentence's audio: one part when it came whole, many when it streams in.
#[derive(Clone, Debug, PartialEq)]
struct Chunk {
    seq: u64,
    turn_id: String,
    /// Parts that arrived and wait to be scheduled: their seconds, in order.
    pending: Queue<f64>,
    /// More parts may come (not yet decoded, or a stream still arriving).
    open: bool,
    /// Scheduled parts whose source has not ended yet.
    playing: u32,
    /// Where its scheduled parts sit on the audio clock: (start, seconds), contiguous parts merged,
    /// so only a gap (the stream fell behind) adds an entry.
    spans: Vec<(f64, f64)>,
}

impl Chunk {
    fn arrived_seconds(&self) -> f64 {
        self.spans.iter().map(|(_, seconds)| seconds).sum::<f64>()
            + self.pending.iter().sum::<f64>()
    }

    fn done(&self) -> bool {
        !self.open && self.pending.is_empty() && self.playing == 0
    }
}

/// A buffer the shell must start now, at `start` on the audio clock: the oldest part of its
/// chunk that waits (the shell keeps a chunk's parts in arrival order).
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
    /// The chunk's first part: its sentence starts sounding here.
    pub first_of_chunk: bool,
    /// Milliseconds of silence before this part of a streamed chunk: the stream fell behind
    /// playback and the part starts at once, late (an underrun). 0 when gapless.
    pub gap_ms: f64,
}

/// How much of one chunk played, for heard text (P3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChunkHeard {
    pub seq: u64,
    /// Seconds of audio that arrived (the whole chunk once it is complete), in milliseconds.
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
    /// Chunks whose sources the shell must stop (scheduled, not yet ended), and every chunk
    /// dropped from the line (its stream is cancelled).
    pub sources: Vec<u64>,
}

/// A turn whose audio ran out: every enqueued chunk of it has played.
#[derive(Clone, Debug, PartialEq)]
pub struct Ended {
    pub turn_id: String,
    pub heard_ms: f64,
}

/// What the end of one part (or the close of a stream) finished.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PartEnded {
    /// The whole chunk played: every part of it ended and no more come.
    pub chunk_done: bool,
    /// Seconds of the whole chunk, when it is done.
    pub chunk_seconds: f64,
    /// Its turn's audio ran out with it.
    pub turn: Option<Ended>,
}

/// The line of chunks and where the next one starts on the audio clock.
#[derive(Debug, Default)]
pub struct PlaybackSchedule {
    line: Queue<Chunk>,
    /// Chunks of the playing turn that already ended: still count for its heard time.
    played: Vec<Chunk>,
    /// Audio-clock second where the last scheduled buffer ends.
    cursor: f64,
    next_seq: u64,
    stopped_turns: Queue<String>,
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
            pending: Queue::new(),
            open: true,
            playing: 0,
            spans: Vec::new(),
        });
        Some(seq)
    }

    /// Whether audio of `turn_id` is dropped because the turn was stopped.
    #[must_use]
    pub fn is_stopped(&self, turn_id: &str) -> bool {
        self.stopped_turns.iter().any(|stopped| stopped == turn_id)
    }

    /// The chunk's audio is decoded, whole, and lasts `seconds`. False when the chunk is no
    /// longer in line (stopped meanwhile): the shell discards the buffer.
    pub fn decoded(&mut self, seq: u64, seconds: f64) -> bool {
        let kept = self.append(seq, seconds);
        if kept {
            self.close(seq, 0.0);
        }
        kept
    }

    /// One more part of the chunk's audio arrived (a stream), lasting `seconds`. False when the
    /// chunk is no longer in line (stopped meanwhile): the shell drops the part and cancels the
    /// stream.
    pub fn append(&mut self, seq: u64, seconds: f64) -> bool {
        match self.chunk_mut(seq) {
            Some(chunk) if chunk.open => {
                chunk.pending.push_back(if seconds.is_finite() {
                    seconds.max(0.0)
                } else {
                    0.0
                });
                true
            }
            _ => false,
        }
    }

    /// No more parts come for the chunk: the ones behind it may play once its parts have. When
    /// every part already played, the chunk is done (and perhaps its turn).
    pub fn close(&mut self, seq: u64, now: f64) -> PartEnded {
        match self.chunk_mut(seq) {
            Some(chunk) => chunk.open = false,
            None => return PartEnded::default(),
        }
        self.finish_if_done(seq, now)
    }

    /// The chunk could not be decoded: it leaves the line so the ones behind it are not held up.
    /// A stream that fails after some of it was scheduled is closed instead: what was scheduled
    /// plays out (stopping it mid-word would click), nothing more is added.
    pub fn failed(&mut self, seq: u64, now: f64) -> PartEnded {
        let scheduled = self
            .line
            .iter()
            .find(|chunk| chunk.seq == seq)
            .is_some_and(|chunk| !chunk.spans.is_empty());
        if scheduled {
            if let Some(chunk) = self.chunk_mut(seq) {
                chunk.pending.clear();
            }
            return self.close(seq, now);
        }
        self.line.retain(|chunk| chunk.seq != seq);
        PartEnded::default()
    }

    fn chunk_mut(&mut self, seq: u64) -> Option<&mut Chunk> {
        self.line.iter_mut().find(|chunk| chunk.seq == seq)
    }

    /// Schedules every part that waits at the head of the line, in order, at `now` (the audio
    /// clock, seconds). Nothing while the context is not running (P4: audio waits in order).
    pub fn schedule(&mut self, now: f64, running: bool) -> Vec<Scheduled> {
        let mut out = Vec::new();
        if !running {
            return out;
        }
        let playing_turn = self.playing_turn().map(str::to_owned);
        for chunk in &mut self.line {
            while let Some(seconds) = chunk.pending.pop_front() {
                let silent_before = self.cursor < now;
                let start = if self.cursor > now { self.cursor } else { now };
                let continues_stream = !chunk.spans.is_empty();
                let gap_ms = if continues_stream && silent_before {
                    (now - self.cursor) * 1000.0
                } else {
                    0.0
                };
                match chunk.spans.last_mut() {
                    // Float sums drift: a part within a microsecond of the span's end continues it.
                    Some((span_start, span)) if (start - (*span_start + *span)).abs() < 1e-6 => {
                        *span += seconds;
                    }
                    _ => chunk.spans.push((start, seconds)),
                }
                chunk.playing = chunk.playing.saturating_add(1);
                self.cursor = start + seconds;
                let first_of_turn = playing_turn.as_deref() != Some(chunk.turn_id.as_str())
                    && !out.iter().any(|s: &Scheduled| s.turn_id == chunk.turn_id);
                out.push(Scheduled {
                    seq: chunk.seq,
                    turn_id: chunk.turn_id.clone(),
                    start,
                    first_of_chunk: !continues_stream,
                    first_of_turn,
                    after_silence: silent_before && !first_of_turn,
                    gap_ms,
                });
            }
            if chunk.open {
                break; // keep enqueue order: wait for this decode or the rest of this stream
            }
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
            .find(|chunk| !chunk.spans.is_empty())
            .or(self.played.last())
            .map(|chunk| chunk.turn_id.as_str())
    }

    /// A scheduled chunk's (only) source ended. When that was the last chunk in line of its
    /// turn, the turn's audio ran out.
    pub fn ended(&mut self, seq: u64, now: f64) -> Option<Ended> {
        self.part_ended(seq, now).turn
    }

    /// One scheduled part of a chunk ended on the audio clock.
    pub fn part_ended(&mut self, seq: u64, now: f64) -> PartEnded {
        match self.chunk_mut(seq) {
            Some(chunk) => chunk.playing = chunk.playing.saturating_sub(1),
            None => return PartEnded::default(),
        }
        self.finish_if_done(seq, now)
    }

    fn finish_if_done(&mut self, seq: u64, now: f64) -> PartEnded {
        let Some(index) = self.line.iter().position(|chunk| chunk.seq == seq) else {
            return PartEnded::default();
        };
        if !self.line.get(index).is_some_and(Chunk::done) {
            return PartEnded::default();
        }
        let Some(chunk) = self.line.remove(index) else {
            return PartEnded::default();
        };
        let turn_id = chunk.turn_id.clone();
        let chunk_seconds = chunk.arrived_seconds();
        self.played.push(chunk);
        let turn = if self.line.iter().any(|chunk| chunk.turn_id == turn_id) {
            None
        } else {
            Some(Ended {
                heard_ms: self.heard_ms(&turn_id, now),
                turn_id,
            })
        };
        PartEnded {
            chunk_done: true,
            chunk_seconds,
            turn,
        }
    }

    /// Milliseconds of `turn_id` played by audio time `now`.
    #[must_use]
    pub fn heard_ms(&self, turn_id: &str, now: f64) -> f64 {
        self.heard_chunks(turn_id, now)
            .iter()
            .map(|chunk| chunk.played_ms)
            .sum()
    }

    /// What of `turn_id` played by audio time `now`, chunk by chunk in `seq` order.
    #[must_use]
    // `max`/`min`, not `clamp`: its NaN assertion pulls float formatting into the wasm.
    #[allow(clippy::manual_clamp)]
    pub fn heard_chunks(&self, turn_id: &str, now: f64) -> Vec<ChunkHeard> {
        let mut chunks: Vec<ChunkHeard> = Vec::new();
        let heard = self
            .played
            .iter()
            .chain(self.line.iter())
            .filter(|chunk| chunk.turn_id == turn_id && !chunk.spans.is_empty())
            .map(|chunk| ChunkHeard {
                seq: chunk.seq,
                duration_ms: chunk.arrived_seconds() * 1000.0,
                played_ms: chunk
                    .spans
                    .iter()
                    .map(|(start, seconds)| (now - start).max(0.0).min(*seconds))
                    .sum::<f64>()
                    * 1000.0,
            });
        // In order of `seq`, each put in its place: a few chunks, and a sort would ship its
        // general algorithm (about 2 KB of code) for them.
        for chunk in heard {
            let at = chunks.partition_point(|other| other.seq < chunk.seq);
            chunks.insert(at, chunk);
        }
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
            stopped.chunks = self.heard_chunks(turn, now);
            stopped.heard_ms = stopped.chunks.iter().map(|chunk| chunk.played_ms).sum();
        }
        stopped.sources = self.line.iter().map(|chunk| chunk.seq).collect();
        let mut turns: Vec<String> = self.line.take_all().map(|chunk| chunk.turn_id).collect();
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

    /// Whether `seq` still has its place in line (not played out, failed or stopped).
    #[must_use]
    pub fn is_queued(&self, seq: u64) -> bool {
        self.line.iter().any(|chunk| chunk.seq == seq)
    }

    /// Seconds of audio ahead of `now`: scheduled beyond it, plus every part still waiting in
    /// line. A stream reader pauses while this is over its bound (look-ahead stays bounded).
    #[must_use]
    pub fn buffered_seconds(&self, now: f64) -> f64 {
        let pending: f64 = self
            .line
            .iter()
            .map(|chunk| chunk.pending.iter().sum::<f64>())
            .sum();
        (self.cursor - now).max(0.0) + pending
    }

    /// Audio-clock second where the last scheduled buffer ends.
    #[must_use]
    pub fn cursor(&self) -> f64 {
        self.cursor
    }
}

#[cfg(test)]
#[path = "playback_tests.rs"]
mod tests;
