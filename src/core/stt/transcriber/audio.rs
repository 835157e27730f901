//! The audio a transcriber keeps for its socket (rule L4): bounded, in order, at least once.
//!
//! Frames wait in one queue, oldest first. The first `in_flight` of them went out on the current
//! socket and wait for confirmation; the rest wait for a socket. Three rules:
//! - **Bounded.** The queue never holds more than `bound` bytes. Over it, the oldest frames go:
//!   a frame that never went out is *dropped* (counted, and reported as
//!   [`TranscriberError::AudioDropped`] at the first drop of an outage, then the rest when a socket
//!   opens or the transcriber ends); one that already went out once is only forgotten.
//! - **In order.** Frames go out in the order they came, and a socket that closes puts its
//!   unconfirmed frames back at the front, ahead of anything newer.
//! - **At least once.** A frame handed to a socket is confirmed by the protocol's watermark. Where
//!   the session survives a reconnect (Gladia), by its acknowledgments once it sends them — each
//!   confirms the oldest unconfirmed frames its byte range covers, at least one — otherwise by the
//!   socket staying open [`UNACKED_CONFIRM_MS`] after the send. Where every connection is a new
//!   session, only by what the server finalized: a frame is done with once the final results cover
//!   its end on its connection's audio clock; everything else is sent again on the next one.
//! - **Within the receipt window.** Where the server receipts each frame (Speechmatics'
//!   `AudioAdded`), no more than the protocol's window of audio is out ahead of the receipts; a
//!   receipt is flow control and liveness, never the watermark.
//! - **Paced.** A protocol may cap how fast audio goes out on one connection (a resent backlog
//!   must not run faster than the provider allows) and the size of frames (small ones are joined,
//!   large ones split). So a socket that dies right after it opened does not
//!   take the buffered audio with it. Acknowledgments are matched by length, never by the
//!   session's byte offsets: a server that got a frame twice counts it twice, and an offset would
//!   then confirm a frame it never received. A frame that arrived but whose acknowledgment was
//!   lost is sent twice; none is lost to a flap.

use super::{Action, TranscriberError};
use crate::core::queue::Queue;
use crate::core::stt::protocol::{pcm_bytes_for_ms, pcm_ms_for_bytes, Pacing, Watermark};
use crate::core::time::Millis;
use alloc::vec::Vec;

/// Without acknowledgments, audio handed to a socket counts as delivered once the socket stayed
/// open this long after the send: long enough to catch a socket that dies right after it opened
/// or mid-burst (the browser reports a reset within a round trip), short enough to resend little.
pub const UNACKED_CONFIRM_MS: u64 = 250;

#[derive(Debug)]
struct Frame {
    bytes: Vec<u8>,
    /// When it was last handed to a socket.
    sent_at: Millis,
    /// Handed to a socket at least once, so the next send is a resend.
    sent: bool,
    /// Bytes the current connection had received once this frame went out on it.
    end_offset: u64,
}

/// Frame counters since creation.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct AudioCounts {
    pub(super) sent: u64,
    pub(super) resent: u64,
    pub(super) dropped: u64,
    pub(super) discarded: u64,
}

#[derive(Debug)]
pub(super) struct AudioBuffer {
    frames: Queue<Frame>,
    bytes: u64,
    bound: u64,
    sample_rate: u32,
    in_flight: usize,
    /// Only the watermark confirms, not time: the session acknowledges audio, or the protocol
    /// confirms by finalized time.
    acknowledging: bool,
    watermark: Watermark,
    pacing: Pacing,
    /// Bytes and frames sent on the current connection, and when it opened (pacing, finalized
    /// time, the finish's frame count).
    connection_bytes: u64,
    pub(super) connection_frames: u64,
    /// Most bytes out ahead of the server's receipts; 0 for no receipts.
    window: u64,
    /// Sizes of the frames sent on this connection and not receipted yet, oldest first, and
    /// when the oldest went out or the last receipt came.
    unreceipted: Queue<u64>,
    unreceipted_bytes: u64,
    receipt_due_since: Option<Millis>,
    connection_opened: Millis,
    /// `stop`: a last frame under the protocol's smallest size goes out too, padded.
    flush_tail: bool,
    /// When a frame last went out.
    pub(super) last_sent_at: Option<Millis>,
    /// When the current socket last acknowledged audio.
    last_ack_at: Option<Millis>,
    dropped_unreported: u64,
    dropped_bytes_unreported: u64,
    /// This outage has reported its first drop.
    outage_reported: bool,
    pub(super) counts: AudioCounts,
}

