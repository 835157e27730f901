//! The network as the browser reports it (W): while `offline`, nothing reconnects and nothing is
//! provisioned, audio waits within the buffer; on `online` the transcriber goes on at once.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod transcriber_sim;

use transcriber_sim::*;
use turnguard::core::stt::protocols::assemblyai;
use turnguard::core::stt::transcriber::{Action, State, TranscriberError};
use turnguard::core::time::Millis;

const URL: &str = "wss://stt.example/v2/live?token=one";

#[test]
fn offline_nothing_reconnects_and_online_reconnects_at_once() {
    let mut drive = Drive::opened(config(), URL);
    drive.audio(1);
    drive.t.set_online(false, drive.now);
    drive.advance(10);
    drive.close(1006);
    assert_eq!(drive.t.state(), State::Backoff);
    // A minute offline: the backoff ends, and still nothing connects or provisions.
    let waited = drive.advance(60_000);
    assert!(
        !waited
            .iter()
            .any(|a| matches!(a, Action::Connect(_) | Action::Provision)),
        "{waited:?}"
    );
    assert_eq!(drive.t.state(), State::Backoff);
    assert_eq!(drive.t.poll_timeout(), None, "no timer spins while offline");
    drive.audio(2);
    // Back online: connect at once, to the same URL; what was sent and unconfirmed goes again.
    let at = drive.now;
    drive.t.set_online(true, at);
    let back = drive.take();
    assert!(back.contains(&Action::Connect(URL.into())), "{back:?}");
    assert_eq!(drive.connects().last(), Some(&(at, URL.to_owned())));
    drive.open();
    drive.advance(100);
    let after: Vec<Action> = drive
        .log
        .iter()
        .filter(|(t, _)| *t >= at)
        .map(|(_, action)| action.clone())
        .collect();
    assert_eq!(
        sent(&after),
        [1, 2],
        "what waited went out on the new socket"
    );
    assert_eq!(
        drive.t.stats().provisions,
        1,
        "no provision() for the outage"
    );
}

#[test]
fn starting_offline_provisions_once_online() {
    let mut drive = Drive::new(config());
    drive.t.set_online(false, Millis(0));
    let started = drive.start();
    assert!(!started.contains(&Action::Provision), "{started:?}");
    assert_eq!(drive.t.state(), State::Backoff);
    drive.advance(30_000);
    assert_eq!(drive.count(&Action::Provision), 0);
    drive.t.set_online(true, drive.now);
    assert!(drive.take().contains(&Action::Provision));
    drive.provisioned(URL);
    drive.open();
    assert_eq!(drive.t.state(), State::Open);
}

#[test]
fn online_news_while_open_or_repeated_change_nothing() {
    let mut drive = Drive::opened(config(), URL);
    drive.t.set_online(true, drive.now);
    assert!(drive.take().is_empty());
    drive.t.set_online(false, drive.now);
    drive.t.set_online(false, drive.now);
    assert!(drive.take().is_empty(), "an open socket is left alone");
    assert_eq!(drive.t.state(), State::Open);
    drive.t.set_online(true, drive.now);
    assert!(drive.take().is_empty());
    assert!(!drive.t.is_offline());
}

#[test]
fn stop_while_waiting_offline_ends_the_transcriber() {
    let mut drive = Drive::opened(config(), URL);
    drive.t.set_online(false, drive.now);
    drive.close(1006);
    drive.advance(10_000);
    drive.t.stop(drive.now);
    drive.advance(10_000);
    assert_eq!(drive.t.state(), State::Stopped);
    drive.t.set_online(true, drive.now);
    assert!(
        !drive
            .take()
            .iter()
            .any(|a| matches!(a, Action::Connect(_) | Action::Provision)),
        "a stopped transcriber stays stopped"
    );
}

#[test]
fn a_page_in_the_back_forward_cache_closes_its_socket_and_reconnects_when_shown() {
    let mut drive = Drive::opened(config(), URL);
    drive.audio(1);
    drive.t.park(drive.now);
    let parked = drive.take();
    assert!(parked.contains(&Action::Close), "{parked:?}");
    assert_eq!(drive.t.state(), State::Backoff);
    // Cached for a minute: nothing connects, nothing is provisioned, no timer spins.
    let waited = drive.advance(60_000);
    assert!(
        !waited
            .iter()
            .any(|a| matches!(a, Action::Connect(_) | Action::Provision)),
        "{waited:?}"
    );
    assert_eq!(drive.t.poll_timeout(), None);
    // Shown again, offline: still nothing until the network is back.
    drive.t.set_online(false, drive.now);
    drive.t.unpark(drive.now);
    assert!(drive.take().is_empty());
    let at = drive.now;
    drive.t.set_online(true, at);
    assert!(drive.take().contains(&Action::Connect(URL.into())));
    assert_eq!(drive.connects().last(), Some(&(at, URL.to_owned())));
    drive.open();
    drive.advance(100);
    let after: Vec<Action> = drive
        .log
        .iter()
        .filter(|(t, _)| *t >= at)
        .map(|(_, action)| action.clone())
        .collect();
    assert_eq!(sent(&after), [1], "what was unconfirmed went out again");
    assert_eq!(drive.t.stats().provisions, 1, "no provision() for the stay");
    assert_eq!(drive.t.stats().connections, 2);
}

