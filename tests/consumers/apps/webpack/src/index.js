// The README's way: import, top-level `await init()`, use.
import init, * as turnguard from "turnguard";
import { llmFromPage, oneTurn, report } from "../turn.js";

await init().catch((error) => {
  report(Promise.reject(error));
  throw error;
});
report(oneTurn(turnguard, llmFromPage()));
