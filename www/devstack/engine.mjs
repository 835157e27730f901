// The real recognizer of the dev stack: pocketsphinx in one Python process (stt_engine.py) that
// every mock shares, started on first use and stopped with the dev stack. Each recognition
// session is `{ audio(buffer), flush(), close() }` and reports the events recognizers.mjs lists.

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ENGINE = path.join(HERE, "stt_engine.py");
/** The Python of the repo's virtual environment, made by scripts/bootstrap.sh. */
export const VENV_PYTHON = path.resolve(HERE, "../../.venv/bin/python");
const ENGINE_READY_MS = 20_000;
const noop = () => {};

/** Which Python runs the engine: $TURNGUARD_PYTHON, else the repo's .venv, else null. */
export function enginePython(env = process.env) {
  if (env.TURNGUARD_PYTHON) return env.TURNGUARD_PYTHON;
  return existsSync(VENV_PYTHON) ? VENV_PYTHON : null;
}

/**
 * The recognition process for `python` (null: recognition unavailable, every `open` rejects).
 * `phrases`: a file of the phrases it may hear, one a line (stt_engine.py's `--phrases`: a grammar
 * in place of the general language model), or null. `open(onEvent)` resolves to a session handle;
 * `warm()` starts the process now (npm start does, so the first session does not wait for the
 * model); `stats()` says whether it runs.
 */
export function createEngine(python = enginePython(), { phrases = null } = {}) {
  let child = null;
  let ready = null;
  let nextNumber = 1;
  let sessions = 0;
  const listeners = new Map();
  const missing = () => Promise.reject(new Error("no .venv with pocketsphinx: run `npm run bootstrap`"));

  function start() {
    child = spawn(python, phrases ? [ENGINE, "--phrases", phrases] : [ENGINE], { stdio: ["pipe", "pipe", "pipe"] });
    const proc = child;
    ready = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the speech engine did not start in time")), ENGINE_READY_MS);
      readline.createInterface({ input: proc.stdout }).on("line", (line) => {
        let message;
        try {
          message = JSON.parse(line);
        } catch {
          return;
        }
        if (message.type === "ready") {
          clearTimeout(timer);
          resolve();
        } else {
          listeners.get(message.id)?.(message);
        }
      });
      proc.on("exit", () => {
        clearTimeout(timer);
        reject(new Error("the speech engine exited"));
        if (child === proc) child = null;
        for (const listener of listeners.values()) listener({ type: "error" });
        listeners.clear();
      });
    });
    ready.catch(noop);
    // stderr carries the engine's own errors (never audio or text): pass them on.
    proc.stderr.on("data", (data) => process.stderr.write(data));
    proc.stdin.on("error", noop);
  }

  const write = (message) => child?.stdin.write(`${JSON.stringify(message)}\n`);

  async function open(onEvent) {
    if (!python) return missing();
    if (!child) start();
    await ready;
    const id = nextNumber++;
    sessions += 1;
    listeners.set(id, onEvent);
    write({ op: "open", id });
    return {
      audio: (buffer) => write({ op: "audio", id, pcm: buffer.toString("base64") }),
      flush: () => write({ op: "flush", id }),
      close: () => {
        listeners.delete(id);
        write({ op: "close", id });
      },
    };
  }

  async function close() {
    const proc = child;
    if (!proc) return;
    child = null;
    const exited = new Promise((resolve) => proc.once("exit", resolve));
    proc.stdin.end();
    proc.kill("SIGTERM");
    await exited;
  }

  function warm() {
    if (!python) return missing();
    if (!child) start();
    return ready;
  }

  return { open, close, warm, stats: () => ({ engine: python ? "pocketsphinx" : "unavailable", running: child !== null, sessions }) };
}
