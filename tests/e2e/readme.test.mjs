// The README's quick start, executed as written in Chromium against the dev stack: its last
// console line must be the one its `// →` comment promises.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { openPage, runModule, startE2e } from "./harness.mjs";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

function quickStart() {
  const section = readme.slice(readme.indexOf("## Quick start"));
  const match = /```js\n([\s\S]*?)```/.exec(section);
  assert.ok(match, "the README has a js block under ## Quick start");
  const code = match[1];
  const promised = /^\/\/ → (.*)$/m.exec(code);
  assert.ok(promised, "the quick start says what it prints with a `// →` line");
  return { code, expected: promised[1].trim() };
}

let e2e;
before(async () => {
  e2e = await startE2e();
});
after(async () => {
  await e2e?.close();
});

test("the README quick start runs as written and prints what it promises", async () => {
  const { code, expected } = quickStart();
  const { page, console, errors } = await openPage(e2e.browser);
  await runModule(page, e2e.stack.url, code);
  const logs = console.filter((line) => line.type === "log").map((line) => line.text);
  assert.equal(logs.at(-1), expected);
  assert.ok(logs.some((line) => line.startsWith("speak: You said: What's the weather like")), "the fallback's answer is spoken");
  assert.equal(logs.filter((line) => line.startsWith("speak:")).length, 1, "exactly one answer is spoken");
  // The 500 from the primary shows as a failed resource in the console; nothing else may fail.
  assert.deepEqual(errors.filter((error) => !/status of 500/.test(error)), []);
  const stats = e2e.stack.stats;
  assert.equal(stats.llm.scenarios.http500.requests, 1, "one call to the failing primary");
  assert.equal(stats.llm.scenarios.ok.requests, 1, "one call to the fallback");
  await page.close();
});
