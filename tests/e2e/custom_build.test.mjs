// A build for fewer providers (docs/setup.md): `turnguard/transcriber` built with
// TURNGUARD_PROTOCOLS=deepgram speaks Deepgram only, says so in its errors and its types, and
// leaves Gladia's development provisioner out with Gladia's protocol; the published build (pkg/)
// keeps every protocol. What the custom build loads is a figure of `npm run bench`.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const root = new URL("../../", import.meta.url);
const custom = new URL("target/custom/deepgram-transcriber/", root);

test("a Deepgram-only transcriber speaks Deepgram and nothing else", { timeout: 600_000 }, async () => {
  execFileSync("bash", ["scripts/build.sh", "--main-only", "target/custom/deepgram-transcriber", "transcriber"], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, TURNGUARD_PROTOCOLS: "deepgram" },
  });
  const built = await import(new URL("turnguard.js", custom));
  await built.default({ module_or_path: readFileSync(new URL("turnguard_bg.wasm", custom)) });

  new built.ReconnectPolicy({ protocol: "deepgram" }).free();
  assert.throws(
    () => new built.ReconnectPolicy({ protocol: "gladia" }),
    (error) => error instanceof RangeError && error.message === `options.protocol must be one of "deepgram"`,
  );
  assert.equal(built.gladiaProvisioner, undefined, "Gladia's provisioner leaves with Gladia's protocol");

  const types = readFileSync(new URL("turnguard.d.ts", custom), "utf8");
  assert.match(types, /export type TranscriberProtocol = "deepgram";/);
  assert.doesNotMatch(types, /gladiaProvisioner|GladiaProvisionerOptions/);

  // The published entry, built with every protocol, keeps both.
  const published = readFileSync(new URL("pkg/transcriber/turnguard.d.ts", root), "utf8");
  assert.match(published, /export function gladiaProvisioner\(/);
  assert.match(published, /export type TranscriberProtocol = "assemblyai" \| "deepgram" \|/);
});
