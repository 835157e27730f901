import { llmFromPage, report, turnInWorker } from "./turn.js";

const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
report(turnInWorker(worker, llmFromPage()));
