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
  const { llm, tts, stt } = stats;
  return [
    {
      name: "LLM (OpenAI-compatible)",
      endpoint: `POST ${stats.services.llm.path}`,
      seen: `${sum(llm.scenarios, "requests")} requests, ${sum(llm.scenarios, "aborted")} aborted`,
    },
    {
      name: "Live STT (Gladia-compatible)",
      endpoint: `POST ${stats.services.stt.path}`,
      seen: `${sum(stt.modes, "provisions")} provisions, ${sum(stt.modes, "open")} sockets open`,
    },
    {
      name: "TTS",
      endpoint: `POST ${stats.services.tts.path}`,
      seen: `${tts.requests} requests, ${tts.aborted} aborted (?voice= speaks with ${stats.ttsEngine})`,
    },
    {
      name: "Speech recognition (real, Gladia-compatible)",
      endpoint: `POST ${stats.services.speech.path}`,
      seen: `${stats.speech.engine}: ${stats.speech.sessions} sessions, ${stats.speech.open} sockets open, ${stats.speech.finals} finals`,
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
