#!/usr/bin/env bash
# Builds the publishable package into pkg/: release wasm, wasm-bindgen glue and types, wasm-opt,
# makes pkg/ the publishable package (scripts/package.mjs, which prints its packed size), and
# prints the gzipped size of each entry's wasm + glue as shipped.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

# build_entry <out dir> [cargo flags]: one wasm build, its wasm-bindgen glue and wasm-opt.
build_entry() {
  local out="$1"
  shift
  cargo build --lib --release --target wasm32-unknown-unknown --quiet "$@"
  wasm-bindgen --target web --out-dir "$out" --out-name turnguard \
    target/wasm32-unknown-unknown/release/turnguard.wasm
  node_modules/.bin/wasm-opt -Oz --strip-debug --strip-producers \
    --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue \
    "$out/turnguard_bg.wasm" -o "$out/turnguard_bg.wasm"
}

# "turnguard": the whole API. "turnguard/controller": the turn ladder and its routes only.
# "turnguard/transcriber": live speech-to-text only (LiveTranscriber, ReconnectPolicy, the protocols).
build_entry pkg
rm -rf pkg/controller pkg/transcriber
build_entry pkg/controller --no-default-features --features controller
build_entry pkg/transcriber --no-default-features --features transcriber
# The microphone worklet as a file of its own, for pages whose CSP forbids blob: scripts
# (attachMicrophone(stream, { workletUrl })).
cp src/web/capture-worklet.js pkg/capture-worklet.js
node scripts/package.mjs
node scripts/size.mjs
