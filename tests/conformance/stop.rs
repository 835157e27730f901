//! The end of a stream on every protocol: `stop()` sends the finish messages once the backlog is
//! out, the last words still make their final, the server's end message (or its close) ends the
//! stop, and nothing connects after it (R4); `dispose()` finishes and closes at once.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use super::{all, every, Conversation, Fixture};
use crate::transcriber_sim::*;
use turnguard::core::stt::transcriber::{Action, State};

/// The server ends the stream: its end messages, or its close where it has none.
fn server_ends(c: &mut Conversation) -> Vec<Action> {
    let f: &Fixture = c.fixture;
    if f.end.is_empty() {
        c.d.close(1000)
    } else {
        c.hear_all(f.end.iter().copied())
    }
}

#[test]
fn stop_finishes_after_the_backlog_and_the_servers_end_ends_it() {
    all(|f| {
        let name = f.name();
        let mut c = Conversation::new(f);
        // About 2 s waiting for the socket, in whole frames of the protocol's smallest size.
        let backlog = 100 - 100 % (f.held_frames() + 1);
        c.capture(backlog);
        let mut actions = c.connect();
        let audio_at = actions.iter().position(is_audio).unwrap_or(actions.len());
        let stop_at = actions.len();
        c.d.t.stop(c.d.now);
        actions.extend(c.d.take());
        actions.extend(c.d.advance(3_000));
        assert!(
            !c.d.t.send_audio(frame(backlog + 1), c.d.now),
            "{name}: no audio after stop"
        );
        c.d.t.stop(c.d.now);
        assert_eq!(c.d.take(), [], "{name}: stop is idempotent");
        let finish_at = actions[stop_at..]
            .iter()
            .position(|a| matches!(a, Action::SendText(_)) && !is_audio(a))
            .map_or(actions.len(), |at| stop_at + at);
        let frames = actions[audio_at..finish_at]
            .iter()
            .filter(|a| is_audio(a))
            .count();
        let backlog_frames: Vec<u32> = (1..=backlog).collect();
        assert_eq!(
            sent(&actions[..finish_at]),
            backlog_frames,
            "{name}: the backlog first"
        );
        assert_eq!(
            sent(&actions[finish_at..]),
            [] as [u32; 0],
            "{name}: the finish is last"
        );
        let finish = (f.finish)(frames as u64);
        assert_eq!(
            messages(&actions[stop_at..]),
            finish,
            "{name}: the finish, once"
        );
        assert_eq!(c.d.t.state(), State::Open, "{name}: waiting for the end");
        let ended = server_ends(&mut c);
        let tail: &[Action] = if f.end.is_empty() {
            &[Action::StateChanged(State::Stopped)]
        } else {
            &[Action::Close, Action::StateChanged(State::Stopped)]
        };
        assert!(ended.ends_with(tail), "{name}: {ended:?}");
        assert_eq!(c.d.close(1000), [], "{name}");
        assert_eq!(
            c.d.advance(600_000),
            [],
            "{name}: nothing connects after stop"
        );
        assert_eq!(c.d.connects().len(), 1, "{name}");
        assert_eq!(
            c.d.t.stats().frames_discarded,
            0,
            "{name}: every frame went out"
        );
    });
}

/// Where audio is paced and small frames are joined, the last one, padded on `stop()`, goes out
/// when the pace allows it, and the finish after it.
#[test]
fn stop_pads_the_tail_of_a_paced_backlog_and_finishes_after_it() {
    every(
        |f| f.profile.pacing.rate_percent > 0 && f.held_frames() > 0,
        |f| {
            let mut c = Conversation::new(f);
            let backlog = 100 - 100 % (f.held_frames() + 1) + 1; // one frame over
            c.capture(backlog);
            let mut actions = c.connect();
            c.d.t.stop(c.d.now);
            actions.extend(c.d.take());
            actions.extend(c.d.advance(3_000));
            let at = actions
                .iter()
                .position(|a| messages(std::slice::from_ref(a)).len() == 1);
            let finish_at = at.expect("the finish");
            assert_eq!(
                sent(&actions[..finish_at]),
                (1..=backlog).collect::<Vec<_>>()
            );
        },
    );
}

#[test]
fn the_last_words_make_their_final_while_stopping() {
    all(|f| {
        let name = f.name();
        let mut c = Conversation::opened(f);
        c.speak(5);
        c.d.t.stop(c.d.now);
        c.d.take();
        c.d.advance(500);
        assert_eq!(c.d.t.state(), State::Open, "{name}: draining");
        let last = c.say("last words");
        assert_eq!(finals(&last), ["last words"], "{name}");
        server_ends(&mut c);
        assert_eq!(c.d.t.state(), State::Stopped, "{name}");
    });
}

#[test]
fn dispose_finishes_and_closes_at_once() {
    all(|f| {
        let mut c = Conversation::opened(f);
        c.d.t.dispose(c.d.now);
        let mut expected: Vec<Action> = (f.finish)(0).into_iter().map(Action::SendText).collect();
        expected.extend([Action::Close, Action::StateChanged(State::Stopped)]);
        assert_eq!(c.d.take(), expected, "{}", f.name());
        assert_eq!(c.d.advance(600_000), [], "{}", f.name());
    });
}
