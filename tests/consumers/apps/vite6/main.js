// The README's way: import, top-level `await init()`, use; and the same in a module worker that
// Vite bundles from `new Worker(new URL(…), { type: "module" })`.
import init, * as turnguard from "turnguard";
import { llmFromPage, oneTurn, report, turnInWorker } from "./turn.js";

await init().catch((error) => {
  report(Promise.reject(error));
  throw error;
});
const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
report(
  Promise.all([oneTurn(turnguard, llmFromPage()), turnInWorker(worker, llmFromPage())]).then(([page, inWorker]) => ({
    page,
    worker: inWorker,
  })),
);
