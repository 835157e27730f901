#!/usr/bin/env bash
# Every test turnguard has: native cargo tests, the wasm-bindgen-test suites in headless Chrome and
# Firefox, the TypeScript check of the public types, and the Node/Playwright end-to-end tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
step() { printf '\n== %s\n' "$*"; }

step "format and lints"
cargo fmt --check
# The protocols are modules of a list that build.rs writes, which `cargo fmt` does not follow.
rustfmt --edition 2021 --check src/core/stt/protocols/*.rs
cargo clippy --quiet --all-targets -- -D warnings
cargo clippy --quiet --lib --target wasm32-unknown-unknown -- -D warnings

step "native: cargo test"
cargo test --quiet
# The voice detector's trial with earshot's network (never shipped; performance.md, "The voice
# detector: energy or earshot"): its detector tests with the network in.
cargo test --quiet --lib --features earshot core::voice::vad

# The same scenario and property suites of the core on wasm32 (32-bit usize, wasm float
# formatting and allocation), under wasm-bindgen-test in Node: no browser needed. The files alias
# `wasm_bindgen_test` as `test` under wasm; proptest runs there too (turn_properties with fewer cases).
step "wasm: core suites in Node"
core_suites=$(ls tests/*.rs | xargs -n1 basename | sed 's/\.rs$//' | grep -v '^browser_')
cargo test --target wasm32-unknown-unknown $(printf -- '--test %s ' $core_suites)

# The browser suites talk to the dev stack (mock LLM, STT, TTS) on a fixed loopback port, which
# the test crates read at compile time (TURNGUARD_DEVSTACK_URL).
export TURNGUARD_DEVSTACK_PORT="${TURNGUARD_DEVSTACK_PORT:-47831}"
export TURNGUARD_DEVSTACK_URL="http://127.0.0.1:${TURNGUARD_DEVSTACK_PORT}"
PORT="$TURNGUARD_DEVSTACK_PORT" STRICT_PORT=1 node www/serve.mjs > target/devstack.log 2>&1 &
devstack_pid=$!
trap 'kill "$devstack_pid" 2>/dev/null || true' EXIT
node -e 'const url = process.argv[1];
  const ready = async () => { for (let i = 0; i < 100; i++) { try { if ((await fetch(url)).ok) return; } catch {} await new Promise((r) => setTimeout(r, 100)); } throw new Error(`dev stack not up at ${url}`); };
  ready().catch((error) => { console.error(error.message); process.exit(1); });' "$TURNGUARD_DEVSTACK_URL/__stats"
if ! kill -0 "$devstack_pid" 2>/dev/null; then
  echo "the dev stack could not start on port $TURNGUARD_DEVSTACK_PORT:" >&2
  cat target/devstack.log >&2
  exit 1
fi

# The runner's timeout caps a whole suite in one browser, not one test (its default is 20 s):
# browser_session runs about two minutes in Firefox here (108 s with 27 tests on 2 cores).
export WASM_BINDGEN_TEST_TIMEOUT=300

# One browser suite. Headless Chrome (and, rarely, Firefox) here sometimes stalls before it loads
# the test module at all
# ("Failed to detect test as having been run"); such a run tested nothing, so it is run once more.
# A failing assertion is never retried.
browser_suite() {
  local suite=$1 log
  log=$(mktemp)
  for attempt in 1 2 3; do
    if cargo test --target wasm32-unknown-unknown --test "$suite" 2>&1 | tee "$log"; then
      rm -f "$log"
      return 0
    fi
    # webdriver.json caps a page load at 60 s, so a stall ends with the driver's page-load timeout:
    # Chrome's renderer timeout, or Firefox's failed navigation.
    if [ "$attempt" != 3 ] && grep -qE "Timed out receiving message from renderer|/url request failed|Failed to detect test as having been run" "$log"; then
      echo "note: the browser never ran $suite (a startup stall); running it again"
      continue
    fi
    rm -f "$log"
    return 1
  done
}
suites=$(ls tests/browser_*.rs | xargs -n1 basename | sed 's/\.rs$//')

step "wasm: headless Chrome"
for suite in $suites; do CHROMEDRIVER=/usr/bin/chromedriver browser_suite "$suite"; done

step "wasm: headless Firefox"
# Headless Firefox runs an AudioContext only with an audio server: a per-user PulseAudio daemon
# with a null sink (idempotent: an already running daemon is kept). Without it the audio scenarios
# print why they are skipped.
start_pulseaudio() {
  command -v pulseaudio >/dev/null || { echo "note: no pulseaudio; Firefox audio scenarios will be skipped"; return 0; }
  export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$PWD/target/pulse-runtime}"
  mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
  pulseaudio --check 2>/dev/null && return 0
  pulseaudio -D --exit-idle-time=-1 -n --load="module-null-sink sink_name=null" \
    --load=module-native-protocol-unix 2>&1 || echo "note: pulseaudio did not start; Firefox audio scenarios will be skipped"
}
start_pulseaudio
for suite in $suites; do GECKODRIVER="$(command -v geckodriver)" browser_suite "$suite"; done

step "types: tsc --strict --noEmit"
node_modules/.bin/tsc -p tests/types/tsconfig.json

step "end to end: Node and Chromium"
node --test tests/docs/ tests/e2e/ www/

step "chaos: a short fixed-seed soak of one VoiceSession at a time, each new one on the next protocol (npm run chaos -- --minutes M --seed S [--protocol NAME] for long runs)"
node tests/chaos/run.mjs --minutes 1 --seed 7 --protocol rotate --lifecycle

step "room: real audio (PulseAudio, Chromium, espeak-ng, pocketsphinx), three rounds (npm run room -- --rounds N … for figures)"
node --test tests/room/

step "bench: a smoke run with tiny sizes (figures come from npm run bench)"
BENCH_TINY=1 node bench/run.mjs

step "consumers: the packed tarball in Vite 8 and 6, webpack 5, a plain page, a worker, Node, tsc; examples/react"
node --test tests/consumers/ tests/examples/
