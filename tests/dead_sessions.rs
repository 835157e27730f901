//! Dead sessions end (R5, L7): one named scenario per test, for the reconnect policy and for
//! the transcriber core that follows it, in virtual time.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod transcriber_sim;

use transcriber_sim::*;
use turnguard::core::stt::protocols::gladia::PROFILE as GLADIA;
use turnguard::core::stt::reconnect::{
    ReconnectAction, ReconnectConfig, ReconnectPolicy, ReconnectReason,
};
use turnguard::core::stt::transcriber::{Action, State, TranscriberConfig, TranscriberError};
use turnguard::core::time::Millis;

fn exact_policy() -> ReconnectPolicy {
    ReconnectPolicy::new(config().reconnect)
}

#[test]
fn defaults_are_three_failed_connects_five_provision_attempts_ten_seconds_one_mib() {
    let reconnect = ReconnectConfig::default();
    assert_eq!(reconnect.max_failed_connects, 3);
    assert_eq!(reconnect.max_provision_attempts, 5);
    let transcriber = TranscriberConfig::new(&GLADIA);
    assert_eq!(transcriber.provision_timeout_ms, 10_000);
    assert_eq!(transcriber.max_message_bytes, 1 << 20);
}

#[test]
fn policy_three_sockets_that_never_open_make_the_url_dead() {
    let mut policy = exact_policy();
    let first = policy.on_close(1006, GLADIA.close_class(1006), Millis(0));
    let second = policy.on_close(1006, GLADIA.close_class(1006), Millis(100));
    assert_eq!(
        [first.action, second.action],
        [ReconnectAction::ReconnectSameUrl; 2]
    );
    assert_eq!(policy.failed_connects(), 2);
    let third = policy.on_close(1006, GLADIA.close_class(1006), Millis(300));
    assert_eq!(third.action, ReconnectAction::Reprovision);
    assert_eq!(third.reason, ReconnectReason::DeadUrl);
    assert_eq!(third.reason.as_str(), "dead_url");
    assert_eq!(
        policy.failed_connects(),
        0,
        "the new URL starts its own count"
    );
}

#[test]
fn policy_an_open_ends_the_run_of_failed_connects() {
    let mut policy = exact_policy();
    let _ = policy.on_close(1006, GLADIA.close_class(1006), Millis(0));
    let _ = policy.on_close(1006, GLADIA.close_class(1006), Millis(10));
    policy.on_open(Millis(20));
    let dropped = policy.on_close(1006, GLADIA.close_class(1006), Millis(25));
    assert_eq!(
        dropped.action,
        ReconnectAction::ReconnectSameUrl,
        "it opened"
    );
    let _ = policy.on_close(1006, GLADIA.close_class(1006), Millis(30));
    let again = policy.on_close(1006, GLADIA.close_class(1006), Millis(40));
    assert_eq!(
        again.action,
        ReconnectAction::ReconnectSameUrl,
        "two in a row"
    );
    let dead = policy.on_close(1006, GLADIA.close_class(1006), Millis(50));
    assert_eq!(dead.reason, ReconnectReason::DeadUrl, "three in a row");
}

#[test]
fn policy_dead_urls_count_in_the_reprovision_window_then_stop_as_dead_session() {
    let mut policy = exact_policy();
    let mut reasons = Vec::new();
    for i in 0..9u64 {
        let decision = policy.on_close(1006, GLADIA.close_class(1006), Millis(i * 1_000));
        reasons.push(decision.reason);
    }
    use ReconnectReason::{AbnormalClose as Same, DeadSession, DeadUrl};
    assert_eq!(
        reasons,
        [
            Same,
            Same,
            DeadUrl,
            Same,
            Same,
            DeadUrl,
            Same,
            Same,
            DeadSession
        ],
        "two re-provisions in the window, then stop"
    );
    assert_eq!(policy.stopped(), Some(DeadSession));
    assert_eq!(DeadSession.as_str(), "dead_session");
}

