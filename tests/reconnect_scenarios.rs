//! One named scenario per test for the reconnect policy (rule L3, R1–R4).

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use turnguard::core::stt::backoff::Jitter;
use turnguard::core::stt::protocols::gladia::PROFILE as GLADIA;
use turnguard::core::stt::reconnect::{
    Decision, ReconnectAction, ReconnectConfig, ReconnectPolicy, ReconnectReason,
};
use turnguard::core::time::Millis;

use ReconnectAction::{ReconnectSameUrl, Reprovision, Stop};

/// The default configuration with exact delays.
fn exact() -> ReconnectConfig {
    ReconnectConfig {
        jitter: Jitter::None,
        ..ReconnectConfig::default()
    }
}

fn policy(config: ReconnectConfig) -> ReconnectPolicy {
    ReconnectPolicy::new(config)
}

/// Opens at `at` and closes `open_for_ms` later with `code`.
fn open_then_close(policy: &mut ReconnectPolicy, at: u64, open_for_ms: u64, code: u16) -> Decision {
    policy.on_open(Millis(at));
    policy.on_close(code, GLADIA.close_class(code), Millis(at + open_for_ms))
}

#[test]
fn server_accepts_then_closes_4403_reprovisions_twice_then_stops() {
    let mut policy = policy(exact());
    let first = open_then_close(&mut policy, 0, 10, 4403);
    assert_eq!(first.action, Reprovision);
    assert_eq!(first.reason, ReconnectReason::SessionDead);
    assert_eq!(
        first.delay_ms, 500,
        "a dead session is not re-provisioned at once"
    );
    let second = open_then_close(&mut policy, 600, 10, 4403);
    assert_eq!(second.action, Reprovision);
    assert_eq!(second.delay_ms, 1_000, "and the delay grows");
    let third = open_then_close(&mut policy, 1_700, 10, 4403);
    assert_eq!(third.action, Stop);
    assert_eq!(third.reason, ReconnectReason::ReprovisionLimit);
    assert_eq!(third.reason.as_str(), "reprovision_limit");
    assert_eq!(third.delay_ms, 0);
    assert_eq!(policy.stopped(), Some(ReconnectReason::ReprovisionLimit));
    // Stop is terminal.
    assert_eq!(
        policy
            .on_close(1006, GLADIA.close_class(1006), Millis(900_000))
            .action,
        Stop
    );
    assert_eq!(
        policy.on_provision_failed(503, Millis(900_000)).action,
        Stop
    );
}

#[test]
fn server_accepts_then_drops_1006_delays_grow_to_the_cap_and_open_never_resets() {
    let mut policy = policy(exact());
    let mut now = 0;
    let mut delays = Vec::new();
    for _ in 0..10 {
        let decision = open_then_close(&mut policy, now, 100, 1006);
        assert_eq!(decision.action, ReconnectSameUrl);
        assert_eq!(decision.reason, ReconnectReason::AbnormalClose);
        delays.push(decision.delay_ms);
        now += 100 + decision.delay_ms;
    }
    assert_eq!(
        delays,
        [500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000, 30_000]
    );
    policy.on_open(Millis(now));
    assert_eq!(
        policy.backoff_attempt(),
        10,
        "opening alone resets nothing (R1)"
    );
}

#[test]
fn close_without_open_does_not_reset_the_backoff() {
    let mut policy = policy(exact());
    assert_eq!(
        policy
            .on_close(1006, GLADIA.close_class(1006), Millis(0))
            .delay_ms,
        500
    );
    // Long after, but the socket never opened: no reset.
    assert_eq!(
        policy
            .on_close(1006, GLADIA.close_class(1006), Millis(60_000))
            .delay_ms,
        1_000
    );
}

#[test]
fn socket_open_for_stable_open_ms_resets_to_the_initial_delay() {
    let mut policy = policy(exact());
    for _ in 0..5 {
        let _ = policy.on_close(1006, GLADIA.close_class(1006), Millis(0));
    }
    assert_eq!(policy.backoff_attempt(), 5);
    let decision = open_then_close(&mut policy, 1_000, 5_000, 1006);
    assert_eq!(
        decision.delay_ms, 500,
        "exactly stable_open_ms counts (inclusive)"
    );
    assert_eq!(policy.backoff_attempt(), 1);
}

