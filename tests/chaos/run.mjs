// `npm run chaos -- --minutes M --seed S [--protocol <name>|rotate] [--tts mixed|whole|stream] [--lifecycle]`:
// a chaos soak of one VoiceSession at a time in headless Chromium against the dev stack
// (tests/chaos/page.mjs does the driving and the checking). Each session speaks one of the dev
// stack's speech-to-text protocols: `--protocol rotate` (the default) gives each new session the
// next one. Every session has preemptive attempts on. `--lifecycle` adds what the browser does to
// a page: offline and online, the back-forward cache, the AudioContext suspended or closed under
// the session, timers held back. Prints the table and ends with `chaos: <N>
// turns, <F> faults, <B> barge-ins, <P> preemptive (<K> kept, <D> discarded), <V> violations`;
// exits non-zero on any violation.

import { writeFileSync, mkdirSync } from "node:fs";
import { startDevStack } from "../../www/devstack.mjs";
import { loadDescriptors } from "../../www/devstack/protocols.mjs";
import { launchChromium } from "../e2e/harness.mjs";

/**
 * Barge-in options of the soak's sessions. The partial barge-ins wait the guard out; the mock
 * STT's partial ("utterance") has 9 characters.
 */
const ECHO_GUARD_MS = 600;
const MIN_PARTIAL_CHARS = 5;

function parseArgs(argv, names) {
  const options = { minutes: 1, seed: 1, tts: "mixed", protocol: "rotate", lifecycle: false };
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === "--lifecycle") {
      options.lifecycle = true;
      continue;
    }
    const [flag, inline] = argv[i].split("=");
    const value = inline ?? argv[++i];
    if (flag === "--minutes") options.minutes = Number(value);
    else if (flag === "--seed") options.seed = Number(value);
    else if (flag === "--tts") options.tts = value;
    else if (flag === "--protocol") options.protocol = value;
    else throw new TypeError(`unknown argument ${argv[i]}; use --minutes M --seed S --tts mixed|whole|stream --protocol <name>|rotate --lifecycle`);
  }
  if (!(options.minutes > 0)) throw new RangeError("--minutes must be a positive number");
  if (!Number.isInteger(options.seed)) throw new RangeError("--seed must be an integer");
  if (!["mixed", "whole", "stream"].includes(options.tts)) throw new RangeError("--tts must be mixed, whole or stream");
  if (options.protocol !== "rotate" && !names.includes(options.protocol)) throw new RangeError(`--protocol must be rotate or one of ${names.join(", ")}`);
  return options;
}

function table(rows) {
  const width = Math.max(...rows.map(([name]) => name.length));
  return rows.map(([name, value]) => `  ${name.padEnd(width)}  ${value}`).join("\n");
}

const mib = (bytes) => (Number.isFinite(bytes) ? `${(bytes / 1048576).toFixed(1)} MiB` : "n/a");

