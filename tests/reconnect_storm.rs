//! Ten minutes of a misbehaving server in virtual time: how many provisions and connections the
//! reconnect policy lets through (rule L3). Run with `--nocapture` to see the counts.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use turnguard::core::stt::backoff::Jitter;
use turnguard::core::stt::protocols::gladia::PROFILE as GLADIA;
use turnguard::core::stt::reconnect::{ReconnectAction, ReconnectConfig, ReconnectPolicy};
use turnguard::core::time::Millis;

const STORM_MS: u64 = 10 * 60 * 1_000;

/// How the simulated server treats every connection: it accepts, then closes at once.
#[derive(Clone, Copy, Debug)]
struct Server {
    close_code: u16,
}

/// What the shell did during the storm.
#[derive(Debug, Default, PartialEq, Eq)]
struct Counts {
    provisions: u32,
    connections: u32,
}

/// A tiny shell: provision, connect, and follow each decision after its delay, until the
/// policy stops or the storm is over. Provisioning always succeeds; time only moves by the
/// decided delays, which is the worst case for the server.
fn drive(config: ReconnectConfig, server: Server) -> Counts {
    let mut policy = ReconnectPolicy::new(config);
    let mut counts = Counts::default();
    let mut now = Millis(0);
    let mut action = ReconnectAction::Reprovision; // the first provision starts the session
    while now.0 <= STORM_MS {
        match action {
            ReconnectAction::Stop => break,
            ReconnectAction::Reprovision => counts.provisions += 1,
            ReconnectAction::ReconnectSameUrl => {}
        }
        counts.connections += 1;
        policy.on_open(now);
        let decision = policy.on_close(
            server.close_code,
            GLADIA.close_class(server.close_code),
            now,
        );
        action = decision.action;
        now = now.after(decision.delay_ms);
    }
    counts
}

fn config(jitter: Jitter, seed: u64) -> ReconnectConfig {
    ReconnectConfig {
        jitter,
        random_seed: seed,
        ..ReconnectConfig::default()
    }
}

/// Connections a same-URL storm can make in `STORM_MS` when every delay equals the cap
/// `min(max, initial · 2^k)`: the first at 0, then one per delay while the sum stays in time.
fn connections_allowed_by_schedule(config: &ReconnectConfig) -> u32 {
    let mut connections = 1;
    let mut at = 0u64;
    let mut attempt = 0u32;
    loop {
        let cap = config
            .initial_delay_ms
            .saturating_mul(2u64.saturating_pow(attempt))
            .min(config.max_delay_ms);
        at = at.saturating_add(cap);
        if at > STORM_MS {
            return connections;
        }
        connections += 1;
        attempt += 1;
    }
}

#[test]
fn storm_of_4403_makes_at_most_three_provisions_and_three_connections() {
    for (jitter, seed) in [(Jitter::None, 0), (Jitter::Full, 0), (Jitter::Full, 99)] {
        let counts = drive(config(jitter, seed), Server { close_code: 4403 });
        println!("4403 storm, jitter {jitter:?}, seed {seed}: {counts:?}");
        // The first provision, then two re-provisions (R3); the third dead session stops.
        assert_eq!(
            counts,
            Counts {
                provisions: 3,
                connections: 3
            }
        );
    }
}

#[test]
fn storm_of_1006_without_jitter_makes_exactly_the_connections_the_schedule_allows() {
    let config = config(Jitter::None, 0);
    let bound = connections_allowed_by_schedule(&config);
    let counts = drive(config, Server { close_code: 1006 });
    println!("1006 storm, no jitter: {counts:?}, schedule allows {bound}");
    // 0, 500, 1 500, 3 500, 7 500, 15 500, 31 500, then every 30 s up to 571 500.
    assert_eq!(bound, 25);
    assert_eq!(counts.connections, bound);
    assert_eq!(counts.provisions, 1, "a same-URL storm never re-provisions");
}

#[test]
fn storm_of_1006_with_full_jitter_makes_at_least_the_no_jitter_count_and_about_twice() {
    // Full jitter draws each delay from [0, cap], so a delay can be 0 and no schedule bounds the
    // count from above; what holds for every seed is the lower bound: each delay is at most the
    // no-jitter delay of the same attempt, so connections come no later and there are at least
    // as many. Above that, the mean delay is cap / 2, so over many seeds the count should sit
    // near the schedule with halved caps. Seeds are fixed, so this is exact and repeatable.
    let floor = connections_allowed_by_schedule(&config(Jitter::None, 0));
    let halved = connections_allowed_by_schedule(&ReconnectConfig {
        initial_delay_ms: 250,
        max_delay_ms: 15_000,
        ..config(Jitter::None, 0)
    });
    let mut total = 0u32;
    let seeds = 64u32;
    let mut counts = Vec::new();
    for seed in 0..u64::from(seeds) {
        let run = drive(config(Jitter::Full, seed), Server { close_code: 1006 });
        assert_eq!(
            run,
            drive(config(Jitter::Full, seed), Server { close_code: 1006 }),
            "a seed replays exactly"
        );
        assert!(run.connections >= floor, "seed {seed}: {run:?} < {floor}");
        assert_eq!(run.provisions, 1);
        total += run.connections;
        counts.push(run.connections);
    }
    let mean = f64::from(total) / f64::from(seeds);
    println!(
        "1006 storm, full jitter over {seeds} seeds: min {:?}, max {:?}, mean {mean:.1}; \
         no-jitter floor {floor}, halved-cap schedule {halved}",
        counts.iter().min(),
        counts.iter().max(),
    );
    assert!(
        (f64::from(halved) * 0.75..=f64::from(halved) * 1.25).contains(&mean),
        "mean {mean} far from {halved}"
    );
}

#[test]
fn storm_of_1000_is_backed_off_like_any_other_close() {
    let config = config(Jitter::None, 0);
    let bound = connections_allowed_by_schedule(&config);
    let counts = drive(config, Server { close_code: 1000 });
    println!("1000 storm, no jitter: {counts:?}");
    assert_eq!(counts.connections, bound);
}