#[test]
fn socket_open_for_one_ms_less_than_stable_open_ms_does_not_reset() {
    let mut policy = policy(exact());
    for _ in 0..5 {
        let _ = policy.on_close(1006, GLADIA.close_class(1006), Millis(0));
    }
    let decision = open_then_close(&mut policy, 1_000, 4_999, 1006);
    assert_eq!(decision.delay_ms, 16_000);
    assert_eq!(policy.backoff_attempt(), 6);
}

#[test]
fn stable_session_that_dies_with_4xxx_reprovisions_after_the_initial_delay() {
    let mut policy = policy(exact());
    for _ in 0..6 {
        let _ = open_then_close(&mut policy, 0, 0, 1006);
    }
    let decision = open_then_close(&mut policy, 1_000, 60_000, 4001);
    assert_eq!(decision.action, Reprovision);
    assert_eq!(decision.delay_ms, 500);
}

#[test]
fn reprovision_window_slides_and_its_edge_is_half_open() {
    // Re-provisions are due at decision time + delay: 0 + 500 and 1 000 + 1 000. The third is
    // decided at `t` with a delay of 2 000, so it is due at t + 2 000; the window counts the
    // first until t + 2 000 - 500 reaches 300 000, i.e. t = 298 500.
    let mut policy = policy(exact());
    assert_eq!(
        policy
            .on_close(4000, GLADIA.close_class(4000), Millis(0))
            .action,
        Reprovision
    );
    assert_eq!(
        policy
            .on_close(4000, GLADIA.close_class(4000), Millis(1_000))
            .action,
        Reprovision
    );

    let mut too_early = policy.clone();
    let decision = too_early.on_close(4000, GLADIA.close_class(4000), Millis(298_499));
    assert_eq!(
        decision.action, Stop,
        "due at 300 499: 299 999 after the first"
    );
    assert_eq!(decision.reason, ReconnectReason::ReprovisionLimit);

    let decision = policy.on_close(4000, GLADIA.close_class(4000), Millis(298_500));
    assert_eq!(
        decision.action, Reprovision,
        "due exactly one window after the first"
    );
    assert_eq!(decision.delay_ms, 2_000);

    // Due at 302 500 (delay 4 000): the second, due at 2 000, left the window at 302 000.
    let decision = policy.on_close(4000, GLADIA.close_class(4000), Millis(298_500));
    assert_eq!(decision.action, Reprovision);
    assert_eq!(decision.delay_ms, 4_000);
    // Now 300 500 and 302 500 fill the window: the next must wait until 600 500.
    let decision = policy.on_close(4000, GLADIA.close_class(4000), Millis(298_500));
    assert_eq!(decision.action, Stop);
    assert_eq!(decision.reason, ReconnectReason::ReprovisionLimit);
}

#[test]
fn after_client_detach_every_decision_is_stop() {
    let mut policy = policy(ReconnectConfig::default());
    policy.on_open(Millis(0));
    policy.on_client_detach();
    let decisions = [
        policy.on_close(1006, GLADIA.close_class(1006), Millis(10)),
        policy.on_close(1000, GLADIA.close_class(1000), Millis(20)),
        policy.on_close(4403, GLADIA.close_class(4403), Millis(30)),
        policy.on_provision_failed(0, Millis(40)),
        policy.on_provision_failed(503, Millis(50)),
        policy.on_provision_failed(401, Millis(60)),
    ];
    for decision in decisions {
        assert_eq!(decision.action, Stop);
        assert_eq!(decision.reason, ReconnectReason::ClientDetached);
        assert_eq!(decision.delay_ms, 0);
    }
    policy.on_open(Millis(70));
    assert_eq!(
        policy
            .on_close(1006, GLADIA.close_class(1006), Millis(80_000))
            .action,
        Stop
    );
    assert_eq!(policy.stopped(), Some(ReconnectReason::ClientDetached));
}

