// Script of the turnguard demo page. For now it shows that the dev stack's
// mock services are up; the library gets wired in at the marked place below.

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
      seen: `${tts.requests} requests, ${tts.aborted} aborted`,
    },
  ];
}

function cell(text, asCode = false) {
  const td = document.createElement("td");
  if (asCode) {
    const code = document.createElement("code");
    code.textContent = text;
    td.append(code);
  } else {
    td.textContent = text;
  }
  return td;
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