#[test]
fn policy_dead_urls_and_4xxx_share_one_window() {
    let mut policy = exact_policy();
    policy.on_open(Millis(0));
    assert_eq!(
        policy
            .on_close(4403, GLADIA.close_class(4403), Millis(10))
            .reason,
        ReconnectReason::SessionDead
    );
    assert_eq!(
        policy.on_session_ended(Millis(20)).reason,
        ReconnectReason::SessionEnded
    );
    for at in [30, 40] {
        let _ = policy.on_close(1006, GLADIA.close_class(1006), Millis(at));
    }
    let third = policy.on_close(1006, GLADIA.close_class(1006), Millis(50));
    assert!(third.is_stop(), "the window holds two: {third:?}");
    assert_eq!(third.reason, ReconnectReason::DeadSession);
}

#[test]
fn policy_end_session_reprovisions_and_a_stable_one_resets_the_backoff() {
    let mut policy = exact_policy();
    policy.on_open(Millis(0));
    let _ = policy.on_close(1006, GLADIA.close_class(1006), Millis(10)); // attempt 1
    policy.on_open(Millis(100));
    let ended = policy.on_session_ended(Millis(100 + 400));
    assert_eq!(ended.action, ReconnectAction::Reprovision);
    assert_eq!(ended.reason.as_str(), "session_ended");
    assert_eq!(
        ended.delay_ms, 50,
        "open for stableOpenMs: back to the first delay"
    );
}

#[test]
fn policy_provisioning_without_a_status_stops_at_the_fifth_in_a_row() {
    let mut policy = exact_policy();
    let mut decisions = Vec::new();
    for i in 0..5u64 {
        decisions.push(policy.on_provision_failed(0, Millis(i)));
    }
    let actions: Vec<ReconnectAction> = decisions.iter().map(|d| d.action).collect();
    assert_eq!(
        actions,
        [
            ReconnectAction::Reprovision,
            ReconnectAction::Reprovision,
            ReconnectAction::Reprovision,
            ReconnectAction::Reprovision,
            ReconnectAction::Stop
        ]
    );
    assert_eq!(
        decisions[4].reason.as_str(),
        "provision_exhausted",
        "five calls in all"
    );
}

#[test]
fn policy_only_a_provisioned_session_resets_the_run_of_failures() {
    let mut policy = exact_policy();
    for i in 0..3u64 {
        let _ = policy.on_provision_failed(0, Millis(i));
    }
    let with_status = policy.on_provision_failed(503, Millis(5));
    assert_eq!(with_status.action, ReconnectAction::Reprovision);
    assert_eq!(policy.provision_failures(), 4, "a 503 counts too");
    policy.on_provisioned();
    assert_eq!(policy.provision_failures(), 0);
    for i in 0..4u64 {
        assert!(!policy.on_provision_failed(0, Millis(10 + i)).is_stop());
    }
}

/// L7: a backend that answers 503, 429 or 408 for ever (or fails with no status) ends the run
/// after `max_provision_attempts`: `start()` settles. Before, only status-less failures counted
/// and a 503 for ever was retried for ever.
#[test]
fn policy_a_retryable_status_for_ever_stops_after_max_provision_attempts() {
    for status in [503, 429, 408, 500, 0] {
        let mut policy = exact_policy();
        let decisions: Vec<_> = (0..5u64)
            .map(|i| policy.on_provision_failed(status, Millis(i * 100_000)))
            .collect();
        let stops: Vec<bool> = decisions.iter().map(|d| d.is_stop()).collect();
        assert_eq!(stops, [false, false, false, false, true], "status {status}");
        assert_eq!(
            decisions[4].reason,
            ReconnectReason::ProvisionExhausted,
            "status {status}"
        );
    }
}

