//! Invariants of the reconnect policy over arbitrary event schedules (rule L3, R1–R5, L7), with
//! Gladia's close codes and with every protocol's close classes.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use proptest::prelude::*;
use turnguard::core::stt::backoff::Jitter;
use turnguard::core::stt::protocol::CloseClass;
use turnguard::core::stt::protocol::{classify_close, Profile};
use turnguard::core::stt::protocols::gladia::PROFILE as GLADIA;
use turnguard::core::stt::protocols::ALL;
use turnguard::core::stt::reconnect::{
    Decision, ReconnectAction, ReconnectConfig, ReconnectPolicy, ReconnectReason,
};
use turnguard::core::time::Millis;

/// One input to the policy.
#[derive(Clone, Debug)]
enum Input {
    Open,
    Close(u16),
    ProvisionFailed(u16),
    Provisioned,
    SessionEnded,
    Detach,
}

fn close_code() -> impl Strategy<Value = u16> {
    prop_oneof![
        Just(1000u16),
        Just(1006),
        3990u16..=4010,
        4990u16..=5010,
        4000u16..=4999,
        any::<u16>(),
    ]
}

fn http_status() -> impl Strategy<Value = u16> {
    prop_oneof![Just(0u16), Just(408), Just(429), 400u16..=599, any::<u16>(),]
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        6 => Just(Input::Open),
        8 => close_code().prop_map(Input::Close),
        3 => http_status().prop_map(Input::ProvisionFailed),
        1 => Just(Input::Provisioned),
        1 => Just(Input::SessionEnded),
        1 => Just(Input::Detach),
    ]
}

/// Inputs of a session that lives long: no detach, and provisioning failures that are mostly
/// transient, so schedules get far enough to fill and slide the re-provision window.
fn lively_input() -> impl Strategy<Value = Input> {
    let transient = prop_oneof![Just(0u16), Just(408), Just(429), 500u16..=599];
    prop_oneof![
        6 => Just(Input::Open),
        8 => close_code().prop_map(Input::Close),
        2 => transient.prop_map(Input::ProvisionFailed),
        1 => http_status().prop_map(Input::ProvisionFailed),
        2 => Just(Input::Provisioned),
        2 => Just(Input::SessionEnded),
    ]
}

/// Time steps: mostly short (storms), sometimes long enough to leave a window.
fn step_ms() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => 0u64..=100,
        4 => 0u64..=40_000,
        1 => 0u64..=400_000,
    ]
}

fn config() -> impl Strategy<Value = ReconnectConfig> {
    (
        0u64..=10_000,
        // Short windows next to long delays make the due-time edge of R3 easy to reach.
        prop_oneof![Just(300_000u64), 0u64..=400_000, 0u64..=20_000],
        prop_oneof![2 => 1u32..=2, 1 => 0u32..=4],
        0u64..=3_000,
        prop_oneof![Just(30_000u64), 0u64..=60_000],
        prop_oneof![Just(Jitter::Full), Just(Jitter::None)],
        any::<u64>(),
        (0u32..=4, 0u32..=6),
    )
        .prop_map(
            |(stable, window, max, initial, max_delay, jitter, seed, (failed, attempts))| {
                ReconnectConfig {
                    stable_open_ms: stable,
                    reprovision_window_ms: window,
                    max_reprovisions_per_window: max,
                    initial_delay_ms: initial,
                    max_delay_ms: max_delay,
                    jitter,
                    random_seed: seed,
                    max_failed_connects: failed,
                    max_provision_attempts: attempts,
                }
            },
        )
}

/// Runs the schedule and returns each decision with the time it was made.
fn run(
    config: &ReconnectConfig,
    start: u64,
    schedule: &[(u64, Input)],
) -> Vec<(Millis, Input, Decision)> {
    let mut policy = ReconnectPolicy::new(config.clone());
    let mut now = Millis(start);
    let mut decisions = Vec::new();
    for (step, input) in schedule {
        now = now.after(*step);
        let decision = match input {
            Input::Open => {
                policy.on_open(now);
                continue;
            }
            Input::Detach => {
                policy.on_client_detach();
                continue;
            }
            Input::Provisioned => {
                policy.on_provisioned();
                continue;
            }
            Input::Close(code) => policy.on_close(*code, GLADIA.close_class(*code), now),
            Input::ProvisionFailed(status) => policy.on_provision_failed(*status, now),
            Input::SessionEnded => policy.on_session_ended(now),
        };
        decisions.push((now, input.clone(), decision));
    }
    decisions
}

