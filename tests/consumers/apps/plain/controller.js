// No bundler, "turnguard/controller" as it ships, under `script-src 'self' 'wasm-unsafe-eval'`.
import init, * as turnguard from "./node_modules/turnguard/controller/turnguard.js";
import { llmFromPage, oneTurn, report } from "./turn.js";

report(init().then(() => oneTurn(turnguard, llmFromPage())));