async function main() {
  // What the page needs of each protocol: its name, and how many frames it sends at a time.
  const protocols = (await loadDescriptors()).map(({ name, fixture }) => ({ name, fixture: { framesPerChunk: fixture?.framesPerChunk ?? 1 } }));
  const { minutes, seed, tts, protocol, lifecycle } = parseArgs(process.argv.slice(2), protocols.map((p) => p.name));
  const stack = await startDevStack({ port: 0 });
  const browser = await launchChromium(["--js-flags=--expose-gc", "--disable-features=LocalNetworkAccessChecks"]);
  const pageErrors = [];
  let report;
  try {
    const page = await browser.newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.exposeFunction("chaosProgress", (progress) => {
      console.log(`chaos: ${progress.elapsedMin.toFixed(1)} min, ${progress.turns} turns, ${progress.violations} violations`);
    });
    await page.exposeFunction("chaosViolation", (line) => console.log(`chaos: violation: ${line}`));
    const url = new URL("/__chaos.html", stack.url).href;
    const html = `<!doctype html><meta charset="utf-8"><script type="module">
import { runChaos } from "/tests/chaos/page.mjs";
runChaos({ devstack: ${JSON.stringify(stack.url.replace(/\/$/, ""))}, minutes: ${minutes}, seed: ${seed}, tts: ${JSON.stringify(tts)}, protocol: ${JSON.stringify(protocol)}, protocols: ${JSON.stringify(protocols)}, echoGuardMs: ${ECHO_GUARD_MS}, minPartialChars: ${MIN_PARTIAL_CHARS}, lifecycle: ${lifecycle}, onProgress: window.chaosProgress, onViolation: window.chaosViolation })
  .then((report) => (window.__chaos = { ok: true, report }), (error) => (window.__chaos = { ok: false, error: String(error && error.stack || error) }));
</script>`;
    await page.route(url, (route) => route.fulfill({ contentType: "text/html", body: html }));
    await page.goto(url);
    await page.waitForFunction(() => window.__chaos !== undefined, null, { timeout: minutes * 60_000 + 180_000, polling: 1000 });
    const done = await page.evaluate(() => window.__chaos);
    if (!done.ok) throw new Error(`the chaos page failed: ${done.error}`);
    report = done.report;
  } finally {
    await browser.close();
    await stack.close();
  }
  if (pageErrors.length > 0) {
    report.violations["no page error or unhandled rejection"] += pageErrors.length;
    report.examples.push(...pageErrors.slice(0, 5).map((message) => `page error: ${message}`));
  }

  const faults = Object.values(report.faults).reduce((a, b) => a + b, 0);
  const bargeIns = Object.values(report.bargeIns).reduce((a, b) => a + b, 0);
  const violations = Object.values(report.violations).reduce((a, b) => a + b, 0);
  const sorted = (object) => Object.entries(object).sort(([a], [b]) => a.localeCompare(b));
  console.log(`\nchaos soak: seed ${seed}, speech ${tts}, protocol ${protocol}${lifecycle ? ", lifecycle faults" : ""}, ${report.minutes.toFixed(1)} minutes, ${report.sessions} sessions`);
  console.log(`\nturns\n${table([["turns started", report.turns], ["typed", report.typed], ["spoken", report.spoken], ["of which paused after the partial", report.spokenPaused]])}`);
  console.log(`\nfaults injected by kind (${faults})\n${table(sorted(report.faults))}`);
  console.log(`\nbarge-ins by cause (${bargeIns})\n${table(sorted(report.bargeIns))}`);
  if (lifecycle) console.log(`\nlifecycle faults by kind (${Object.values(report.lifecycle).reduce((a, b) => a + b, 0)})\n${table(sorted(report.lifecycle))}`);
  const pauses = report.pauses;
  console.log(`\nbackchannels (V6): ${report.backchannels.said} typed while the agent spoke, ${report.backchannels.reported} reported as backchannels`);
  console.log(`pauses (V7): ${pauses.coughs} coughs, ${pauses.paused} pauses (${Object.entries(pauses.byCause).map(([cause, n]) => `${cause} ${n}`).join(", ") || "none"}): ${pauses.resumed} resumed, ${pauses.cut} cut, ${pauses.ended} ended with their turn or session`);
  const p = report.preemptive;
  const reasons = sorted(p.reasons).map(([reason, n]) => `${reason} ${n}`).join(", ");
  console.log(`\npreemptive attempts\n${table([["started (route called)", p.started], ["kept", p.kept], ["discarded", `${p.discarded}${reasons ? ` (${reasons})` : ""}`], ...sorted(p.byProtocol).map(([name, n]) => [`  ${name} (started/kept/discarded)`, `${n.started}/${n.kept}/${n.discarded}`])])}`);
  console.log(`\ninvariant violations (all must be 0)\n${table(Object.entries(report.violations))}`);
  const c = report.checks;
  console.log(`\nchecks made\n${table([["heard texts checked", c.heard], ["sources traced", c.sources], ["turns checked settled at session end", c.settled], ["frame accounts checked", c.frames], ["frame accounts skipped (transcriber not open)", c.framesUnchecked], ["request ids checked", c.requestIds], ["sentences traced to their route call (synthesize, onSpeech, sources)", c.traced], ["sentences with no trace (untagged)", c.untraced], ["turn_latency events checked", c.latency], ["of which with sound (marks ordered)", c.latencyOrdered]])}`);
  const m = report.memory;
  console.log(`\nmemory (wasm / JS heap after gc)\n${table([["start", `${mib(m.start?.wasm)} / ${mib(m.start?.heap)}`], ["after warm-up", `${mib(m.warm?.wasm)} / ${mib(m.warm?.heap)}`], ["end", `${mib(m.end?.wasm)} / ${mib(m.end?.heap)}`]])}`);
  if (report.examples.length > 0) console.log(`\nfirst violations\n${report.examples.map((e) => `  ${e}`).join("\n")}`);
  mkdirSync("target", { recursive: true });
  writeFileSync(`target/chaos-seed${seed}.json`, JSON.stringify({ seed, tts, protocol, minutes, ...report }, null, 2));
  console.log(`\nchaos: ${report.turns} turns, ${faults} faults, ${bargeIns} barge-ins, ${p.started} preemptive (${p.kept} kept, ${p.discarded} discarded), ${violations} violations`);
  process.exitCode = violations > 0 ? 1 : 0;
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 2;
});
