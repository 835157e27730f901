// The "Reconnect policy" panel: feeds ReconnectPolicy the socket events of a few failure patterns
// on a virtual clock and lists its decisions. The policy is pure (DESIGN.md §2, L3): it never reads
// a clock, so a whole session of flaps plays out instantly and the same way every time.

import { cell, row } from "./dom.mjs";

/**
 * Each simulation is the lives of successive sockets: how long each stays open and how it closes.
 * The loop stops early when the policy says stop.
 */
const SIMULATIONS = {
  close4403: {
    sockets: Array.from({ length: 5 }, () => ({ openForMs: 50, code: 4403 })),
    summary:
      "A close with 4000–4999 means the session is dead (R2): provision a new one, never retry the old URL. " +
      "Two re-provisions per 5 minutes is the limit (R3), so the third dead session stops the loop with an error the UI can show.",
  },
  drop1006: {
    sockets: Array.from({ length: 7 }, () => ({ openForMs: 20, code: 1006 })),
    summary:
      "An abnormal close reconnects to the same URL after an exponential backoff, 500 ms doubling up to 30 s. " +
      "Sockets that open and drop at once never reset it (R1), so a flapping server is not hammered.",
  },
  stable: {
    sockets: [
      { openForMs: 20, code: 1006 },
      { openForMs: 20, code: 1006 },
      { openForMs: 5000, code: 1006 },
      { openForMs: 20, code: 1006 },
    ],
    summary:
      "Two quick drops grow the backoff; the socket that then stayed open 5 s resets it (R1), " +
      "so the next delay is back to 500 ms and grows again from there.",
  },
};

const ui = {
  buttons: document.querySelectorAll("[data-simulation]"),
  result: document.querySelector("#reconnect-result"),
  summary: document.querySelector("#reconnect-summary"),
  decisions: document.querySelector("#reconnect-decisions"),
};

/** Enables the panel once the library has loaded. */
export function setupReconnect(ReconnectPolicy) {
  for (const button of ui.buttons) {
    button.addEventListener("click", () => show(button.dataset.simulation, simulate(ReconnectPolicy, button.dataset.simulation)));
    button.disabled = false;
  }
}

/** Plays a simulation through a fresh policy; returns one step per socket close. */
function simulate(ReconnectPolicy, name) {
  // No jitter: each delay is exactly the backoff cap, so the numbers show the rule itself.
  const policy = new ReconnectPolicy({ jitter: "none" });
  const steps = [];
  let now = 0;
  try {
    for (const socket of SIMULATIONS[name].sockets) {
      const openedAt = now;
      policy.onOpen(openedAt);
      now += socket.openForMs;
      const decision = policy.onClose(socket.code, now);
      steps.push({ openedAt, closedAt: now, ...socket, decision });
      if (decision.action === "stop") break;
      now += decision.delayMs;
    }
  } finally {
    policy.free();
  }
  return steps;
}

function show(name, steps) {
  ui.result.hidden = false;
  ui.result.dataset.simulation = name;
  ui.summary.textContent = SIMULATIONS[name].summary;
  ui.decisions.replaceChildren(...steps.map(stepRow));
}

function stepRow(step, index) {
  const { action, delayMs, reason } = step.decision;
  return row(
    [
      cell(String(index + 1)),
      cell(seconds(step.closedAt)),
      cell(`open ${formatMs(step.openForMs)}, closed ${step.code}`),
      cell(action, true),
      cell(action === "stop" ? "—" : formatMs(delayMs)),
      cell(reason, true),
    ],
    { action, reason },
  );
}

function seconds(ms) {
  return `${(ms / 1000).toFixed(2)} s`;
}

function formatMs(ms) {
  return ms >= 1000 ? seconds(ms) : `${ms} ms`;
}