#[test]
fn detach_after_a_terminal_error_reports_client_detached() {
    let mut policy = policy(exact());
    assert_eq!(policy.on_provision_failed(401, Millis(0)).action, Stop);
    policy.on_client_detach();
    let decision = policy.on_close(1006, GLADIA.close_class(1006), Millis(1));
    assert_eq!(decision.action, Stop);
    assert_eq!(decision.reason, ReconnectReason::ClientDetached);
}

#[test]
fn close_code_edges_3999_4000_4999_5000() {
    let cases = [
        (3999, ReconnectSameUrl, ReconnectReason::AbnormalClose),
        (4000, Reprovision, ReconnectReason::SessionDead),
        (4999, Reprovision, ReconnectReason::SessionDead),
        (5000, ReconnectSameUrl, ReconnectReason::AbnormalClose),
        (1006, ReconnectSameUrl, ReconnectReason::AbnormalClose),
        (1011, ReconnectSameUrl, ReconnectReason::AbnormalClose),
        (0, ReconnectSameUrl, ReconnectReason::AbnormalClose),
        (u16::MAX, ReconnectSameUrl, ReconnectReason::AbnormalClose),
    ];
    for (code, action, reason) in cases {
        let decision = policy(exact()).on_close(code, GLADIA.close_class(code), Millis(0));
        assert_eq!(
            (decision.action, decision.reason),
            (action, reason),
            "code {code}"
        );
        assert_eq!(decision.delay_ms, 500, "code {code}");
    }
}

#[test]
fn normal_close_1000_reconnects_to_the_same_url_after_backoff() {
    let mut policy = policy(exact());
    let first = open_then_close(&mut policy, 0, 100, 1000);
    assert_eq!(first.action, ReconnectSameUrl);
    assert_eq!(first.reason, ReconnectReason::NormalClose);
    assert_eq!(first.reason.as_str(), "normal_close");
    assert_eq!(first.delay_ms, 500);
    let second = open_then_close(&mut policy, 600, 100, 1000);
    assert_eq!(
        second.delay_ms, 1_000,
        "a server that keeps closing is backed off from"
    );
}

#[test]
fn full_jitter_stays_within_the_cap_and_replays_for_a_seed() {
    let run = |seed| {
        let mut policy = policy(ReconnectConfig {
            random_seed: seed,
            ..ReconnectConfig::default()
        });
        let mut capped = ReconnectPolicy::new(exact());
        (0..50)
            .map(|i| {
                let cap = open_then_close(&mut capped, i, 0, 1006).delay_ms;
                let delay = open_then_close(&mut policy, i, 0, 1006).delay_ms;
                assert!(delay <= cap, "attempt {i}: {delay} > {cap}");
                delay
            })
            .collect::<Vec<u64>>()
    };
    assert_eq!(run(7), run(7));
    assert_ne!(run(7), run(8));
    // Full jitter really spreads: over the capped tail, delays are not all at the cap.
    let tail = run(7).split_off(10);
    assert!(tail.iter().any(|&delay| delay < 15_000));
    assert!(tail.iter().any(|&delay| delay > 15_000));
}

#[test]
fn transient_provisioning_failures_back_off_and_provision_again() {
    let mut policy = policy(ReconnectConfig {
        max_provision_attempts: 10,
        ..exact()
    });
    let mut delays = Vec::new();
    for (i, status) in [0, 408, 429, 500, 503, 599].into_iter().enumerate() {
        let decision = policy.on_provision_failed(status, Millis(i as u64 * 100_000));
        assert_eq!(decision.action, Reprovision, "status {status}");
        assert_eq!(decision.reason, ReconnectReason::ProvisionFailed);
        assert_eq!(decision.reason.as_str(), "provision_failed");
        delays.push(decision.delay_ms);
    }
    assert_eq!(delays, [500, 1_000, 2_000, 4_000, 8_000, 16_000]);
}

