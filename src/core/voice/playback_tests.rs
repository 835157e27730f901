//! Unit tests of the speech schedule (`playback.rs`).

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]
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
    schedule.failed(a, 0.0);
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

#[test]
fn a_stream_plays_part_by_part_gapless_and_holds_the_next_sentence_until_it_closes() {
    let mut schedule = PlaybackSchedule::new();
    let a = schedule.enqueue("t1").unwrap();
    let b = schedule.enqueue("t1").unwrap();
    assert!(
        schedule.decoded(b, 1.0),
        "the next sentence came whole, early"
    );
    assert!(schedule.append(a, 0.1));
    let first = schedule.schedule(1.0, true);
    assert_eq!(first.len(), 1, "b waits behind the open stream");
    assert!(first[0].first_of_turn);
    assert!(schedule.append(a, 0.2));
    let second = schedule.schedule(1.05, true);
    assert_eq!((second[0].seq, second[0].start), (a, 1.1));
    assert_eq!(second[0].gap_ms, 0.0);
    assert!(!second[0].first_of_turn);
    assert!(!schedule.part_ended(a, 1.1).chunk_done, "more parts play");
    assert!(!schedule.close(a, 1.2).chunk_done);
    let third = schedule.schedule(1.2, true);
    assert_eq!(third[0].seq, b);
    assert!((third[0].start - 1.3).abs() < 1e-9);
    let done = schedule.part_ended(a, 1.3);
    assert!(done.chunk_done && done.turn.is_none());
    assert!((done.chunk_seconds - 0.3).abs() < 1e-9);
}

#[test]
fn a_part_that_comes_late_starts_at_once_and_reports_its_gap() {
    let mut schedule = PlaybackSchedule::new();
    let a = schedule.enqueue("t1").unwrap();
    schedule.append(a, 0.1);
    schedule.schedule(0.0, true);
    schedule.append(a, 0.1);
    let late = schedule.schedule(0.25, true);
    assert_eq!(late[0].start, 0.25);
    assert!((late[0].gap_ms - 150.0).abs() < 1e-6);
    assert!(late[0].after_silence);
    // Heard counts the two spans, not the gap between them.
    assert!((schedule.heard_ms("t1", 0.3) - 150.0).abs() < 1e-6);
    let stopped = schedule.stop(0.3);
    assert!((stopped.chunks[0].duration_ms - 200.0).abs() < 1e-6);
    assert!((stopped.chunks[0].played_ms - 150.0).abs() < 1e-6);
}

#[test]
fn a_stopped_stream_drops_its_later_parts_and_is_named_for_cancelling() {
    let mut schedule = PlaybackSchedule::new();
    let a = schedule.enqueue("t1").unwrap();
    let b = schedule.enqueue("t1").unwrap();
    schedule.append(a, 0.5);
    schedule.schedule(0.0, true);
    let stopped = schedule.stop(0.2);
    assert_eq!(
        stopped.sources,
        [a, b],
        "the playing stream and the look-ahead one"
    );
    assert!(!schedule.append(a, 0.5), "a part after the stop is dropped");
    assert!(!schedule.is_queued(a));
    assert!(schedule.schedule(0.3, true).is_empty());
}

#[test]
fn a_stream_failing_after_it_played_is_closed_not_dropped() {
    let mut schedule = PlaybackSchedule::new();
    let a = schedule.enqueue("t1").unwrap();
    let b = schedule.enqueue("t1").unwrap();
    schedule.append(a, 0.5);
    schedule.schedule(0.0, true);
    schedule.append(a, 0.5);
    assert!(
        !schedule.failed(a, 0.1).chunk_done,
        "its scheduled part still plays"
    );
    schedule.decoded(b, 0.2);
    assert_eq!(schedule.schedule(0.1, true)[0].start, 0.5, "b right after");
    assert!(schedule.part_ended(a, 0.5).chunk_done);
    let c = schedule.enqueue("t1").unwrap();
    schedule.failed(c, 0.5);
    assert!(
        !schedule.is_queued(c),
        "nothing scheduled: it leaves the line"
    );
}

#[test]
fn buffered_audio_counts_what_is_scheduled_ahead_and_what_waits() {
    let mut schedule = PlaybackSchedule::new();
    let a = schedule.enqueue("t1").unwrap();
    let b = schedule.enqueue("t1").unwrap();
    schedule.append(a, 1.0);
    schedule.append(b, 2.0);
    schedule.schedule(0.0, true);
    assert!((schedule.buffered_seconds(0.25) - 2.75).abs() < 1e-9);
}