impl AudioBuffer {
    pub(super) fn new(
        bound: u64,
        sample_rate: u32,
        watermark: Watermark,
        pacing: Pacing,
        window_ms: u64,
    ) -> Self {
        AudioBuffer {
            connection_frames: 0,
            window: pcm_bytes_for_ms(window_ms, sample_rate),
            unreceipted: Queue::new(),
            unreceipted_bytes: 0,
            receipt_due_since: None,
            frames: Queue::new(),
            bytes: 0,
            bound,
            sample_rate,
            in_flight: 0,
            acknowledging: watermark == Watermark::FinalizedTime,
            watermark,
            pacing,
            connection_bytes: 0,
            connection_opened: Millis(0),
            flush_tail: false,
            last_sent_at: None,
            last_ack_at: None,
            dropped_unreported: 0,
            dropped_bytes_unreported: 0,
            outage_reported: false,
            counts: AudioCounts::default(),
        }
    }

    /// Bytes kept (waiting or unconfirmed).
    pub(super) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Frames waiting for a socket.
    pub(super) fn waiting(&self) -> u64 {
        self.frames.len().saturating_sub(self.in_flight) as u64
    }

    /// Keeps a frame; with a socket open it goes out at once (as pacing allows).
    pub(super) fn push(
        &mut self,
        bytes: Vec<u8>,
        now: Millis,
        open: bool,
        actions: &mut Queue<Action>,
    ) {
        self.bytes = self.bytes.saturating_add(bytes.len() as u64);
        let max = self.frame_bytes(self.pacing.max_frame_ms);
        if max > 0 && bytes.len() as u64 > max {
            let size = usize::try_from(max).unwrap_or(usize::MAX);
            for piece in bytes.chunks(size) {
                self.keep(piece.to_vec(), now);
            }
        } else {
            self.keep(bytes, now);
        }
        if open {
            self.confirm_by_time(now);
            self.transmit_waiting(now, actions);
        }
        self.enforce_bound(actions);
    }

    /// A socket opened: everything waiting goes out, in order (as pacing allows); drops not
    /// reported yet are reported.
    pub(super) fn on_open(&mut self, now: Millis, actions: &mut Queue<Action>) {
        self.connection_bytes = 0;
        self.connection_frames = 0;
        self.connection_opened = now;
        self.last_ack_at = None;
        self.forget_receipts();
        self.transmit_waiting(now, actions);
        self.report_drops(actions);
        self.outage_reported = false;
    }

    /// The socket is gone: what it did not confirm waits again, at the front.
    pub(super) fn on_socket_lost(&mut self, now: Millis) {
        self.confirm_by_time(now);
        self.in_flight = 0;
        self.forget_receipts();
    }

    /// The server received the first `frames` frames of this connection: the window moves on
    /// and what it held back goes out.
    pub(super) fn on_received(&mut self, frames: u64, now: Millis, actions: &mut Queue<Action>) {
        let sent_before = self
            .connection_frames
            .saturating_sub(self.unreceipted.len() as u64);
        let newly = frames.saturating_sub(sent_before);
        for _ in 0..newly {
            let Some(size) = self.unreceipted.pop_front() else {
                break;
            };
            self.unreceipted_bytes = self.unreceipted_bytes.saturating_sub(size);
        }
        if newly > 0 {
            self.receipt_due_since = (!self.unreceipted.is_empty()).then_some(now);
            self.transmit_waiting(now, actions);
        }
    }

    /// Since when the current socket owes a receipt: the later of its last receipt and the
    /// oldest frame it has not receipted (L4: silent past `ack_timeout_ms` from then: half-open).
    pub(super) fn owed_receipt_since(&self) -> Option<Millis> {
        self.receipt_due_since
    }

    fn forget_receipts(&mut self) {
        self.unreceipted.clear();
        self.unreceipted_bytes = 0;
        self.receipt_due_since = None;
    }

    /// A new session: it has not acknowledged anything yet.
    pub(super) fn on_new_session(&mut self) {
        self.acknowledging = self.watermark == Watermark::FinalizedTime;
    }

    /// An acknowledgment of `bytes` bytes confirms the oldest unconfirmed frames it covers, at
    /// least one. Acknowledgments come on the socket the frames went out on, in order, so a
    /// coalesced or lost one only leaves frames unconfirmed (sent again), never the reverse.
    pub(super) fn on_acknowledged(&mut self, bytes: u64, now: Millis) {
        if self.watermark != Watermark::AcknowledgedBytes {
            return;
        }
        self.acknowledging = true;
        self.last_ack_at = Some(now);
        let mut covered = 0u64;
        while self.in_flight > 0 && bytes > 0 {
            let Some(size) = self.frames.front().map(|frame| frame.bytes.len() as u64) else {
                break;
            };
            if covered > 0 && covered.saturating_add(size) > bytes {
                break;
            }
            covered = covered.saturating_add(size);
            self.pop_front();
            self.in_flight -= 1;
        }
    }