#[test]
fn transcriber_a_url_refused_three_times_reprovisions_then_fails_with_dead_session() {
    let mut d = Drive::new(config());
    d.start();
    // A session that worked once: a dead URL from then on is an outage (R5), not a mistake.
    d.provisioned("wss://stt.example/v2/live?token=1");
    d.open();
    d.advance(1_000);
    d.close(1006);
    d.advance(1_000);
    for session in 1..=3 {
        if session > 1 {
            d.provisioned(&format!("wss://stt.example/v2/live?token={session}"));
        }
        for _ in 0..3 {
            d.close(1006); // the upgrade was refused: no open
            d.advance(1_000);
        }
    }
    assert_eq!(
        d.count(&Action::Provision),
        3,
        "two re-provisions, then stop"
    );
    let connects = d.connects();
    assert_eq!(
        connects.len(),
        10,
        "the one that opened, then three per URL"
    );
    let refused: Vec<(u32, bool)> = d
        .log
        .iter()
        .filter_map(|(_, action)| match action {
            Action::Error(TranscriberError::ConnectFailed {
                attempt, terminal, ..
            }) => Some((*attempt, *terminal)),
            _ => None,
        })
        .collect();
    assert_eq!(refused.len(), 9, "each refused connect is reported at once");
    assert!(
        refused.iter().all(|&(_, terminal)| !terminal),
        "{refused:?}"
    );
    assert_eq!(d.t.state(), State::Failed);
    assert!(d
        .log
        .iter()
        .any(|(_, action)| *action == Action::Error(TranscriberError::DeadSession)));
    assert_eq!(TranscriberError::DeadSession.code(), "dead_session");
    assert_eq!(d.advance(600_000), [], "nothing ever happens again");
}

#[test]
fn transcriber_connect_timeouts_count_as_failed_connects() {
    let mut d = Drive::new(TranscriberConfig {
        connect_timeout_ms: 300,
        ..config()
    });
    d.start();
    d.provisioned(URL);
    d.open();
    d.advance(1_000);
    d.close(1006);
    d.advance(3_000);
    assert_eq!(
        d.count(&Action::Provision),
        2,
        "the third timeout re-provisions"
    );
    assert_eq!(d.connects().len(), 4);
}

#[test]
fn transcriber_before_any_open_a_second_dead_url_fails_as_connect_failed() {
    // A handshake refused every time (a wrong credential, no `protocols`): no socket ever opens.
    // The first dead URL is re-provisioned (R5: it may be a stale one); the second is a mistake.
    let mut d = Drive::new(config());
    d.start();
    d.provisioned(URL);
    let mut reported = Vec::new();
    for _ in 0..3 {
        reported.extend(d.close(1006));
        reported.extend(d.step());
    }
    assert_eq!(
        d.t.state(),
        State::Provisioning,
        "a dead URL is re-provisioned"
    );
    d.provisioned("wss://stt.example/v2/live?token=2");
    for _ in 0..3 {
        reported.extend(d.close(1006));
        if d.t.state() != State::Failed {
            reported.extend(d.step());
        }
    }
    let errors: Vec<TranscriberError> = reported
        .into_iter()
        .filter_map(|action| match action {
            Action::Error(error) => Some(error),
            _ => None,
        })
        .collect();
    let failed = |attempt, terminal| TranscriberError::ConnectFailed {
        protocol: "gladia",
        attempt,
        attempts: 3,
        terminal,
    };
    assert_eq!(
        errors,
        [
            failed(1, false),
            failed(2, false),
            failed(3, false),
            failed(1, false),
            failed(2, false),
            failed(3, true)
        ],
        "each at once, the last of the second URL terminal"
    );
    assert_eq!(d.t.state(), State::Failed);
    assert_eq!(
        d.count(&Action::Provision),
        2,
        "one new session, none for the mistake"
    );
    assert_eq!(d.connects().len(), 6);
    assert!(errors[0]
        .to_string()
        .contains("check the credential and `protocols`"));
    assert!(errors[5]
        .to_string()
        .contains("no gladia socket ever opened"));
    assert_eq!(errors[5].code(), "connect_failed");
    assert!(!errors[0].is_terminal() && errors[5].is_terminal());
    assert_eq!(d.advance(600_000), [], "nothing ever happens again");
}

