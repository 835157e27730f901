#!/usr/bin/env bash
# Every test turnguard has: native cargo tests, the wasm-bindgen-test suites in headless Chrome and
# Firefox, the TypeScript check of the public types, and the Node/Playwright end-to-end tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
step() { printf '\n== %s\n' "$*"; }

step "format and lints"
cargo fmt --check
cargo clippy --quiet --all-targets -- -D warnings
cargo clippy --quiet --lib --target wasm32-unknown-unknown -- -D warnings

step "native: cargo test"
cargo test --quiet

step "wasm: headless Chrome"
CHROMEDRIVER=/usr/bin/chromedriver cargo test --target wasm32-unknown-unknown --test 'browser_*'

step "wasm: headless Firefox"
GECKODRIVER="$(command -v geckodriver)" cargo test --target wasm32-unknown-unknown --test 'browser_*'

step "types: tsc --strict --noEmit"
node_modules/.bin/tsc -p tests/types/tsconfig.json

step "end to end: Node and Chromium"
node --test tests/e2e/ www/
