//! Invariants of the live transcriber core over arbitrary schedules (L3, L4, R4): the audio
//! buffer never exceeds its bound, audio reaches the server in the order it was given, every frame
//! is accounted for, and nothing connects or provisions after the app detached.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod transcriber_sim;

use proptest::prelude::*;
use turnguard::core::stt::backoff::Jitter;
use turnguard::core::stt::protocol::{Credentials, Profile};
use turnguard::core::stt::protocols::{assemblyai, gladia};
use turnguard::core::stt::reconnect::ReconnectConfig;
use turnguard::core::stt::transcriber::{
    Action, State, Transcriber, TranscriberConfig, TranscriberError,
};
use turnguard::core::time::Millis;

#[derive(Clone, Debug)]
enum Input {
    /// A frame of this many samples (at least 2, so its number fits).
    Audio(usize),
    Start,
    Provisioned,
    ProvisionFailed(u16),
    Open,
    Close(u16),
    Ack(u64),
    Transcript(bool),
    Advance(u64),
    Stop,
    Dispose,
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        12 => (2usize..=400).prop_map(Input::Audio),
        1 => Just(Input::Start),
        3 => Just(Input::Provisioned),
        2 => prop_oneof![Just(0u16), Just(429), Just(503), Just(401)].prop_map(Input::ProvisionFailed),
        4 => Just(Input::Open),
        4 => prop_oneof![Just(1006u16), Just(1000), Just(4403), Just(1011)].prop_map(Input::Close),
        3 => (0u64..20_000).prop_map(Input::Ack),
        2 => any::<bool>().prop_map(Input::Transcript),
        6 => prop_oneof![0u64..=60, 0u64..=2_000].prop_map(Input::Advance),
        1 => Just(Input::Stop),
        1 => Just(Input::Dispose),
    ]
}

/// What the server side saw.
#[derive(Default)]
struct World {
    /// Frame numbers received per connection, in order.
    connections: Vec<Vec<u32>>,
    /// Every frame number in the order it was first received.
    first_seen: Vec<u32>,
    seen: std::collections::HashSet<u32>,
    dropped_reported: u64,
    detached: bool,
    actions_after_detach: Vec<Action>,
}