    /// The server finalized the current connection's audio up to `ms`: frames that end at or
    /// before it are done with.
    pub(super) fn on_finalized(&mut self, ms: u64) {
        if self.watermark != Watermark::FinalizedTime {
            return;
        }
        let mark = pcm_bytes_for_ms(ms, self.sample_rate);
        while self.in_flight > 0 && self.frames.front().is_some_and(|f| f.end_offset <= mark) {
            self.pop_front();
            self.in_flight -= 1;
        }
    }

    /// Since when the current socket owes an acknowledgment: the later of its last one and the
    /// oldest frame it has not acknowledged. `None` unless the session acknowledges audio and a
    /// frame waits for it (L4: a socket silent past `ack_timeout_ms` from then is half-open).
    pub(super) fn owed_ack_since(&self) -> Option<Millis> {
        if self.watermark != Watermark::AcknowledgedBytes
            || !self.acknowledging
            || self.in_flight == 0
        {
            return None;
        }
        let oldest = self.frames.front()?.sent_at;
        Some(self.last_ack_at.map_or(oldest, |at| at.max(oldest)))
    }

    /// Whether every frame kept has gone out on the current socket.
    pub(super) fn drained(&self) -> bool {
        self.in_flight >= self.frames.len()
    }

    /// `stop`: nothing more will come, so a last frame under the smallest size goes out too.
    pub(super) fn flush(&mut self, now: Millis, actions: &mut Queue<Action>) {
        self.flush_tail = true;
        self.transmit_waiting(now, actions);
    }

    /// When the next waiting frame may go out, if pacing holds one back.
    pub(super) fn next_send_at(&self) -> Option<Millis> {
        let rate = u64::from(self.pacing.rate_percent);
        let frame = self.frames.get(self.in_flight)?;
        if rate == 0 || self.held_tail(self.in_flight) || !self.window_allows(frame.bytes.len()) {
            // A frame the window holds back goes out on the next receipt, not on a timer.
            return None;
        }
        // A short last frame goes out padded to the smallest size: pace it by what is sent.
        let size = (frame.bytes.len() as u64).max(self.frame_bytes(self.pacing.min_frame_ms));
        let total = self.connection_bytes.saturating_add(size);
        let ahead =
            pcm_ms_for_bytes(total, self.sample_rate).saturating_sub(self.pacing.allowance_ms);
        Some(self.connection_opened.after((ahead * 100).div_ceil(rate)))
    }

    /// Sends what pacing allows now.
    pub(super) fn on_pace(&mut self, now: Millis, actions: &mut Queue<Action>) {
        self.transmit_waiting(now, actions);
    }

    /// The transcriber is over: frames that never went out are discarded (counted), drops not
    /// reported yet are reported.
    pub(super) fn release(&mut self, actions: &mut Queue<Action>) {
        let never_sent = self.frames.iter().filter(|frame| !frame.sent).count();
        self.counts.discarded += never_sent as u64;
        self.frames.clear();
        self.bytes = 0;
        self.in_flight = 0;
        self.report_drops(actions);
    }

    fn frame_bytes(&self, ms: u64) -> u64 {
        pcm_bytes_for_ms(ms, self.sample_rate)
    }

    /// Queues a frame, joined to the last one while that one waits and is under the smallest size.
    fn keep(&mut self, bytes: Vec<u8>, now: Millis) {
        let min = self.frame_bytes(self.pacing.min_frame_ms);
        let waiting = self.frames.len() > self.in_flight;
        if let Some(last) = self.frames.back_mut().filter(|_| waiting && min > 0) {
            let joined = (last.bytes.len() + bytes.len()) as u64;
            let max = pcm_bytes_for_ms(self.pacing.max_frame_ms, self.sample_rate);
            if !last.sent && (last.bytes.len() as u64) < min && (max == 0 || joined <= max) {
                last.bytes.extend_from_slice(&bytes);
                return;
            }
        }
        self.frames.push_back(Frame {
            bytes,
            sent_at: now,
            sent: false,
            end_offset: 0,
        });
    }

