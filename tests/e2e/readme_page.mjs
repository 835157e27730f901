// What the tests of the docs' page code share (tests/e2e/readme_voice.test.mjs,
// tests/e2e/recipes.test.mjs): Chromium with a user's autoplay policy, a page module loaded and
// watched without giving the page a user gesture, a log of the page's AudioContexts, and the
// package's wasm held back so that a click can come before `init()` settled.
//
// Playwright's evaluate() runs with a user gesture, which would let any AudioContext start: until
// the test clicks, these helpers only navigate and read the console.

import { chromium } from "playwright-core";
import { VOICE_CHROMIUM_ARGS } from "../../bench/voice.mjs";
import { CHROMIUM_ARGS } from "./harness.mjs";

/** Chromium as a user has it: Web Audio starts only after a gesture (the harness's default lets any page play). */
export function launchGestureChromium(extraArgs = []) {
  const args = [
    ...CHROMIUM_ARGS.filter((arg) => !arg.startsWith("--autoplay-policy=")),
    ...VOICE_CHROMIUM_ARGS,
    // Chrome's default policy ("user-gesture-required" gates media elements, not Web Audio).
    "--autoplay-policy=document-user-activation-required",
    ...extraArgs,
  ];
  return chromium.launch({ executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium", args, headless: true });
}

const CONTEXT_LINE = /^\[audiocontext\] (\d+) (\w+) gesture=(true|false)$/;

/** Logs to the console, before the page's modules run, each AudioContext made and each state it takes, with whether the page had a gesture then. */
function watchAudioContexts() {
  const Native = window.AudioContext;
  let made = 0;
  window.AudioContext = class extends Native {
    constructor(...args) {
      super(...args);
      const n = (made += 1);
      const log = () => console.debug(`[audiocontext] ${n} ${this.state} gesture=${navigator.userActivation.hasBeenActive}`);
      log();
      this.addEventListener("statechange", log);
    }
  };
}

/** The AudioContexts the console lines report: `[{ n, states, madeAfterGesture }]`. */
export function audioContextsOf(console) {
  const contexts = new Map();
  for (const { text } of console) {
    const match = CONTEXT_LINE.exec(text);
    if (!match) continue;
    const [, n, state, gesture] = match;
    if (!contexts.has(n)) contexts.set(n, { n: Number(n), states: [], madeAfterGesture: gesture === "true" });
    contexts.get(n).states.push(state);
  }
  return [...contexts.values()];
}

/**
 * Serves `script` as a module in a page of the dev stack's origin (`turnguard` mapped to the built
 * package, `body` before it), watches its AudioContexts, and resolves once the module ran, without
 * a user gesture. `holdWasm`: the package's wasm is answered only after `release()` (returned).
 */
export async function loadPage(page, console, stackUrl, script, { body = "", holdWasm = false, timeoutMs = 30_000 } = {}) {
  const url = new URL("/__docs_page.html", stackUrl).href;
  const html = `<!doctype html><meta charset="utf-8">${body}
<script type="importmap">{ "imports": { "turnguard": "/pkg/turnguard.js" } }</script>
<script type="module">
import("/__docs_page.mjs").then(() => console.debug("[module] ok"), (error) => console.debug("[module] failed " + (error && error.stack || error)));
</script>`;
  await page.addInitScript(watchAudioContexts);
  let release = () => {};
  let requested = Promise.resolve();
  if (holdWasm) {
    const released = new Promise((resolve) => (release = resolve));
    let asked;
    requested = new Promise((resolve) => (asked = resolve));
    await page.route("**/pkg/turnguard_bg.wasm", async (route) => {
      asked();
      await released;
      await route.continue();
    });
  }
  await page.route(url, (route) => route.fulfill({ contentType: "text/html", body: html }));
  await page.route(new URL("/__docs_page.mjs", stackUrl).href, (route) => route.fulfill({ contentType: "text/javascript", body: script }));
  await page.goto(url);
  for (const started = Date.now(); ; await new Promise((resolve) => setTimeout(resolve, 20))) {
    const done = console.find(({ text }) => text.startsWith("[module] "));
    if (done?.text === "[module] ok") break;
    if (done) throw new Error(`module failed: ${done.text.slice("[module] failed ".length)}`);
    if (Date.now() - started > timeoutMs) throw new Error("the module did not finish");
  }
  return { release, requested };
}
