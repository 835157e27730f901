#!/usr/bin/env bash
# The turn ladder's property schedules at scale (issue 8, item 7): 100 000 random schedules of
# whole and streamed answers, failures, stalls, interrupts, deadlines and bounds, in release mode.
# PROPTEST_CASES overrides the count.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export PROPTEST_CASES="${PROPTEST_CASES:-100000}"
# Optimised, but without the package's size-first release settings (LTO, opt-level "z", abort on
# panic): they only slow this build down, and proptest needs unwinding to report a failing case.
export CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_OPT_LEVEL=3
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 CARGO_PROFILE_RELEASE_PANIC=unwind
cargo test --release --test turn_properties --no-run
echo "turn properties: $PROPTEST_CASES schedules per property"
start=$(date +%s)
cargo test --release --test turn_properties
echo "turn properties: $PROPTEST_CASES schedules passed in $(($(date +%s) - start)) s"
