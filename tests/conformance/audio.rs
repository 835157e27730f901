//! Audio on the wire as the profile says (framing, rate, frame sizes, pacing, the start and its
//! answer, receipts), and nothing the user said lost to a drop (L4: the watermark, half-open
//! sockets).

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use super::{all, assert_run, every, Conversation, Fixture};
use crate::transcriber_sim::*;
use turnguard::core::stt::protocol::{CloseClass, Framing, Watermark};
use turnguard::core::stt::transcriber::{Action, State, TranscriberConfig};

#[test]
fn audio_goes_out_in_the_profiles_framing_rate_and_frame_sizes() {
    all(|f| {
        let name = f.name();
        let pacing = f.profile.pacing;
        let piece = f.wire_frame_bytes();
        // Sizes on the wire of the profile's smallest and largest frames.
        let wire = |ms: u64| usize::try_from(ms).unwrap_or(usize::MAX) * piece / 20;
        let (min, max) = (wire(pacing.min_frame_ms), wire(pacing.max_frame_ms));
        let mut c = Conversation::opened(f);
        let mut actions = c.speak(20);
        // A tail under the smallest size goes out too on stop, padded.
        c.d.t.stop(c.d.now);
        actions.extend(c.d.take());
        actions.extend(c.d.advance(1_000));
        let binary = actions
            .iter()
            .filter(|a| matches!(a, Action::SendBinary(_)))
            .count();
        let sizes = audio_sizes(&actions);
        match f.profile.framing {
            Framing::Binary => assert_eq!(binary, sizes.len(), "{name}: binary frames"),
            Framing::Base64Json => assert_eq!(binary, 0, "{name}: text frames only"),
        }
        if min == 0 {
            let rate = f.profile.sample_rate.unwrap_or(16_000);
            assert_eq!(sizes, [piece; 20], "{name}: 20 ms frames at {rate} Hz");
        } else {
            assert!(sizes.iter().all(|&s| s >= min), "{name}: {sizes:?}");
            if 20 % (f.held_frames() + 1) != 0 {
                assert_eq!(sizes.last(), Some(&min), "{name}: the tail padded");
            }
        }
        assert_run(f, &sent(&actions), 1, 20, "every frame once, in order");
        // One frame of 3 s: split where the protocol has a largest size.
        let mut c = Conversation::opened(f);
        let three_seconds: Vec<u8> = (1..=150).flat_map(frame).collect();
        assert!(c.d.t.send_audio(three_seconds, c.d.now));
        let mut actions = c.d.take();
        actions.extend(c.d.advance(4_000));
        let sizes = audio_sizes(&actions);
        if max == 0 {
            assert_eq!(sizes, [piece * 150], "{name}: whole");
        } else {
            assert!(sizes.iter().all(|&s| s <= max), "{name}: {sizes:?}");
            assert_eq!(sizes.iter().sum::<usize>(), piece * 150, "{name}");
        }
    });
}

#[test]
fn the_start_goes_first_and_audio_flows_when_the_protocol_allows() {
    all(|f| {
        let name = f.name();
        let mut c = Conversation::new(f);
        c.capture(3);
        c.d.start();
        if let Some(start) = f.start {
            c.d.t.set_start_config(Some(start.config.into()));
        }
        c.provisioned();
        let opened = c.d.open();
        let first = messages(&opened);
        let audio_at = opened.iter().position(is_audio).unwrap_or(opened.len());
        assert_eq!(
            messages(&opened[..audio_at]),
            first,
            "{name}: before any audio"
        );
        match f.start {
            Some(start) => {
                assert_eq!(first.len(), 1, "{name}: {first:?}");
                assert!(first[0].starts_with(start.prefix), "{name}: {}", first[0]);
                let members = start.config.trim_start_matches('{');
                assert!(
                    first[0].ends_with(members),
                    "{name}: {} has {members}",
                    first[0]
                );
            }
            None => assert_eq!(first, [] as [String; 0], "{name}"),
        }
        let Some(started) = f.started else {
            assert!(
                !f.profile.audio_after_start,
                "{name}: audio waits for no answer"
            );
            assert_eq!(sent(&opened), [1, 2, 3], "{name}: audio flows on open");
            return;
        };
        assert!(f.profile.audio_after_start, "{name}");
        let mut held = opened;
        held.extend(c.speak(1));
        held.extend(c.d.advance(100));
        c.d.t.stop(c.d.now);
        held.extend(c.d.take());
        assert_eq!(
            sent(&held),
            [] as [u32; 0],
            "{name}: no audio before the answer"
        );
        assert_eq!(messages(&held), first, "{name}: nor the finish");
        let flowing = c.hear(started);
        assert_eq!(
            sent(&flowing),
            [1, 2, 3, 4],
            "{name}: then all of it, in order"
        );
        assert_eq!(messages(&flowing), (f.finish)(4), "{name}: then the finish");
    });
}

