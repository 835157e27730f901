// The code blocks the docs mark as executed (`<!-- executed: <test file> <id> -->` right before
// the block), and the README's backend (server.mjs) started as a process of its own in front of
// the dev stack's mocks. tests/docs/markdown.test.mjs checks that each marked block's test asks for it.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";

const REPO = new URL("../../", import.meta.url);

/** The fenced block right after `<!-- executed: <testFile> <id> -->` in `file`. */
export function docBlock(file, testFile, id) {
  const text = readFileSync(new URL(file, REPO), "utf8");
  const marker = `<!-- executed: ${testFile} ${id} -->\n`;
  const at = text.indexOf(marker);
  assert.ok(at >= 0, `${file} marks a block "${id}" as executed by ${testFile}`);
  const match = /^```\w*\n([\s\S]*?)^```/m.exec(text.slice(at + marker.length));
  assert.ok(match && text.slice(at + marker.length).startsWith("```"), `a code block follows the "${id}" marker`);
  return match[1];
}

/** The address the README's blocks use for the backend, replaced by the test's. */
export const README_BACKEND = '"http://localhost:8787"';

let serverCount = 0;

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Runs `server`, the README's server.mjs as written, with its upstreams pointing at the dev stack's mocks
 * (`primary`: the LLM mock's scenario for the primary, default "ok") and `appOrigin` (default:
 * the dev stack's) as the page's origin; `env`: more of its environment (docs/providers.md's
 * routes read their provider's hosts and key from it). Resolves with `{ url, close() }`.
 */
export async function startReadmeBackend(stackUrl, server, { primary = "ok", appOrigin, env = {} } = {}) {
  const dir = new URL("target/e2e/", REPO);
  mkdirSync(dir, { recursive: true });
  const file = new URL(`readme-server-${process.pid}-${(serverCount += 1)}.mjs`, dir);
  writeFileSync(file, server);
  const port = await freePort();
  const stack = new URL(stackUrl);
  const child = spawn(process.execPath, [file.pathname], {
    stdio: ["ignore", "inherit", "inherit"],
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      APP_ORIGIN: appOrigin ?? stack.origin,
      PRIMARY_URL: new URL(`/llm/${primary}/v1/chat/completions`, stack).href,
      FALLBACK_URL: new URL("/llm/ok/v1/chat/completions", stack).href,
      GLADIA_API_URL: stack.origin, // the mock's POST /v2/live (its "normal" mode)
      TTS_URL: new URL("/tts", stack).href,
      OPENAI_API_KEY: "sk-server-only",
      GROQ_API_KEY: "gsk-server-only",
      GLADIA_API_KEY: "gladia-server-only",
      ...env,
    },
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i += 1) {
    try {
      if ((await fetch(`${url}/api/chat/primary`, { method: "OPTIONS" })).status === 204) break;
    } catch {}
    if (i > 100 || child.exitCode !== null) {
      child.kill();
      throw new Error("the README's server.mjs did not start");
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    /** `code` with the README's backend address replaced by this one's. */
    address(code) {
      assert.ok(code.includes(README_BACKEND), `the block calls ${README_BACKEND}`);
      return code.replaceAll(README_BACKEND, JSON.stringify(url));
    },
    async close() {
      child.kill();
      if (child.exitCode === null) await new Promise((resolve) => child.once("exit", resolve));
      rmSync(file, { force: true });
    },
  };
}