    /// Whether the frame at `index` is a last frame under the smallest size, kept back to grow.
    fn held_tail(&self, index: usize) -> bool {
        let min = self.frame_bytes(self.pacing.min_frame_ms);
        !self.flush_tail
            && index + 1 == self.frames.len()
            && self
                .frames
                .get(index)
                .is_some_and(|f| (f.bytes.len() as u64) < min)
    }

    /// Whether `bytes` more may go out ahead of the server's receipts.
    fn window_allows(&self, bytes: usize) -> bool {
        self.window == 0 || self.unreceipted_bytes.saturating_add(bytes as u64) <= self.window
    }

    /// Whether `bytes` more may go out on this connection at `now`.
    fn pace_allows(&self, bytes: u64, now: Millis) -> bool {
        let rate = u64::from(self.pacing.rate_percent);
        if rate == 0 {
            return true;
        }
        let elapsed = now.since(self.connection_opened).saturating_mul(rate) / 100;
        let budget = pcm_bytes_for_ms(
            elapsed.saturating_add(self.pacing.allowance_ms),
            self.sample_rate,
        );
        self.connection_bytes.saturating_add(bytes) <= budget
    }

    fn transmit_waiting(&mut self, now: Millis, actions: &mut Queue<Action>) {
        let min = usize::try_from(self.frame_bytes(self.pacing.min_frame_ms)).unwrap_or(0);
        while self.in_flight < self.frames.len() {
            if self.held_tail(self.in_flight) {
                break;
            }
            let Some(size) = self
                .frames
                .get(self.in_flight)
                .map(|f| f.bytes.len().max(min))
            else {
                break;
            };
            if !self.pace_allows(size as u64, now) || !self.window_allows(size) {
                break;
            }
            let Some(frame) = self.frames.get_mut(self.in_flight) else {
                break;
            };
            if frame.bytes.len() < size {
                // A last frame under the smallest size: padded with silence.
                let added = size - frame.bytes.len();
                frame.bytes.resize(size, 0);
                self.bytes = self.bytes.saturating_add(added as u64);
            }
            self.connection_bytes = self.connection_bytes.saturating_add(size as u64);
            self.connection_frames += 1;
            if self.window > 0 {
                self.unreceipted.push_back(size as u64);
                self.unreceipted_bytes = self.unreceipted_bytes.saturating_add(size as u64);
                self.receipt_due_since.get_or_insert(now);
            }
            frame.sent_at = now;
            frame.end_offset = self.connection_bytes;
            self.counts.sent += 1;
            if frame.sent {
                self.counts.resent += 1;
            }
            frame.sent = true;
            actions.push_back(Action::SendBinary(frame.bytes.clone()));
            self.in_flight += 1;
            self.last_sent_at = Some(now);
        }
    }

    /// Forgets sent frames that stayed on an open socket long enough, unless the session
    /// acknowledges audio (then only acknowledgments confirm).
    fn confirm_by_time(&mut self, now: Millis) {
        while self.in_flight > 0 && !self.acknowledging {
            let confirmed = self
                .frames
                .front()
                .is_some_and(|frame| now.since(frame.sent_at) >= UNACKED_CONFIRM_MS);
            if !confirmed {
                break;
            }
            self.pop_front();
            self.in_flight -= 1;
        }
    }

    fn enforce_bound(&mut self, actions: &mut Queue<Action>) {
        while self.bytes > self.bound {
            let Some(frame) = self.pop_front() else {
                break;
            };
            if self.in_flight > 0 {
                self.in_flight -= 1;
            }
            if frame.sent {
                continue;
            }
            self.counts.dropped += 1;
            self.dropped_unreported += 1;
            self.dropped_bytes_unreported = self
                .dropped_bytes_unreported
                .saturating_add(frame.bytes.len() as u64);
            if !self.outage_reported {
                self.outage_reported = true;
                self.report_drops(actions);
            }
        }
    }

    fn pop_front(&mut self) -> Option<Frame> {
        let frame = self.frames.pop_front()?;
        self.bytes = self.bytes.saturating_sub(frame.bytes.len() as u64);
        Some(frame)
    }

    fn report_drops(&mut self, actions: &mut Queue<Action>) {
        if self.dropped_unreported == 0 {
            return;
        }
        let ms = pcm_ms_for_bytes(self.dropped_bytes_unreported, self.sample_rate);
        actions.push_back(Action::Error(TranscriberError::AudioDropped {
            frames: self.dropped_unreported,
            ms,
            total_frames: self.counts.dropped,
        }));
        self.dropped_unreported = 0;
        self.dropped_bytes_unreported = 0;
    }
}