#[test]
fn parked_while_provisioning_provisions_again_when_shown() {
    let mut drive = Drive::new(config());
    let started = drive.start();
    assert!(started.contains(&Action::Provision));
    drive.t.park(drive.now);
    assert!(drive.take().contains(&Action::CancelProvision));
    drive.advance(30_000);
    assert_eq!(drive.count(&Action::Provision), 1);
    drive.t.unpark(drive.now);
    assert!(drive.take().contains(&Action::Provision));
    // Parking a stopped transcriber, or unparking one that was never parked, does nothing.
    drive.t.unpark(drive.now);
    assert!(drive.take().is_empty());
}

/// Each `provision()` call among `actions`, taken at `drive.now`, with its reason and attempt
/// as the shell reads them at the call.
fn provision_calls(drive: &mut Drive, actions: &[Action]) -> Vec<(Millis, &'static str, u32)> {
    actions
        .iter()
        .filter(|action| **action == Action::Provision)
        .map(|_| {
            (
                drive.now,
                drive.t.provision_reason().as_str(),
                drive.t.provision_attempt(),
            )
        })
        .collect()
}

#[test]
fn a_reprovision_held_by_an_outage_counts_from_its_call_not_from_when_it_was_due() {
    // R3 bounds the calls the app's backend sees: 2 new sessions in any 5 minutes. A session
    // that ends while offline is re-provisioned when the network is back, a minute and more
    // after its backoff ended; counting it from its due time would let a third call follow the
    // second within 5 minutes of the first.
    let mut drive = Drive::opened(config(), URL);
    drive.t.set_online(false, drive.now);
    drive.close(4000); // the session is over, due 50 ms later, held
    drive.advance(100_000);
    assert_eq!(drive.count(&Action::Provision), 1, "only the start's");
    drive.t.set_online(true, drive.now);
    let back = drive.take();
    let first = provision_calls(&mut drive, &back);
    assert_eq!(first, [(Millis(100_000), "session_over", 1)]);
    drive.provisioned("wss://stt.example/v2/live?token=two");
    drive.open();
    drive.advance(1_000);
    drive.close(4000);
    let second = drive.step();
    assert_eq!(
        provision_calls(&mut drive, &second),
        [(Millis(101_050), "session_over", 1)]
    );
    drive.provisioned("wss://stt.example/v2/live?token=three");
    drive.open();
    // 350 s after the first was due, 250 s after its call: a third now would be the third call
    // within 5 minutes.
    drive.advance(350_000 - drive.now.0);
    let at = drive.now;
    drive.close(4000);
    drive.advance(10_000);
    assert_eq!(drive.t.state(), State::Failed, "at {at:?}");
    assert!(drive
        .log
        .iter()
        .any(|(_, action)| *action == Action::Error(TranscriberError::ReprovisionLimit)));
    assert_eq!(
        drive.count(&Action::Provision),
        3,
        "the start's and two re-provisions"
    );
}

#[test]
fn a_reprovision_cancelled_by_the_cache_is_asked_again_as_a_retry() {
    let mut drive = Drive::opened(config(), URL);
    drive.close(4000);
    let due = drive.step();
    assert_eq!(
        provision_calls(&mut drive, &due),
        [(Millis(50), "session_over", 1)]
    );
    drive.t.park(drive.now);
    assert!(drive.take().contains(&Action::CancelProvision));
    drive.advance(30_000);
    drive.t.unpark(drive.now);
    let shown = drive.take();
    assert_eq!(
        provision_calls(&mut drive, &shown),
        [(drive.now, "session_over", 2)],
        "the same new session, asked again"
    );
    drive.provisioned("wss://stt.example/v2/live?token=two");
    assert_eq!(drive.t.state(), State::Connecting);
}

#[test]
fn fresh_credentials_after_the_cache_are_a_reconnect_not_another_new_session() {
    // AssemblyAI's tokens are single-use: a page shown again asks for one before it connects
    // (R6). That call is a reconnect even when the session before was a re-provisioned one; told
    // "session_over", the app's backend would count a third new session in the window (R3).
    let mut drive = Drive::opened(config_for(&assemblyai::PROFILE), URL);
    drive.advance(1_000);
    drive.close(3008); // the session's time is up
    let due = drive.step();
    assert_eq!(
        provision_calls(&mut drive, &due),
        [(drive.now, "session_over", 1)]
    );
    drive.provisioned("wss://stt.example/v3/ws?token=two");
    drive.open();
    drive.advance(1_000);
    drive.t.park(drive.now);
    assert!(drive.take().contains(&Action::Close));
    drive.advance(30_000);
    drive.t.unpark(drive.now);
    let shown = drive.take();
    assert_eq!(
        provision_calls(&mut drive, &shown),
        [(drive.now, "reconnect", 1)]
    );
    drive.provisioned("wss://stt.example/v3/ws?token=three");
    assert_eq!(drive.t.state(), State::Connecting);
}