proptest! {
    // Breaking R3 needs a rare shape (a long delay, then a short one, around a window edge):
    // 1024 cases with small limits and windows catch a policy that counts decision times.
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// R3: the moments at which decisions tell the shell to re-provision a dead session
    /// (decision time + delay) never put more than the maximum into one window — whether it
    /// died by a 4xxx close (R2), by failed connects or by `end_session` (R5).
    #[test]
    fn reprovisions_in_any_window_at_most_max(
        config in config(),
        start in prop_oneof![Just(0u64), any::<u64>()],
        schedule in prop::collection::vec(
            (step_ms(), prop_oneof![1 => input(), 4 => lively_input()]),
            0..200,
        ),
    ) {
        let mut due: Vec<u64> = run(&config, start, &schedule)
            .into_iter()
            .filter(|(_, _, d)| {
                matches!(
                    d.reason,
                    ReconnectReason::SessionDead
                        | ReconnectReason::DeadUrl
                        | ReconnectReason::SessionEnded
                )
            })
            .map(|(at, _, d)| at.after(d.delay_ms).0)
            .collect();
        due.sort_unstable();
        let max = config.max_reprovisions_per_window as usize;
        let window = config.reprovision_window_ms;
        for (i, &first) in due.iter().enumerate() {
            let in_window = due
                .iter()
                .skip(i)
                .take_while(|&&later| later - first < window)
                .count();
            prop_assert!(
                in_window <= max,
                "{in_window} re-provisions due in [{first}, {first} + {window}): {due:?}"
            );
        }
    }

}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// R4: after detach, only stop, and for that reason.
    #[test]
    fn after_detach_only_stop(
        config in config(),
        schedule in prop::collection::vec((step_ms(), input()), 0..200),
    ) {
        let mut detached = false;
        let mut policy = ReconnectPolicy::new(config);
        let mut now = Millis(0);
        for (step, input) in &schedule {
            now = now.after(*step);
            let decision = match input {
                Input::Open => { policy.on_open(now); continue; }
                Input::Detach => { policy.on_client_detach(); detached = true; continue; }
                Input::Provisioned => { policy.on_provisioned(); continue; }
                Input::Close(code) => policy.on_close(*code, GLADIA.close_class(*code), now),
                Input::ProvisionFailed(status) => policy.on_provision_failed(*status, now),
                Input::SessionEnded => policy.on_session_ended(now),
            };
            if detached {
                prop_assert_eq!(decision.action, ReconnectAction::Stop);
                prop_assert_eq!(decision.reason, ReconnectReason::ClientDetached);
            }
        }
    }

    /// Every delay is within [0, max_delay_ms]; a stop waits for nothing; a stop is final; a
    /// dead session is never reconnected to its old URL (R2, R5) and other closes re-provision
    /// only for a dead URL (R5).
    #[test]
    fn delays_bounded_stop_final_and_codes_classified(
        config in config(),
        schedule in prop::collection::vec((step_ms(), input()), 0..200),
    ) {
        let mut stopped = false;
        for (_, input, decision) in run(&config, 0, &schedule) {
            prop_assert!(decision.delay_ms <= config.max_delay_ms);
            if stopped {
                prop_assert_eq!(decision.action, ReconnectAction::Stop);
            }
            match decision.action {
                ReconnectAction::Stop => {
                    prop_assert_eq!(decision.delay_ms, 0);
                    stopped = true;
                }
                ReconnectAction::Reprovision => prop_assert!(
                    !matches!(input, Input::Close(code) if !(4000..=4999).contains(&code))
                        || decision.reason == ReconnectReason::DeadUrl
                ),
                ReconnectAction::ReconnectSameUrl => prop_assert!(
                    matches!(input, Input::Close(code) if !(4000..=4999).contains(&code))
                ),
            }
        }
    }

    /// R1: opening a socket never resets the backoff; only a close after a stable open does.
    #[test]
    fn open_alone_never_resets_the_backoff(
        config in config(),
        schedule in prop::collection::vec((step_ms(), input()), 0..200),
    ) {
        let mut policy = ReconnectPolicy::new(config.clone());
        let mut now = Millis(0);
        let mut opened_at = None;
        for (step, input) in &schedule {
            now = now.after(*step);
            let before = policy.backoff_attempt();
            match input {
                Input::Open => {
                    policy.on_open(now);
                    opened_at = Some(now);
                    prop_assert_eq!(policy.backoff_attempt(), before);
                }
                Input::Detach => policy.on_client_detach(),
                Input::Provisioned => policy.on_provisioned(),
                Input::SessionEnded => {
                    opened_at = None;
                    let _ = policy.on_session_ended(now);
                }
                Input::Close(code) => {
                    let decision = policy.on_close(*code, GLADIA.close_class(*code), now);
                    let stable = opened_at
                        .take()
                        .is_some_and(|at| now.since(at) >= config.stable_open_ms);
                    if !decision.is_stop() {
                        let expected = if stable { 1 } else { before.saturating_add(1) };
                        prop_assert_eq!(policy.backoff_attempt(), expected);
                    }
                }
                Input::ProvisionFailed(status) => {
                    let _ = policy.on_provision_failed(*status, now);
                }
            }
        }
    }

    /// R5: a URL never gets more than `max_failed_connects` failed connects in a row: the
    /// last of them re-provisions or stops, never reconnects; an open ends the run.
    #[test]
    fn failed_connects_in_a_row_are_bounded(
        config in config(),
        schedule in prop::collection::vec((step_ms(), lively_input()), 0..200),
    ) {
        let mut policy = ReconnectPolicy::new(config.clone());
        let mut now = Millis(0);
        let mut open = false;
        let mut in_a_row = 0u32;
        let limit = config.max_failed_connects.max(1);
        for (step, input) in &schedule {
            now = now.after(*step);
            let decision = match input {
                Input::Open => { policy.on_open(now); open = true; in_a_row = 0; continue; }
                Input::Provisioned => { policy.on_provisioned(); continue; }
                Input::Detach => { policy.on_client_detach(); continue; }
                Input::Close(code) => {
                    let decision = policy.on_close(*code, GLADIA.close_class(*code), now);
                    if !open && !(4000..=4999).contains(code) {
                        in_a_row += 1;
                        if in_a_row >= limit {
                            prop_assert_ne!(decision.action, ReconnectAction::ReconnectSameUrl);
                        }
                    }
                    open = false;
                    decision
                }
                Input::SessionEnded => { open = false; policy.on_session_ended(now) }
                Input::ProvisionFailed(status) => policy.on_provision_failed(*status, now),
            };
            if decision.action == ReconnectAction::Reprovision {
                in_a_row = 0; // a new URL
            }
        }
    }

    /// L7: retryable failures (no status, 408, 429, 5xx) never go on past `max_provision_attempts`
    /// in a row.
    #[test]
    fn provisioning_without_a_status_fails_at_most_max_times_in_a_row(
        config in config(),
        schedule in prop::collection::vec((step_ms(), lively_input()), 0..200),
    ) {
        let mut policy = ReconnectPolicy::new(config.clone());
        let mut now = Millis(0);
        let mut in_a_row = 0u32;
        let limit = config.max_provision_attempts.max(1);
        for (step, input) in &schedule {
            now = now.after(*step);
            match input {
                Input::Provisioned => { policy.on_provisioned(); in_a_row = 0; }
                Input::ProvisionFailed(status) => {
                    let decision = policy.on_provision_failed(*status, now);
                    if matches!(*status, 0 | 408 | 429 | 500..=599) {
                        in_a_row += 1;
                        if in_a_row >= limit {
                            prop_assert!(decision.is_stop());
                        } else if policy.stopped().is_none() {
                            prop_assert_eq!(decision.action, ReconnectAction::Reprovision);
                        }
                    }
                }
                Input::Open => policy.on_open(now),
                Input::Close(code) => { let _ = policy.on_close(*code, GLADIA.close_class(*code), now); }
                Input::SessionEnded => { let _ = policy.on_session_ended(now); }
                Input::Detach => policy.on_client_detach(),
            }
        }
    }
}

