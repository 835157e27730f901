// No bundler: the package's files as they ship, under `script-src 'self' 'wasm-unsafe-eval'`.
import init, * as turnguard from "./node_modules/turnguard/turnguard.js";
import { llmFromPage, oneTurn, report } from "./turn.js";

report(
  init()
    .then(() => oneTurn(turnguard, llmFromPage()))
    .then((result) => ({ ...result, inlineScriptRan: window.__inlineRan === true })),
);
