// examples/react, built from the packed tarball with the versions of its own package.json (cached
// under target/consumers/ like the consumer matrix) and clicked through in Chromium with the
// autoplay policy a user has (audio only after a gesture), against the README's backend in front
// of the dev stack's mocks: the dev server (StrictMode mounts twice: the first session must be
// freed) and a production build. The page's AudioContexts are watched: made on mount, running
// after the Start click, closed on unmount.

import assert from "node:assert/strict";
import { cpSync, readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { VOICE_CHROMIUM_ARGS } from "../../bench/voice.mjs";
import { startDevStack } from "../../www/devstack.mjs";
import { consumerProject, freePort, packTarball, REPO, run, startServer } from "../consumers/support.mjs";
import { docBlock, startReadmeBackend } from "../e2e/doc_blocks.mjs";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS } from "../e2e/harness.mjs";

const EXAMPLE = `${REPO}examples/react/`;
const WAIT = { timeout: 30_000 };

// Records every AudioContext the page makes, and whether each resume() call came inside a user
// gesture (the page's transient activation), before any of the page's modules run. Nothing is
// changed: the contexts are the browser's.
function watchAudioContexts() {
  const made = [];
  const Native = window.AudioContext;
  window.AudioContext = class extends Native {
    constructor(...args) {
      super(...args);
      made.push(this);
      this.resumes = [];
    }
    resume() {
      this.resumes.push(navigator.userActivation.isActive);
      return super.resume();
    }
  };
  window.__contexts = () => made.map((context) => context.state);
  window.__resumes = () => made.map((context) => context.resumes);
}

let dir;
let stack;
let browser;
before(async () => {
  const { tarball } = await packTarball();
  const manifest = JSON.parse(readFileSync(`${EXAMPLE}package.json`, "utf8"));
  const { turnguard, ...dependencies } = { ...manifest.dependencies, ...manifest.devDependencies };
  assert.ok(turnguard, "the example depends on turnguard");
  ({ dir } = await consumerProject("react", dependencies, tarball));
  for (const entry of ["index.html", "src"]) cpSync(`${EXAMPLE}${entry}`, `${dir}${entry}`, { recursive: true });
  stack = await startDevStack({ port: 0 });
  // Audio only after a user gesture, as for a user (the harness's default lets any page play).
  const args = [...CHROMIUM_ARGS.filter((arg) => !arg.startsWith("--autoplay-policy=")), ...VOICE_CHROMIUM_ARGS, "--autoplay-policy=user-gesture-required"];
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium", args, headless: true });
});
after(async () => {
  await browser?.close();
  await stack?.close();
});

/** Vite (`args`) serving the example, the README's backend allowing its origin, and a page on it. */
async function clickThrough(args, { strictModeDoubleMount }) {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const vite = await startServer(process.execPath, ["node_modules/vite/bin/vite.js", ...args, "--host", "127.0.0.1", "--port", String(port), "--strictPort"], { cwd: dir, url: `${origin}/` });
  const backend = await startReadmeBackend(stack.url, docBlock("README.md", "tests/e2e/readme.test.mjs", "server"), { appOrigin: origin });
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => message.type() === "error" && errors.push(message.text()));
  try {
    stack.reset();
    await page.addInitScript(watchAudioContexts);
    await page.goto(`${origin}/?backend=${encodeURIComponent(backend.url)}`);
    await page.locator("#state", { hasText: "idle" }).waitFor(WAIT);
    const contexts = () => page.evaluate(() => window.__contexts());
    // StrictMode in development: mount, unmount (free: its context closes), mount again.
    const count = strictModeDoubleMount ? 2 : 1;
    await page.waitForFunction((n) => window.__contexts().length === n && window.__contexts().slice(0, -1).every((state) => state === "closed"), count, WAIT).catch(async () => {
      assert.fail(`one session lives: ${JSON.stringify(await contexts())}`);
    });
    assert.notEqual((await contexts()).at(-1), "closed");

    // The gesture: audio may run, typed input is taken.
    await page.click("#start");
    await page.locator("#state", { hasText: "listening" }).waitFor(WAIT);
    assert.equal((await contexts()).at(-1), "running");
    const resumes = (await page.evaluate(() => window.__resumes())).at(-1);
    assert.ok(resumes.includes(true), `the Start click resumed the session's AudioContext inside the gesture (${JSON.stringify(resumes)})`);
    await page.fill("#say", "What's the weather like?");
    await page.click("#send");
    await page.locator("#answer", { hasText: "You said: What's the weather like" }).waitFor(WAIT);
    await page.locator("#state", { hasText: "listening" }).waitFor(WAIT);
    assert.equal(stack.stats.tts.requests > 0, true, "the answer was spoken");

    // The microphone, from a click: the fake device's audio becomes a final of the mock STT.
    await page.click("#talk");
    await page.locator("#caption", { hasText: /utterance \d+/ }).waitFor(WAIT);
    assert.equal(stack.stats.stt.modes.normal.open, 1, "one STT socket");

    // Unmount: the session is freed, its context closed, its socket closed for good.
    await page.click("#toggle");
    await page.waitForFunction(() => window.__contexts().every((state) => state === "closed"), null, WAIT);
    for (let i = 0; stack.stats.stt.modes.normal.open !== 0; i += 1) {
      assert.ok(i < 200, "the STT socket closes on unmount");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const sockets = stack.stats.stt.modes.normal.connections;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal(stack.stats.stt.modes.normal.connections, sockets, "nothing reconnects after unmount");
    assert.equal(stack.stats.stt.modes.normal.provisions, 1, "one session was provisioned: the StrictMode twin never started");
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
    await backend.close();
    await vite.stop();
  }
}

test("examples/react in the dev server: StrictMode's double mount, a gesture, typed input, the microphone, unmount", () =>
  clickThrough(["--force"], { strictModeDoubleMount: true }));

test("examples/react as a production build: the same, one mount", async () => {
  await run(process.execPath, ["node_modules/vite/bin/vite.js", "build"], { cwd: dir });
  await clickThrough(["preview"], { strictModeDoubleMount: false });
});
