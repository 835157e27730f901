//! A connection's life on every protocol: each close as its class says (R2), fresh credentials per
//! connect where they serve one (R6), URLs that never open (R5), a session the server ends, and
//! the keepalive while no audio flows (L9).

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use super::{all, assert_run, every, CloseCase, Conversation, Fixture};
use crate::transcriber_sim::*;
use turnguard::core::stt::protocol::{CloseClass, Credentials};
use turnguard::core::stt::reconnect::ReconnectAction;
use turnguard::core::stt::transcriber::{
    Action, ProvisionReason, State, TranscriberConfig, TranscriberError,
};

/// A socket cut (1006) means a retry on every protocol.
const CUT: CloseCase = CloseCase::codes(&[1006], CloseClass::Retry);

/// After a close with `code`, what comes next is what its class says.
fn close_as_its_class_says(f: &'static Fixture, case: CloseCase, code: u16) {
    let name = format!("{} closing {code}", f.name());
    let mut c = Conversation::opened(f);
    c.speak(10);
    if let Some(before) = case.before {
        assert_eq!(c.hear(before), [], "{name}: the message before it");
    }
    let closed = c.d.close(code);
    let report = c.d.t.take_close_report().expect("a close report");
    assert_eq!(c.d.t.take_close_report(), None, "{name}: taken once");
    assert_eq!((report.code, report.class), (code, case.class), "{name}");
    let initial = c.d.t.config().reconnect.initial_delay_ms;
    let old_url = c.url();
    match case.class {
        CloseClass::Fatal => {
            let error = TranscriberError::FatalClose { code };
            assert!(error.to_string().contains(&code.to_string()), "{name}");
            assert_eq!(
                closed[closed.len() - 2..],
                [Action::Error(error), Action::StateChanged(State::Failed)],
                "{name}: a terminal error naming the code"
            );
            assert_eq!((report.next, report.delay_ms), (ReconnectAction::Stop, 0));
            assert_eq!(c.d.advance(600_000), [], "{name}: nothing ever again");
            return;
        }
        CloseClass::SessionOver => {
            assert_eq!(
                (report.next, report.delay_ms),
                (ReconnectAction::Reprovision, initial)
            );
        }
        CloseClass::Retry => {
            assert_eq!(
                (report.next, report.delay_ms),
                (ReconnectAction::ReconnectSameUrl, initial)
            );
        }
        CloseClass::Throttled => {
            let least = TranscriberConfig::DEFAULT_THROTTLED_DELAY_MS;
            assert_eq!(report.next, ReconnectAction::ReconnectSameUrl, "{name}");
            assert!(report.delay_ms >= least, "{name}: {} ms", report.delay_ms);
        }
    }
    assert_eq!(c.d.t.state(), State::Backoff, "{name}");
    let waited = c.d.advance(report.delay_ms - 1);
    assert!(
        !waited
            .iter()
            .any(|a| matches!(a, Action::Provision | Action::Connect(_))),
        "{name}: not before the delay"
    );
    let back = c.d.advance(1);
    let fresh = f.profile.credentials == Credentials::PerConnection;
    let (asks, reason) = match case.class {
        CloseClass::SessionOver => (true, ProvisionReason::SessionOver),
        _ => (fresh, ProvisionReason::Reconnect),
    };
    if asks {
        assert_eq!(back.last(), Some(&Action::Provision), "{name}");
        assert_eq!(c.d.t.provision_reason(), reason, "{name}");
        c.provisioned();
        assert_ne!(c.url(), old_url);
    } else {
        assert_eq!(
            back.last(),
            Some(&Action::Connect(old_url.clone())),
            "{name}"
        );
    }
    let mut resent = c.open();
    resent.extend(c.d.advance(1_000));
    let resent = sent(&resent);
    assert_run(f, &resent, 1, 10, "nothing lost to the close");
    assert_eq!(
        c.d.connects().last().map(|(_, url)| url.clone()),
        Some(c.url())
    );
    assert_eq!(c.d.t.state(), State::Open, "{name}: open again");
}

#[test]
fn every_close_is_followed_as_its_class_says() {
    all(|f| {
        for &case in std::iter::once(&CUT).chain(f.closes) {
            for &code in case.codes {
                close_as_its_class_says(f, case, code);
            }
        }
    });
}