fn run(config: TranscriberConfig, inputs: Vec<Input>) -> Result<(), TestCaseError> {
    let bound = config.buffer_bytes();
    let mut t = Transcriber::new(config);
    let mut world = World::default();
    let mut now = Millis(0);
    let mut next_frame = 1u32;
    let mut session = 0u32;
    let drain = |t: &mut Transcriber, world: &mut World| {
        while let Some(action) = t.poll_action() {
            if world.detached
                && matches!(
                    action,
                    Action::Connect(_) | Action::Provision | Action::SendBinary(_)
                )
            {
                world.actions_after_detach.push(action.clone());
            }
            match action {
                Action::Connect(_) => world.connections.push(Vec::new()),
                Action::SendBinary(bytes) => {
                    let number = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
                    if let Some(connection) = world.connections.last_mut() {
                        connection.push(number);
                    }
                    if world.seen.insert(number) {
                        world.first_seen.push(number);
                    }
                }
                Action::Error(TranscriberError::AudioDropped { frames, .. }) => {
                    world.dropped_reported += frames;
                }
                _ => {}
            }
        }
    };
    for input in inputs {
        match input {
            Input::Audio(samples) => {
                let mut bytes = vec![0u8; samples * 2];
                bytes[..4].copy_from_slice(&next_frame.to_le_bytes());
                if t.send_audio(bytes, now) {
                    next_frame += 1;
                }
            }
            Input::Start => t.start(now),
            Input::Provisioned => {
                session += 1;
                t.on_provisioned(&format!("wss://stt.test/{session}"), now);
            }
            Input::ProvisionFailed(status) => t.on_provision_failed(status, now),
            Input::Open => t.on_open(now),
            Input::Close(code) => t.on_close(code, now),
            Input::Ack(bytes) => t.on_text(
                &format!(r#"{{"type":"audio_chunk","acknowledged":true,"data":{{"byte_range":[0,{bytes}]}}}}"#),
                now,
            ),
            Input::Transcript(is_final) => t.on_text(
                &format!(r#"{{"type":"transcript","data":{{"is_final":{is_final},"utterance":{{"text":"words"}}}}}}"#),
                now,
            ),
            Input::Advance(ms) => {
                now = now.after(ms);
                t.handle_timeout(now);
            }
            Input::Stop => {
                t.stop(now);
                world.detached = true;
            }
            Input::Dispose => {
                t.dispose(now);
                world.detached = true;
            }
        }
        drain(&mut t, &mut world);
        // L4: the buffer never exceeds its bound.
        prop_assert!(
            t.retained_bytes() <= bound,
            "{} > {}",
            t.retained_bytes(),
            bound
        );
        if t.state().is_terminal() {
            prop_assert_eq!(
                t.poll_timeout(),
                None,
                "a terminal transcriber has no timer"
            );
            prop_assert_eq!(t.stats().frames_buffered, 0);
        }
    }
    t.dispose(now);
    drain(&mut t, &mut world);
    // R4: after stop or dispose, nothing connects, provisions or sends audio (the stop drain
    // sends nothing either: audio is refused once stopping).
    prop_assert!(
        world.actions_after_detach.is_empty(),
        "{:?}",
        world.actions_after_detach
    );
    // Order: within a connection frames go out in the order they were given, and across the
    // whole run first receptions are in that order too (resends only repeat, never reorder).
    for connection in &world.connections {
        prop_assert!(
            connection.windows(2).all(|w| w[0] < w[1]),
            "{:?}",
            connection
        );
    }
    prop_assert!(
        world.first_seen.windows(2).all(|w| w[0] < w[1]),
        "{:?}",
        world.first_seen
    );
    // Accounting: every frame given was sent, dropped over the bound, or discarded at the end.
    let stats = t.stats();
    let given = u64::from(next_frame - 1);
    prop_assert_eq!(
        world.first_seen.len() as u64 + stats.frames_dropped + stats.frames_discarded,
        given,
        "sent {} dropped {} discarded {} of {}",
        world.first_seen.len(),
        stats.frames_dropped,
        stats.frames_discarded,
        given
    );
    // Every drop was reported.
    prop_assert_eq!(world.dropped_reported, stats.frames_dropped);
    prop_assert!(matches!(t.state(), State::Stopped | State::Failed));
    Ok(())
}

/// The compressed policy of the scenarios, with seeded full jitter.
fn config(buffer_ms: u64, seed: u64) -> TranscriberConfig {
    let exact = transcriber_sim::config();
    TranscriberConfig {
        reconnect: ReconnectConfig {
            jitter: Jitter::Full,
            random_seed: seed,
            ..exact.reconnect
        },
        buffer_ms,
        connect_timeout_ms: 500,
        stop_timeout_ms: 300,
        ..exact
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn buffer_bound_order_accounting_and_detach_hold(
        buffer_ms in prop_oneof![Just(0u64), 1u64..=200, Just(10_000)],
        seed in any::<u64>(),
        inputs in prop::collection::vec(input(), 0..300),
    ) {
        run(config(buffer_ms, seed), inputs)?;
    }
}

/// What the browser and the server may do to a running transcriber, for the reasons it gives
/// `provision()`.
#[derive(Clone, Debug)]
enum Event {
    Provisioned,
    ProvisionFailed(u16),
    Open,
    Close(u16),
    /// A message from the server (Gladia's `end_session`).
    Text(&'static str),
    Park,
    Unpark,
    Online(bool),
    Advance(u64),
}

fn event(session_over: u16) -> impl Strategy<Value = Event> {
    prop_oneof![
        4 => Just(Event::Provisioned),
        1 => prop_oneof![Just(0u16), Just(503)].prop_map(Event::ProvisionFailed),
        4 => Just(Event::Open),
        4 => prop_oneof![Just(1006u16), Just(1000), Just(session_over)].prop_map(Event::Close),
        1 => Just(Event::Text(r#"{"type":"end_session"}"#)),
        2 => Just(Event::Park),
        2 => Just(Event::Unpark),
        1 => any::<bool>().prop_map(Event::Online),
        5 => prop_oneof![0u64..=2_000, 10_000u64..=120_000].prop_map(Event::Advance),
    ]
}

/// R3 and R6 as the app's backend sees them: every `provision()` call with its reason and
/// attempt, whatever closes, outages and stays in the back-forward cache come between.
fn provision_reasons_hold(
    protocol: &'static Profile,
    events: Vec<Event>,
) -> Result<(), TestCaseError> {
    let config = transcriber_sim::config_for(protocol);
    let window_ms = config.reconnect.reprovision_window_ms;
    let allowed = config.reconnect.max_reprovisions_per_window as usize;
    let per_connection = protocol.credentials == Credentials::PerConnection;
    let mut t = Transcriber::new(config);
    let mut now = Millis(0);
    let mut calls: Vec<(Millis, &'static str, u32)> = Vec::new();
    let mut session = 0u32;
    t.start(now);
    for event in std::iter::once(Event::Advance(0)).chain(events) {
        match event {
            Event::Provisioned => {
                session += 1;
                t.on_provisioned(&format!("wss://stt.test/{session}"), now);
            }
            Event::ProvisionFailed(status) => t.on_provision_failed(status, now),
            Event::Open => t.on_open(now),
            Event::Close(code) => t.on_close(code, now),
            Event::Text(message) => t.on_text(message, now),
            Event::Park => t.park(now),
            Event::Unpark => t.unpark(now),
            Event::Online(online) => t.set_online(online, now),
            Event::Advance(ms) => {
                now = now.after(ms);
                t.handle_timeout(now);
            }
        }
        while let Some(action) = t.poll_action() {
            if action == Action::Provision {
                calls.push((now, t.provision_reason().as_str(), t.provision_attempt()));
            }
        }
    }
    // "start" is the first call and its retries only.
    let starts = calls
        .iter()
        .take_while(|(_, reason, _)| *reason == "start")
        .count();
    prop_assert!(
        calls[starts..]
            .iter()
            .all(|(_, reason, _)| *reason != "start"),
        "{:?}",
        calls
    );
    // R6: fresh credentials only where a protocol's credentials serve one connection.
    prop_assert!(
        per_connection || calls.iter().all(|(_, reason, _)| *reason != "reconnect"),
        "{:?}",
        calls
    );
    // R3: at most `allowed` new sessions in any window, counted at the calls: any `allowed + 1`
    // in a row span a whole window.
    let new_sessions: Vec<Millis> = calls
        .iter()
        .filter(|(_, reason, attempt)| *reason == "session_over" && *attempt == 1)
        .map(|(at, _, _)| *at)
        .collect();
    prop_assert!(
        new_sessions
            .windows(allowed + 1)
            .all(|run| run[allowed].since(run[0]) >= window_ms),
        "{:?}",
        calls
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn provision_reasons_hold_for_credentials_per_connection(
        events in prop::collection::vec(event(3008), 0..200),
    ) {
        provision_reasons_hold(&assemblyai::PROFILE, events)?;
    }

    #[test]
    fn provision_reasons_hold_for_credentials_per_session(
        events in prop::collection::vec(event(4403), 0..200),
    ) {
        provision_reasons_hold(&gladia::PROFILE, events)?;
    }
}