#[test]
fn a_backlog_goes_out_as_fast_as_the_profile_allows_and_no_faster() {
    all(|f| {
        let name = f.name();
        let pacing = f.profile.pacing;
        let rate = u64::from(pacing.rate_percent);
        let mut c = Conversation::new(f);
        c.capture(200); // 4 s captured before the socket opens
        let mut actions = c.connect();
        let opened_at = c.d.now.0;
        let at_open = sent(&actions).len();
        let (mut sent_ms, mut done_at) = (20 * at_open as u64, opened_at);
        for _ in 0..600 {
            let step = c.d.advance(10);
            let elapsed = c.d.now.0 - opened_at;
            if !sent(&step).is_empty() {
                done_at = elapsed;
            }
            sent_ms += 20 * sent(&step).len() as u64;
            actions.extend(step);
            if rate > 0 {
                let budget = elapsed * rate / 100 + pacing.allowance_ms;
                assert!(
                    sent_ms <= budget,
                    "{name}: {sent_ms} ms sent by {elapsed} ms"
                );
            }
        }
        let beyond_allowance = sent_ms.saturating_sub(pacing.allowance_ms);
        match (beyond_allowance * 100).checked_div(rate) {
            None => assert_eq!(at_open, 200, "{name}: unpaced: all of it at once"),
            Some(needed) => assert!(
                done_at <= needed + 100,
                "{name}: done at {done_at} ms, not {needed}"
            ),
        }
        assert_run(f, &sent(&actions), 1, 200, "all of it, in order");
    });
}

/// One second of audio (50 frames), of which the server confirms up to frame 30 (600 ms): by
/// acknowledging each frame as it comes, or by finalizing the words (receipts of all of it are
/// not a watermark).
fn speak_and_confirm_600_ms(c: &mut Conversation) {
    let f = c.fixture;
    match f.profile.watermark {
        Watermark::AcknowledgedBytes => {
            let ack = f
                .ack
                .expect("acknowledged bytes come with an acknowledgment");
            for n in 1..=50 {
                c.speak(1);
                if n <= 30 {
                    c.hear(&ack(FRAME_BYTES as u64));
                }
            }
        }
        Watermark::FinalizedTime => {
            c.speak(50);
            if let Some(receipt) = f.receipt {
                c.hear(&receipt(50));
            }
            assert_eq!(finals(&c.say_over("what is", 0, 600)), ["what is"]);
        }
    }
}

#[test]
fn a_drop_resends_what_the_server_did_not_confirm_in_order_and_nothing_it_did() {
    all(|f| {
        let mut c = Conversation::opened(f);
        speak_and_confirm_600_ms(&mut c);
        c.d.close(1006);
        let mut resent = c.reconnect();
        resent.extend(c.speak(5));
        resent.extend(c.d.advance(2_000));
        assert_run(
            f,
            &sent(&resent),
            31,
            55,
            "from the watermark (frame 30 ends at 600 ms)",
        );
    });
}

#[test]
fn words_finalized_before_a_drop_start_the_utterances_final() {
    every(
        |f| f.piece.is_some(),
        |f| {
            let piece = f.piece.expect("applies");
            let mut c = Conversation::opened(f);
            c.speak(50);
            let said = c.next("what is", 0, 600);
            assert_eq!(finals(&c.hear_all(piece(&said))), [] as [String; 0]);
            c.d.close(1006);
            let resent = c.reconnect();
            assert_eq!(sent(&resent).first(), Some(&31), "{}", f.name());
            let actions = c.say_over("the weather", 0, 400);
            assert_eq!(finals(&actions), ["what is the weather"], "{}", f.name());
        },
    );
}

