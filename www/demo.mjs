// Script of the turnguard demo page: the dev stack panel (are the mock services up?), and at the
// marked place below, the library's panels (www/ladder.mjs, www/reconnect.mjs).

import { cell } from "./dom.mjs";
import { setupLadder } from "./ladder.mjs";
import { setupReconnect } from "./reconnect.mjs";
import { setupVoice } from "./voice.mjs";

const statusLine = document.querySelector("#devstack-status");
const servicesBody = document.querySelector("#devstack-services");
const refreshButton = document.querySelector("#devstack-refresh");

async function fetchStats() {
  const response = await fetch("/__stats", { cache: "no-store" });
  if (!response.ok) throw new Error(`GET /__stats answered ${response.status}`);
  return response.json();
}

function sum(counters, field) {
  return Object.values(counters).reduce((total, counter) => total + counter[field], 0);
}

/** One table row per mock: its endpoint and what it has seen since the last reset. */
function serviceRows(stats) {
  const { llm, tts } = stats;
  return [
    {
      name: "LLM (OpenAI-compatible)",
      endpoint: `POST ${stats.services.llm.path}`,
      seen: `${sum(llm.scenarios, "requests")} requests, ${sum(llm.scenarios, "aborted")} aborted`,
    },
    {
      name: "TTS",
      endpoint: `POST ${stats.services.tts.path}`,
      seen: `${tts.requests} requests, ${tts.aborted} aborted (?voice= speaks with ${stats.ttsEngine})`,
    },
    // One row per speech-to-text protocol in the dev stack's list, each with the same counters.
    ...stats.protocols.map((name) => {
      const keys = stats[name].keys;
      return {
        name: `Live STT: ${name}`,
        endpoint: stats.services[name].shown,
        seen: `${sum(keys, "provisions")} credentials asked, ${sum(keys, "connections")} sockets (${sum(keys, "open")} open), ${sum(keys, "finals")} finals`,
      };
    }),
    {
      name: "Speech recognition (real)",
      endpoint: "behind every STT mock with recognizer=speech",
      seen: `${stats.recognizer.engine}: ${stats.recognizer.sessions} sessions`,
    },
  ];
}

function renderServices(rows) {
  servicesBody.replaceChildren(
    ...rows.map((row) => {
      const tr = document.createElement("tr");
      tr.append(cell(row.name), cell(row.endpoint, true), cell(row.seen));
      return tr;
    }),
  );
}

function setStatus(text, state) {
  statusLine.textContent = text;
  statusLine.className = `status ${state}`;
}

async function refreshDevStack() {
  try {
    const stats = await fetchStats();
    renderServices(serviceRows(stats));
    setStatus(`Mock services are up (counters since ${new Date(stats.since).toLocaleTimeString()}).`, "up");
  } catch (error) {
    servicesBody.replaceChildren();
    setStatus(`Dev stack unreachable: ${error.message}. Start it with \`node www/serve.mjs\`.`, "down");
  }
}

refreshButton.addEventListener("click", refreshDevStack);
refreshDevStack();

// The library is wired in here.
// It is a dynamic import so that a missing or broken pkg/ leaves the dev stack panel working and the
// page says what is wrong, instead of a blank page and an error in the console only.

const libraryStatus = document.querySelector("#library-status");

function setLibraryStatus(state, text) {
  libraryStatus.dataset.state = state;
  libraryStatus.className = `status ${state === "ready" ? "up" : "down"}`;
  libraryStatus.textContent = text;
}

async function loadLibrary() {
  let library;
  try {
    library = await import("./library.mjs");
  } catch (error) {
    setLibraryStatus(
      "failed",
      `The turnguard package (pkg/turnguard.js and its wasm) did not load (${error.message}). Build it with \`npm run build\` and reload; ` +
        "the panels below stay disabled until then.",
    );
    return;
  }
  // After each turn the dev stack counters show how many LLM calls it really made.
  setupLadder(library, { onTurnSettled: refreshDevStack });
  setupReconnect(library.ReconnectPolicy);
  await setupVoice(library);
  setLibraryStatus("ready", "turnguard is loaded: the panels below run the real library in this page.");
}

loadLibrary();
