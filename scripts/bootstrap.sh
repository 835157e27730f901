#!/usr/bin/env bash
# Installs what turnguard's build and tests need, and only what is missing: the wasm target, the
# wasm-bindgen CLI of exactly the locked version, Debian's Chromium + ChromeDriver and Firefox ESR,
# geckodriver, and the npm dev dependencies. Idempotent; a few seconds when everything is there.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
say() { echo "bootstrap: $*"; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# The CLI must equal the wasm-bindgen crate in Cargo.lock, or the generated glue will not match.
want=$(awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/"/, "", $3); print $3 }' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{ print $2 }' || true)
if [ -n "$want" ] && [ "$have" != "$want" ]; then
  say "installing wasm-bindgen-cli $want (about 3 minutes)"
  # --locked first; when the registry mirror lacks one of the CLI's locked dependencies, resolve anew.
  cargo install wasm-bindgen-cli --version "$want" --locked ||
    cargo install wasm-bindgen-cli --version "$want"
fi

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
command -v firefox-esr >/dev/null || missing+=(firefox-esr)
# The demo's speech: espeak-ng speaks (TTS and the test WAVs), sox resamples, python3-venv holds pocketsphinx.
command -v espeak-ng >/dev/null || missing+=(espeak-ng)
command -v sox >/dev/null || missing+=(sox)
command -v python3 >/dev/null || missing+=(python3)
python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
# Headless Firefox runs an AudioContext only with an audio server: a per-user null sink (test.sh).
command -v pulseaudio >/dev/null || missing+=(pulseaudio)
# The OpenAI and AssemblyAI SDK checks reach their mocks through a TLS proxy whose certificate
# openssl makes (both SDKs connect to wss: only); without it those checks would skip.
command -v openssl >/dev/null || missing+=(openssl)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]} with apt"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

if ! command -v geckodriver >/dev/null; then
  say "installing geckodriver (about 1 minute)"
  cargo install geckodriver --locked || cargo install geckodriver
fi

# The demo's speech recognition: pocketsphinx 5 (its wheel ships the US-English model) in .venv.
if ! .venv/bin/python -c 'import pocketsphinx' 2>/dev/null; then
  say "making .venv with pocketsphinx (speech recognition for the demo)"
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check 'pocketsphinx>=5,<6'
fi

# npm 11 runs no install scripts of dependencies; none of ours needs one.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm dev dependencies"
  npm ci --no-audit --no-fund --loglevel=error
fi