/// The same schedules with every protocol's close classes (R2 per protocol): each close is
/// classified by a fresh instance of the protocol, as the transcriber does.
fn run_as(
    protocol: &'static Profile,
    config: &ReconnectConfig,
    throttled_ms: u64,
    schedule: &[(u64, Input)],
) -> Vec<(Millis, Input, CloseClass, bool, Decision)> {
    let mut codec = (protocol.codec)();
    let mut policy = ReconnectPolicy::new(config.clone());
    policy.set_throttled_delay_ms(throttled_ms);
    let mut now = Millis(0);
    let mut open = false;
    let mut decisions = Vec::new();
    for (step, input) in schedule {
        now = now.after(*step);
        let was_open = std::mem::replace(&mut open, false) && policy.stopped().is_none();
        let (class, decision) = match input {
            Input::Open => {
                policy.on_open(now);
                open = true;
                continue;
            }
            Input::Detach => {
                policy.on_client_detach();
                continue;
            }
            Input::Provisioned => {
                policy.on_provisioned();
                open = was_open;
                continue;
            }
            Input::Close(code) => {
                let class = classify_close(protocol, &mut *codec, *code);
                (class, policy.on_close(*code, class, now))
            }
            Input::ProvisionFailed(status) => {
                (CloseClass::Retry, policy.on_provision_failed(*status, now))
            }
            Input::SessionEnded => (CloseClass::SessionOver, policy.on_session_ended(now)),
        };
        decisions.push((now, input.clone(), class, was_open, decision));
    }
    decisions
}

