#!/usr/bin/env bash
# Builds the publishable package into pkg/: release wasm, wasm-bindgen glue and types, wasm-opt
# (keeping a copy with names in target/sizes/ for scripts/wasm-sizes.mjs),
# makes pkg/ the publishable package (scripts/package.mjs, which prints its packed size), and
# prints the gzipped size of each entry's wasm + glue as shipped.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

# A panic's location (file, line) is in the wasm as data even though the panic handler never
# reads it; on stable Rust it cannot be left out (`-Zlocation-detail=none` is nightly), but its
# paths need not name this machine's folders: the crates' registry folder and the project's own
# are cut off the front (the standard library's are `/rustc/<commit>/…` already, and stay).
remap=(--remap-path-prefix="$PWD/=")
for registry in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/; do
  remap+=(--remap-path-prefix="$registry=")
done
# Passed encoded (one flag per 0x1f-separated field), so a folder with a space stays one flag;
# a RUSTFLAGS of the caller's goes first, as cargo would have read it.
read -r -a flags <<< "${RUSTFLAGS:-}"
flags+=("${remap[@]}")
rustflags=$(IFS=$'\x1f'; echo "${flags[*]}")

# build_entry <out dir> [cargo flags]: one wasm build, its wasm-bindgen glue and wasm-opt.
build_entry() {
  local out="$1"
  shift
  local features=(--enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext
    --enable-mutable-globals --enable-reference-types --enable-multivalue)
  # The optimised wasm with its names kept, for the bench's bytes per crate
  # (scripts/wasm-sizes.mjs): target/sizes/turnguard.wasm, controller.wasm, transcriber.wasm.
  local sizes=target/sizes/turnguard.wasm
  if [ "$out" != pkg ]; then sizes="target/sizes/$(basename "$out").wasm"; fi
  CARGO_ENCODED_RUSTFLAGS="$rustflags" cargo build --lib --release --target wasm32-unknown-unknown --quiet "$@"
  wasm-bindgen --target web --out-dir "$out" --out-name turnguard \
    target/wasm32-unknown-unknown/release/turnguard.wasm
  mkdir -p target/sizes
  node_modules/.bin/wasm-opt -Oz -g --strip-producers "${features[@]}" \
    "$out/turnguard_bg.wasm" -o "$sizes"
  # What ships is that code without its names. The levels add no pass, but without an optimising
  # level binaryen writes the code it reads back less compactly (0.3 % more code); with them the
  # result is within bytes of `-Oz --strip-debug` in one go.
  node_modules/.bin/wasm-opt --optimize-level=2 --shrink-level=2 --strip-debug --strip-producers --strip-target-features \
    "${features[@]}" "$sizes" -o "$out/turnguard_bg.wasm"
}

# `build.sh --main-only DIR [FEATURE]`: one entry alone into DIR, no package: `turnguard` (the
# `voice` feature, the default), or `transcriber` or `controller` (the bench's custom builds of
# one provider: TURNGUARD_PROTOCOLS=deepgram bash scripts/build.sh --main-only … transcriber).
if [ "${1:-}" = --main-only ]; then
  build_entry "${2:?--main-only needs a directory}" --no-default-features --features "${3:-voice}"
  node scripts/package.mjs --entry "$2"
  exit 0
fi

# "turnguard": the whole API. "turnguard/controller": the turn ladder and its routes only.
# "turnguard/transcriber": live speech-to-text only (LiveTranscriber, ReconnectPolicy, the protocols).
# Every entry is built without the `std` feature: `no_std`, with turnguard's own panic handler.
build_entry pkg --no-default-features --features voice
rm -rf pkg/controller pkg/transcriber
build_entry pkg/controller --no-default-features --features controller
build_entry pkg/transcriber --no-default-features --features transcriber
# The microphone worklet as a file of its own, for pages whose CSP forbids blob: scripts
# (attachMicrophone(stream, { workletUrl })).
cp src/web/capture-worklet.js pkg/capture-worklet.js
node scripts/package.mjs
node scripts/size.mjs