#[test]
fn provisioning_retries_do_not_count_toward_the_reprovision_window() {
    let mut policy = policy(ReconnectConfig {
        max_provision_attempts: 100,
        ..exact()
    });
    assert_eq!(
        policy
            .on_close(4403, GLADIA.close_class(4403), Millis(0))
            .action,
        Reprovision
    );
    for i in 1..=20 {
        assert_eq!(
            policy.on_provision_failed(503, Millis(i)).action,
            Reprovision
        );
    }
    assert_eq!(
        policy
            .on_close(4403, GLADIA.close_class(4403), Millis(100))
            .action,
        Reprovision
    );
    assert_eq!(
        policy
            .on_close(4403, GLADIA.close_class(4403), Millis(200))
            .action,
        Stop
    );
}

#[test]
fn provisioning_rejected_with_401_or_404_stops() {
    for status in [400, 401, 403, 404, 422, 499, 200, 302, 600] {
        let mut policy = policy(exact());
        let decision = policy.on_provision_failed(status, Millis(0));
        assert_eq!(decision.action, Stop, "status {status}");
        assert_eq!(decision.reason, ReconnectReason::ProvisionRejected);
        assert_eq!(decision.reason.as_str(), "provision_rejected");
        assert_eq!(decision.delay_ms, 0);
    }
}

#[test]
fn zero_reprovisions_allowed_stops_on_the_first_dead_session() {
    let mut policy = policy(ReconnectConfig {
        max_reprovisions_per_window: 0,
        ..exact()
    });
    assert_eq!(
        policy
            .on_close(4403, GLADIA.close_class(4403), Millis(0))
            .action,
        Stop
    );
}

#[test]
fn js_names_are_snake_case() {
    assert_eq!(ReconnectSameUrl.as_str(), "reconnect_same_url");
    assert_eq!(Reprovision.as_str(), "reprovision");
    assert_eq!(Stop.as_str(), "stop");
    let reasons = [
        (ReconnectReason::AbnormalClose, "abnormal_close"),
        (ReconnectReason::NormalClose, "normal_close"),
        (ReconnectReason::SessionDead, "session_dead"),
        (ReconnectReason::ReprovisionLimit, "reprovision_limit"),
        (ReconnectReason::ClientDetached, "client_detached"),
        (ReconnectReason::ProvisionFailed, "provision_failed"),
        (ReconnectReason::ProvisionRejected, "provision_rejected"),
    ];
    for (reason, name) in reasons {
        assert_eq!(reason.as_str(), name);
    }
    assert_eq!(Jitter::Full.as_str(), "full");
    assert_eq!(Jitter::None.as_str(), "none");
}

#[test]
fn default_config_matches_the_design() {
    let config = ReconnectConfig::default();
    assert_eq!(config.stable_open_ms, 5_000);
    assert_eq!(config.reprovision_window_ms, 300_000);
    assert_eq!(config.max_reprovisions_per_window, 2);
    assert_eq!(config.initial_delay_ms, 500);
    assert_eq!(config.max_delay_ms, 30_000);
    assert_eq!(config.jitter, Jitter::Full);
}

#[test]
fn a_reprovision_called_after_it_was_due_counts_from_its_call() {
    let mut policy = policy(exact());
    let first = policy.on_close(4000, GLADIA.close_class(4000), Millis(0));
    assert_eq!((first.action, first.delay_ms), (Reprovision, 500));
    policy.on_reprovision_called(Millis(60_000)); // held a minute by an outage
    let second = policy.on_close(4000, GLADIA.close_class(4000), Millis(61_000));
    assert_eq!(second.action, Reprovision);
    policy.on_reprovision_called(Millis(61_000)); // early: the due time stands
                                                  // Decided at 300 500, due at 302 500: a window after the first's due time (500), not after
                                                  // its call (60 000).
    let third = policy
        .clone()
        .on_close(4000, GLADIA.close_class(4000), Millis(300_500));
    assert_eq!(third.action, Stop);
    assert_eq!(third.reason, ReconnectReason::ReprovisionLimit);
    let third = policy.on_close(4000, GLADIA.close_class(4000), Millis(358_000));
    assert_eq!(third.action, Reprovision, "a window after the call");
}
