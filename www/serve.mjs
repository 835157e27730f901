#!/usr/bin/env node
// Runs the dev stack for the demo page: `node www/serve.mjs`.
// Listens on 127.0.0.1:$PORT (default 8080), or on a free port when that one
// is taken, prints the URLs, and stops cleanly on Ctrl-C / SIGTERM.

import { startDevStack } from "./devstack.mjs";

const DEFAULT_PORT = 8080;

function requestedPort() {
  const raw = process.env.PORT;
  if (raw === undefined || raw === "") return DEFAULT_PORT;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`PORT must be an integer in 0..65535, got "${raw}"`);
    process.exit(2);
  }
  return port;
}

async function start(port) {
  // Request lines only: method, path, status. Never query strings or bodies.
  const log = (line) => console.log(`  ${line}`);
  try {
    return await startDevStack({ port, log });
  } catch (error) {
    // STRICT_PORT=1 (the test runner's): a busy port is an error, never a silent move.
    if (error.code !== "EADDRINUSE" || port === 0 || process.env.STRICT_PORT === "1") throw error;
    console.log(`port ${port} is busy; using a free port instead`);
    return startDevStack({ port: 0, log });
  }
}

function banner(stack) {
  const base = stack.url.replace(/\/$/, "");
  return [
    `turnguard demo: ${stack.url}`,
    "",
    "mock endpoints:",
    `  LLM   POST ${base}/v1/chat/completions   (or ${base}/llm/<scenario>/v1/chat/completions)`,
    `  TTS   POST ${base}/tts                   (?fault=http500|hang)`,
    `  STT   POST ${base}/api/stt/<name>      (the app's backend) for ${stack.protocols.join(", ")}; GET ${base}/__protocols`,
    `  real speech synthesis    POST ${base}/tts?voice=en-us`,
    `  stats GET  ${base}/__stats   reset POST ${base}/__reset`,
    "",
  ].join("\n");
}

const stack = await start(requestedPort());
console.log(banner(stack));
// Load the speech model now, so the first "Start microphone" does not wait for it.
stack.warmSpeech().then(
  () => console.log("speech recognition ready (pocketsphinx)"),
  (error) => console.log(`speech recognition unavailable: ${error.message} (npm run bootstrap installs it)`),
);

let stopping = false;
async function stop(signal) {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping the dev stack`);
  await stack.close();
  process.exit(0);
}
process.on("SIGINT", () => stop("SIGINT"));
process.on("SIGTERM", () => stop("SIGTERM"));