#[test]
fn transcriber_a_stale_first_url_is_reprovisioned_and_opens() {
    let mut d = Drive::new(config());
    d.start();
    d.provisioned(URL);
    for _ in 0..3 {
        d.close(1006);
        d.step();
    }
    d.provisioned("wss://stt.example/v2/live?token=2");
    d.open();
    assert_eq!(d.t.state(), State::Open);
    assert_eq!(d.count(&Action::Provision), 2);
}

#[test]
fn transcriber_end_session_three_times_in_a_window_fails_with_dead_session() {
    let mut d = Drive::opened(config(), URL);
    for session in 2..=3 {
        d.text(&kind("end_session"));
        d.advance(1_000);
        d.provisioned(&format!("wss://stt.example/v2/live?token={session}"));
        d.open();
    }
    d.text(&kind("end_session"));
    assert_eq!(d.t.state(), State::Failed);
    assert_eq!(d.count(&Action::Provision), 3);
    assert_eq!(d.count(&Action::Error(TranscriberError::DeadSession)), 1);
}

#[test]
fn transcriber_end_session_while_stopping_just_ends_the_stop() {
    let mut d = Drive::opened(config(), URL);
    d.t.stop(d.now);
    d.take();
    d.text(&kind("end_session"));
    assert_eq!(d.t.state(), State::Stopped);
    assert_eq!(d.count(&Action::Provision), 1);
}

#[test]
fn transcriber_a_provision_that_never_settles_is_cancelled_retried_then_fails() {
    let mut d = Drive::new(TranscriberConfig {
        provision_timeout_ms: 1_000,
        ..config()
    });
    d.start();
    let first = d.advance(1_000);
    assert_eq!(
        first[..2],
        [
            Action::CancelProvision,
            Action::StateChanged(State::Backoff)
        ],
        "cancelled at the timeout, then a backoff"
    );
    d.advance(60_000);
    assert_eq!(d.count(&Action::Provision), 5);
    assert_eq!(d.count(&Action::CancelProvision), 5);
    assert_eq!(d.t.state(), State::Failed);
    let error = TranscriberError::ProvisionExhausted { attempts: 5 };
    assert_eq!(d.count(&Action::Error(error.clone())), 1);
    assert_eq!(error.code(), "provision_exhausted");
    assert!(error.to_string().contains("5 times in a row"));
    assert_eq!(d.t.poll_timeout(), None);
}

#[test]
fn transcriber_a_late_provision_after_its_timeout_is_ignored() {
    let mut d = Drive::new(TranscriberConfig {
        provision_timeout_ms: 1_000,
        ..config()
    });
    d.start();
    d.advance(1_000);
    assert_eq!(d.t.state(), State::Backoff);
    assert_eq!(
        d.provisioned(URL),
        [],
        "the cancelled call's answer counts for nothing"
    );
}

#[test]
fn transcriber_a_provision_in_time_clears_its_timer() {
    let mut d = Drive::new(TranscriberConfig {
        provision_timeout_ms: 1_000,
        ..config()
    });
    d.start();
    d.advance(999);
    d.provisioned(URL);
    d.open();
    assert_eq!(d.advance(60_000), [], "no timeout fires once provisioned");
    assert_eq!(d.count(&Action::CancelProvision), 0);
}

#[test]
fn transcriber_text_over_max_message_bytes_is_malformed_and_skipped() {
    let mut d = Drive::opened(
        TranscriberConfig {
            max_message_bytes: 100,
            ..config()
        },
        URL,
    );
    let long = format!(
        r#"{{"type":"transcript","data":{{"is_final":true,"utterance":{{"text":"{}"}}}}}}"#,
        "x".repeat(100)
    );
    d.t.on_text(&long, d.now);
    d.t.on_oversize_message(d.now);
    assert_eq!(d.take(), [], "nothing delivered");
    assert_eq!(d.t.stats().malformed_messages, 2);
    d.t.on_text(
        r#"{"type":"transcript","data":{"is_final":true,"utterance":{"text":"ok"}}}"#,
        d.now,
    );
    assert_eq!(
        d.take(),
        [Action::Final {
            text: "ok".into(),
            utterance: 1
        }],
        "the next message is read"
    );
}

