// The package's entry under Node (the `node` export condition: SSR, test runners, scripts).
// The same API as the web entry, but `init()` with no argument reads the wasm that ships next to
// this file instead of fetching it, so no special call is needed. Nothing runs at import time.

import { readFile } from "node:fs/promises";
import initWeb from "./turnguard.js";

export * from "./turnguard.js";

let ready;

/**
 * Instantiates the wasm module once. Without an argument, from the package's own
 * `turnguard_bg.wasm`; an argument is passed on as the web entry takes it.
 */
export default function init(moduleOrPath) {
  if (moduleOrPath !== undefined) return initWeb(moduleOrPath);
  ready ??= readFile(new URL("./turnguard_bg.wasm", import.meta.url)).then(
    (bytes) => initWeb({ module_or_path: bytes }),
    (error) => {
      ready = undefined; // a later call may try again
      throw error;
    },
  );
  return ready;
}
