// What the official-SDK checks of the protocol mocks (www/sdk-<name>.test.mjs) share: a dev stack
// per test file (with a TLS proxy in front of it for the SDKs that connect to wss: only), whether
// real speech can be checked here, and numbered frames for the scripted recognizer.

import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import tls from "node:tls";
import { speechToolsMissing } from "../tests/e2e/demo-speech.mjs";
import { startDevStack } from "./devstack.mjs";
import { enginePython } from "./devstack/engine.mjs";

/** Why the real-speech checks cannot run here, or false. */
export const skipSpeech = speechToolsMissing() ?? (enginePython() ? false : "no .venv with pocketsphinx (npm run bootstrap makes it)");

/** Why there can be no TLS proxy here (no openssl to make its certificate), or false. */
export const opensslMissing = (() => {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return false;
  } catch {
    return "no openssl to make the proxy's certificate";
  }
})();

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A 20 ms frame of 16 kHz PCM16 whose first four bytes are `number` (the scripted recognizer's word). */
export function frame(number) {
  const bytes = Buffer.alloc(640);
  bytes.writeUInt32LE(number, 0);
  return bytes;
}

/**
 * A dev stack for this test file: `env.stack` once the file's tests run. With `tls`, also
 * `env.tlsPort`: a TLS proxy to it whose self-made certificate this test process trusts. `ready(env)`
 * runs once they are up (a file's own `before` may run before they are).
 */
export function devStackForTests({ tls: withTls = false, ready = () => {} } = {}) {
  const env = { stack: null, tlsPort: null, proxy: null };
  before(async () => {
    env.stack = await startDevStack({ port: 0 });
    if (withTls && !opensslMissing) {
      env.proxy = tlsProxy(env.stack.port);
      await new Promise((resolve) => env.proxy.listen(0, "127.0.0.1", resolve));
      env.tlsPort = env.proxy.address().port;
      process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
    }
    await ready(env);
  });
  after(async () => {
    env.proxy?.close();
    await env.stack?.close();
  });
  return env;
}

function tlsProxy(port) {
  const dir = mkdtempSync(path.join(tmpdir(), "turnguard-tls-"));
  try {
    const key = path.join(dir, "key.pem");
    const cert = path.join(dir, "cert.pem");
    execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1"], { stdio: "ignore" });
    return tls.createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (socket) => {
      const upstream = net.connect(port, "127.0.0.1");
      socket.pipe(upstream).pipe(socket);
      socket.on("error", () => upstream.destroy());
      upstream.on("error", () => socket.destroy());
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
