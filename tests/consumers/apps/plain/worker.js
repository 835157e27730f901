// A module worker: turnguard runs off the main thread the same way. The listener is set before
// anything is awaited, so the page's first message cannot arrive before it.
import init, * as turnguard from "./node_modules/turnguard/turnguard.js";
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
