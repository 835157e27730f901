import { llmFromPage, report } from "./turn.js";

const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
report(
  new Promise((resolve, reject) => {
    worker.onmessage = ({ data }) => (data.ok ? resolve(data.result) : reject(new Error(data.error)));
    worker.onerror = (event) => reject(new Error(`worker error: ${event.message}`));
    worker.postMessage(llmFromPage());
  }),
);