/// Close codes each protocol gives a meaning to, and any other.
fn protocol_close_code() -> impl Strategy<Value = u16> {
    prop_oneof![
        3 => prop::sample::select(vec![1000u16, 1001, 1006, 1008, 1011, 3005, 3006, 3007, 3008, 3009, 4000, 4403, 4999]),
        1 => close_code(),
    ]
}

fn protocol_input() -> impl Strategy<Value = Input> {
    prop_oneof![
        6 => Just(Input::Open),
        8 => protocol_close_code().prop_map(Input::Close),
        2 => prop_oneof![Just(0u16), Just(429), 500u16..=599].prop_map(Input::ProvisionFailed),
        2 => Just(Input::Provisioned),
        1 => Just(Input::SessionEnded),
        1 => Just(Input::Detach),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// For every protocol: R3 holds whatever the classes; a fatal close stops at once; a
    /// session-over close never reconnects to the old URL; a throttled close waits at least the
    /// throttled delay; a retry of a socket that had opened reconnects to the same URL; delays
    /// stay within the larger of `max_delay_ms` and the throttled delay; a stop is final.
    #[test]
    fn every_protocols_close_classes_are_followed(
        protocol in prop::sample::select(ALL.to_vec()),
        config in config(),
        throttled_ms in prop_oneof![Just(10_000u64), 0u64..=60_000],
        schedule in prop::collection::vec((step_ms(), protocol_input()), 0..150),
    ) {
        let decisions = run_as(protocol, &config, throttled_ms, &schedule);
        let protocol = protocol.name;
        let mut stopped = false;
        let mut due = Vec::new();
        for (at, input, class, was_open, d) in &decisions {
            prop_assert!(d.delay_ms <= config.max_delay_ms.max(throttled_ms), "{protocol}: {d:?}");
            if stopped {
                prop_assert!(d.is_stop(), "{protocol}: a stop is final: {d:?}");
                continue;
            }
            stopped = d.is_stop();
            if d.reason == ReconnectReason::ClientDetached {
                continue;
            }
            if matches!(d.reason, ReconnectReason::SessionDead | ReconnectReason::DeadUrl | ReconnectReason::SessionEnded) {
                due.push(at.after(d.delay_ms).0);
            }
            let Input::Close(code) = input else { continue };
            match class {
                CloseClass::Fatal => prop_assert_eq!(d.reason, ReconnectReason::FatalClose, "{} {}", protocol, code),
                CloseClass::SessionOver => prop_assert!(d.action != ReconnectAction::ReconnectSameUrl, "{protocol} {code}: {d:?}"),
                CloseClass::Throttled if d.action == ReconnectAction::ReconnectSameUrl => {
                    prop_assert!(d.delay_ms >= throttled_ms, "{protocol} {code}: {d:?}")
                }
                CloseClass::Retry if *was_open => {
                    prop_assert_eq!(d.action, ReconnectAction::ReconnectSameUrl, "{} {}", protocol, code)
                }
                _ => {}
            }
        }
        due.sort_unstable();
        let max = config.max_reprovisions_per_window as usize;
        for (i, &first) in due.iter().enumerate() {
            let in_window = due.iter().skip(i).take_while(|&&later| later - first < config.reprovision_window_ms).count();
            prop_assert!(in_window <= max, "{protocol}: {in_window} re-provisions in one window: {due:?}");
        }
    }
}
