// The README's worker: the listener is set before anything is awaited.
import init, * as turnguard from "turnguard";
import { oneTurn } from "./turn.js";

const ready = init();
self.onmessage = async ({ data: llm }) => {
  try {
    await ready;
    self.postMessage({ ok: true, result: await oneTurn(turnguard, llm) });
  } catch (error) {
    self.postMessage({ ok: false, error: String(error?.stack ?? error) });
  }
};