#[test]
fn transcriber_an_unreachable_backend_is_said_once_at_the_first_failure() {
    // `fetch` rejects with a TypeError: no network, or a backend of another origin without CORS.
    let errors = |actions: Vec<Action>| -> Vec<TranscriberError> {
        actions
            .into_iter()
            .filter_map(|action| match action {
                Action::Error(error) => Some(error),
                _ => None,
            })
            .collect()
    };
    let mut d = Drive::new(config());
    d.start();
    d.t.on_provision_unreachable(d.now);
    let unreachable = TranscriberError::ProvisionUnreachable { attempts: 5 };
    assert_eq!(
        errors(d.take()),
        std::slice::from_ref(&unreachable),
        "at the first failure"
    );
    assert_eq!(d.t.state(), State::Backoff, "L7 retries it");
    assert!(!unreachable.is_terminal());
    assert_eq!(unreachable.code(), "provision_unreachable");
    assert!(unreachable.to_string().contains("CORS"));
    d.step();
    d.t.on_provision_unreachable(d.now);
    assert_eq!(errors(d.take()), [], "said once while it lasts");

    // A provision that succeeded ends the run: a later outage is said again.
    d.step();
    d.provisioned(URL);
    d.open();
    d.t.on_close(4001, d.now); // Gladia: the session is over
    d.step();
    d.t.on_provision_unreachable(d.now);
    assert_eq!(errors(d.take()), [unreachable]);

    // The last attempt is the terminal error alone.
    let mut d = Drive::new(TranscriberConfig {
        reconnect: ReconnectConfig {
            max_provision_attempts: 1,
            ..config().reconnect
        },
        ..config()
    });
    d.start();
    d.t.on_provision_unreachable(d.now);
    assert_eq!(
        errors(d.take()),
        [TranscriberError::ProvisionExhausted { attempts: 1 }]
    );
}

#[test]
fn a_rejected_provision_names_the_fix() {
    let not_found = TranscriberError::ProvisionRejected { status: 404 }.to_string();
    assert!(
        not_found.contains("no such route") && not_found.contains("POST /api/stt/<protocol>"),
        "{not_found}"
    );
    let refused = TranscriberError::ProvisionRejected { status: 403 }.to_string();
    assert!(refused.contains("refused"), "{refused}");
    let other = TranscriberError::ProvisionRejected { status: 422 }.to_string();
    assert!(other.starts_with("provision() failed with HTTP 422") && other.ends_with("gave up"));
}

#[test]
fn a_failed_reprovision_is_retried_as_the_same_new_session() {
    // The backend answers 503 to the first call for a new session: the retry says
    // `session_over` still, with attempt 2, and R3 does not count it. Two new sessions then fit
    // the window, and a third stops.
    let mut d = Drive::opened(config(), "wss://stt.example/v2/live?token=one");
    let mut calls = Vec::new();
    for session in 2..=3 {
        d.close(4000);
        for status in [503, 0] {
            d.step();
            calls.push((d.t.provision_reason().as_str(), d.t.provision_attempt()));
            if status == 503 {
                d.t.on_provision_failed(503, d.now);
                d.take();
            }
        }
        d.provisioned(&format!("wss://stt.example/v2/live?token={session}"));
        d.open();
        d.advance(100);
    }
    assert_eq!(
        calls,
        [
            ("session_over", 1),
            ("session_over", 2),
            ("session_over", 1),
            ("session_over", 2)
        ]
    );
    assert_eq!(d.t.state(), State::Open);
    d.close(4000);
    assert_eq!(d.t.state(), State::Failed);
    assert!(d
        .log
        .iter()
        .any(|(_, action)| *action == Action::Error(TranscriberError::ReprovisionLimit)));
}