#[test]
fn a_reconnect_brings_fresh_credentials_where_they_serve_one_connection_outside_r3() {
    all(|f| {
        let name = f.name();
        let mut c = Conversation::opened(f);
        assert_eq!(c.d.t.provision_reason(), ProvisionReason::Start, "{name}");
        // Three drops in a minute: more than R3's window allows re-provisions.
        for round in 0..3 {
            c.d.advance(10_000);
            c.d.close(1006);
            let back = c.reconnect();
            let asked = back.contains(&Action::Provision);
            match f.profile.credentials {
                Credentials::PerConnection => {
                    assert!(asked, "{name} round {round}: fresh credentials");
                    assert_eq!(c.d.t.provision_reason(), ProvisionReason::Reconnect);
                }
                Credentials::Session => assert!(!asked, "{name} round {round}: the same URL"),
            }
        }
        assert_eq!(
            c.d.t.state(),
            State::Open,
            "{name}: R3 counts dead sessions only"
        );
        let provisions = match f.profile.credentials {
            Credentials::PerConnection => 4,
            Credentials::Session => 1,
        };
        assert_eq!(c.d.count(&Action::Provision), provisions, "{name}");
    });
}

#[test]
fn three_sockets_that_never_open_end_the_session_by_r5() {
    all(|f| {
        let name = f.name();
        let mut c = Conversation::new(f);
        c.d.start();
        c.provisioned();
        // Once a socket opened, a dead URL is an outage: R5 re-provisions it.
        c.open();
        c.d.advance(1_000);
        c.d.close(1006);
        c.d.advance(1_000);
        if f.profile.credentials == Credentials::PerConnection {
            c.provisioned();
        }
        // A refused handshake (an expired token, a dead URL) is a close before any open.
        for _ in 0..2 {
            c.d.close(1006);
            let back = c.d.advance(1_000);
            if f.profile.credentials == Credentials::PerConnection {
                assert_eq!(
                    c.d.t.provision_reason(),
                    ProvisionReason::Reconnect,
                    "{name}"
                );
                c.provisioned();
            } else {
                assert_eq!(back.last(), Some(&Action::Connect(c.url())), "{name}");
            }
        }
        c.d.close(1006);
        c.d.advance(1_000);
        assert_eq!(c.d.t.state(), State::Provisioning, "{name}");
        assert_eq!(
            c.d.t.provision_reason(),
            ProvisionReason::SessionOver,
            "{name}"
        );
        c.provisioned();
        c.open();
        assert_eq!(c.d.t.state(), State::Open, "{name}");
    });
}

#[test]
fn a_session_the_server_ends_is_provisioned_anew_never_its_url_again() {
    every(
        |f| f.session_over.is_some(),
        |f| {
            let name = f.name();
            let mut c = Conversation::opened(f);
            c.capture(1);
            let ended = c.hear(f.session_over.expect("applies"));
            assert_eq!(
                ended,
                [Action::Close, Action::StateChanged(State::Backoff)],
                "{name}: the socket goes, the session with it"
            );
            assert_eq!(c.d.close(1000), [], "{name}: its close is no news");
            let back = c.reconnect();
            assert!(back.contains(&Action::Provision), "{name}");
            assert_eq!(c.d.t.provision_reason(), ProvisionReason::SessionOver);
            assert_eq!(
                sent(&back),
                [1],
                "{name}: the unconfirmed frame goes to the new one"
            );
            let urls: Vec<String> = c.d.connects().into_iter().map(|(_, url)| url).collect();
            assert_eq!(urls, [f.url.to_owned(), c.url()], "{name}");
        },
    );
}

#[test]
fn keepalive_while_no_audio_flows_where_the_protocol_needs_one() {
    all(|f| {
        let name = f.name();
        let mut c = Conversation::opened(f);
        let Some(keepalive) = f.profile.keepalive else {
            assert_eq!(messages(&c.d.advance(60_000)), [] as [String; 0], "{name}");
            return;
        };
        let idle = c.d.advance(2 * keepalive.idle_ms + keepalive.idle_ms / 2);
        assert_eq!(messages(&idle), [keepalive.message; 2], "{name}: twice");
        let keepalives: Vec<u64> =
            c.d.log
                .iter()
                .filter(|(_, a)| *a == Action::SendText(keepalive.message.into()))
                .map(|(at, _)| at.0)
                .collect();
        assert_eq!(
            keepalives,
            [keepalive.idle_ms, 2 * keepalive.idle_ms],
            "{name}"
        );
        // Audio flowing: none.
        let speaking_ms = 2 * keepalive.idle_ms;
        let flowing = c.speak(u32::try_from(speaking_ms / 20).unwrap_or(0));
        assert_eq!(messages(&flowing), [] as [String; 0], "{name}");
    });
}