#[test]
fn audio_runs_no_further_ahead_of_the_servers_receipts_than_its_window() {
    all(|f| {
        let name = f.name();
        let mut c = Conversation::opened(f);
        let out = c.capture(400); // 8 s at once
        let Some(receipt) = f.receipt else {
            assert_eq!(
                f.profile.receipt_window_ms, 0,
                "{name}: a window needs receipts"
            );
            let mut all = out;
            all.extend(c.d.advance(9_000));
            assert_run(f, &sent(&all), 1, 400, "no receipts: nothing waits for one");
            return;
        };
        let window = u32::try_from(f.profile.receipt_window_ms / 20).unwrap_or(u32::MAX);
        assert!(window < 400, "{name}");
        assert_eq!(sent(&out), (1..=window).collect::<Vec<_>>(), "{name}");
        assert_eq!(
            sent(&c.d.advance(5_000)),
            [] as [u32; 0],
            "{name}: no timer"
        );
        let moved = c.hear(&receipt(50));
        assert_eq!(sent(&moved), (window + 1..=window + 50).collect::<Vec<_>>());
        let rest = c.hear(&receipt(u64::from(window) + 50));
        assert_eq!(
            sent(&rest),
            (window + 51..=400).collect::<Vec<_>>(),
            "{name}"
        );
        assert_eq!(c.d.t.state(), State::Open, "{name}");
    });
}

/// Whether the server confirms audio as it arrives, and the message that does it for the
/// `frames`-th frame of the connection.
fn liveness(f: &Fixture) -> Option<Box<dyn Fn(u64) -> String>> {
    if let Some(ack) = f.ack {
        return Some(Box::new(move |_| ack(FRAME_BYTES as u64)));
    }
    f.receipt
        .map(|receipt| Box::new(receipt) as Box<dyn Fn(u64) -> String>)
}

#[test]
fn a_socket_that_stops_confirming_audio_is_half_open_one_that_never_did_is_not() {
    all(|f| {
        let name = f.name();
        let mut c = Conversation::opened(f);
        let Some(confirm) = liveness(f) else {
            c.speak(1_000);
            assert_eq!(c.d.t.state(), State::Open, "{name}: nothing to miss");
            return;
        };
        for n in 1..=1_000 {
            c.speak(1);
            c.hear(&confirm(n));
        }
        assert_eq!(c.d.t.state(), State::Open, "{name}: confirmed as it goes");
        let confirmed = c.frames();
        c.d.log.clear();
        c.speak(100); // 2 s, never confirmed
        let actions = c.d.advance(10_000);
        assert!(actions.contains(&Action::Close), "{name}: closed");
        let at = |wanted: &dyn Fn(&Action) -> bool| {
            let found = c.d.log.iter().find(|(_, action)| wanted(action));
            found.map(|(at, _)| at.0).expect("logged")
        };
        let owed_since = at(&|a| sent(std::slice::from_ref(a)).first() == Some(&(confirmed + 1)));
        let closed_at = at(&|a| *a == Action::Close);
        let timeout = TranscriberConfig::DEFAULT_ACK_TIMEOUT_MS;
        assert_eq!(
            closed_at - owed_since,
            timeout,
            "{name}: silent for ackTimeoutMs"
        );
        let report = c.d.t.take_close_report().expect("reported");
        assert_eq!(
            (report.code, report.class),
            (1006, CloseClass::Retry),
            "{name}"
        );
        let first = match f.profile.watermark {
            Watermark::AcknowledgedBytes => confirmed + 1,
            // Nothing finalized: the newest `bufferMs` of audio is kept.
            Watermark::FinalizedTime => c.frames() + 1 - BUFFER_FRAMES,
        };
        let resent = sent(&c.reconnect());
        let last = resent.last().copied().unwrap_or(0);
        assert_eq!(
            resent,
            (first..=last).collect::<Vec<_>>(),
            "{name}: resent in order"
        );
        assert!(last > first, "{name}: {resent:?}");
    });
}

/// Frames the audio buffer holds at most: `bufferMs` (10 s) of 20 ms frames.
const BUFFER_FRAMES: u32 = (TranscriberConfig::DEFAULT_BUFFER_MS / 20) as u32;
