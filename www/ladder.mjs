// The "Turn ladder" panel: a TurnController with a primary and a fallback route, both calling the
// dev stack's mock LLM with a fault scenario picked per turn. It shows what would be spoken, the
// turn's record and every event, so the ladder's rules (DESIGN.md §1) can be watched at work.

import { cell, row, span } from "./dom.mjs";

// Fixed configuration, never generated (T8): the same words whatever went wrong.
const RECOVERY_TEXT = "Sorry, I lost my train of thought. Could you say that again?";
const LOG_LIMIT = 200;

const REASONS = {
  exhausted: "every attempt failed",
  deadline: "the turn deadline passed before an answer arrived",
  non_retryable: "the failure is one a fallback cannot fix, so none was tried",
  persona: "the fallback has another persona",
  session_budget: "the session's attempt budget is spent",
  retry_budget: "recent failures spent the retry budget, so no fallback was tried (New controller resets it)",
};

const $ = (selector) => document.querySelector(selector);

const ui = {
  form: $("#turn-form"),
  controls: $("#turn-controls"),
  utterance: $("#utterance"),
  primary: $("#primary-scenario"),
  fallback: $("#fallback-scenario"),
  attemptTimeout: $("#attempt-timeout"),
  turnDeadline: $("#turn-deadline"),
  runButton: $("#run-turn"),
  interruptButton: $("#interrupt"),
  newControllerButton: $("#new-controller"),
  controllerNote: $("#controller-note"),
  error: $("#turn-error"),
  result: $("#turn-result"),
  spoken: $("#spoken"),
  spokenLabel: $("#spoken-label"),
  spokenText: $("#spoken-text"),
  record: $("#turn-record"),
  recordTurn: $("#record-turn"),
  recordStatus: $("#record-status"),
  recordReason: $("#record-reason"),
  recordTook: $("#record-took"),
  attempts: $("#record-attempts"),
  log: $("#event-log"),
  clearLog: $("#clear-log"),
};

const state = {
  TurnController: null,
  onTurnSettled: null,
  controller: null,
  controllerCount: 0,
  /** The timing the current controller was built with; another one needs a new controller. */
  controllerTiming: "",
  turnCount: 0,
  /** The turn on screen, and whether it is still running. */
  shownTurn: null,
  running: false,
  /** turnId → the fault scenarios picked when it started: later form changes don't alter it. */
  scenarios: new Map(),
  /** turnId → epoch ms of its turn_started event, for relative times in the log. */
  turnStarts: new Map(),
};

/** Enables the panel once the library has loaded; `onTurnSettled()` is called after every turn. */
export function setupLadder(TurnController, { onTurnSettled = () => {} } = {}) {
  state.TurnController = TurnController;
  state.onTurnSettled = onTurnSettled;
  ui.form.addEventListener("submit", onSubmit);
  ui.controls.querySelectorAll("[data-utterance]").forEach((button) => {
    button.addEventListener("click", () => {
      ui.utterance.value = button.dataset.utterance;
      ui.form.requestSubmit();
    });
  });
  ui.interruptButton.addEventListener("click", onInterrupt);
  ui.newControllerButton.addEventListener("click", tryReplaceController);
  ui.clearLog.addEventListener("click", () => ui.log.replaceChildren());
  ui.controls.disabled = false;
  tryReplaceController();
}

// ---------------------------------------------------------------------------
// The library

/**
 * A route to the mock LLM. As any route should, it passes the attempt's signal to fetch (so a
 * timeout or an interrupt really cancels the request), sends the requestId as an idempotency key,
 * and rejects with `{ status }` so the ladder can tell a retryable 500 from a final 401.
 */
function mockLlmRoute(name) {
  return {
    name,
    async generate({ requestId, turnId, input, signal }) {
      const scenario = state.scenarios.get(turnId)?.[name] ?? "ok";
      const response = await fetch(`/llm/${scenario}/v1/chat/completions`, {
        method: "POST",
        signal,
        headers: { "content-type": "application/json", "idempotency-key": requestId },
        body: JSON.stringify({ model: `mock-${name}`, messages: [{ role: "user", content: input }] }),
      });
      if (!response.ok) {
        throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
      }
      const body = await response.json();
      // Anything but a non-blank string counts as "no text" for the ladder, which then falls back.
      return body.choices?.[0]?.message?.content;
    },
  };
}

function timing() {
  return { attemptTimeoutMs: ui.attemptTimeout.valueAsNumber, turnDeadlineMs: ui.turnDeadline.valueAsNumber };
}

/**
 * Builds a controller with the form's timing and frees the old one. Only called while no turn runs
 * (the buttons that lead here are disabled meanwhile), so freeing never cuts a turn short.
 */
function replaceController() {
  const { attemptTimeoutMs, turnDeadlineMs } = timing();
  // Build first: if the options are invalid, the constructor throws and the old controller stays.
  const controller = new state.TurnController([mockLlmRoute("primary"), mockLlmRoute("fallback")], {
    attemptTimeoutMs,
    turnDeadlineMs,
    recoveryText: RECOVERY_TEXT,
    onAcceptedText,
    onRecovery,
    onEvent: appendEvent,
  });
  state.controller?.free();
  state.controller = controller;
  state.controllerTiming = JSON.stringify(timing());
  state.controllerCount += 1;
  ui.controllerNote.textContent =
    `Controller #${state.controllerCount}: attempt ${attemptTimeoutMs} ms, deadline ${turnDeadlineMs} ms`;
}

/** For the New controller button: invalid timing shows the library's RangeError in the form. */
function tryReplaceController() {
  hideError();
  try {
    replaceController();
  } catch (error) {
    showError(error);
  }
}

/** Timing is controller configuration, so changed timing means a new controller (and fresh budgets). */
function controllerForForm() {
  if (JSON.stringify(timing()) !== state.controllerTiming || !state.controller) replaceController();
  return state.controller;
}

function onAcceptedText(turnId, text) {
  if (turnId !== state.shownTurn) return;
  // Calling back into the controller from its own callback is allowed: it holds no borrow here.
  const record = state.controller.getTurn(turnId);
  const route = record?.attempts.find((attempt) => attempt.requestId === record.acceptedRequestId)?.route;
  showSpoken("answer", `Answer${route ? ` from the ${route} route` : ""}`, text);
}

function onRecovery(turnId, text) {
  if (turnId !== state.shownTurn) return;
  showSpoken("recovery", "Recovery text: fixed configuration, not generated", text);
}

// ---------------------------------------------------------------------------
// Running and interrupting a turn

async function onSubmit(event) {
  event.preventDefault();
  if (state.running) return;
  hideError();
  let controller;
  try {
    controller = controllerForForm();
  } catch (error) {
    showError(error);
    return;
  }
  const turnId = `turn-${++state.turnCount}`;
  state.scenarios.set(turnId, { primary: ui.primary.value, fallback: ui.fallback.value });
  await runTurn(controller, turnId, ui.utterance.value);
}

async function runTurn(controller, turnId, input) {
  showTurnStarted(turnId);
  setRunning(true);
  try {
    const record = await controller.run(turnId, input);
    if (record.status === "cancelled") showSpoken("none", "Nothing is spoken: the turn was interrupted", "");
    renderRecord(record, Date.now() - record.startedAt);
  } catch (error) {
    // run rejects only for bad arguments, e.g. an utterance of blanks or one over maxInputChars.
    showError(error);
    ui.result.hidden = true;
  } finally {
    state.scenarios.delete(turnId);
    setRunning(false);
    state.onTurnSettled();
  }
}

function onInterrupt() {
  if (state.running) state.controller.interrupt(state.shownTurn);
}

function setRunning(running) {
  state.running = running;
  ui.runButton.disabled = running;
  ui.interruptButton.disabled = !running;
  ui.newControllerButton.disabled = running;
  ui.controls.querySelectorAll("[data-utterance]").forEach((button) => { button.disabled = running; });
}

// ---------------------------------------------------------------------------
// Rendering

function showTurnStarted(turnId) {
  state.shownTurn = turnId;
  ui.result.hidden = false;
  showSpoken("pending", "Waiting for an answer…", "");
  ui.record.dataset.turn = turnId;
  ui.record.dataset.status = "running";
  delete ui.record.dataset.settled;
  ui.recordTurn.textContent = turnId;
  setStatusBadge("running");
  ui.recordReason.textContent = "—";
  ui.recordTook.textContent = "—";
  ui.attempts.replaceChildren();
}

function showSpoken(kind, label, text) {
  ui.spoken.dataset.kind = kind;
  ui.spoken.dataset.turn = state.shownTurn;
  ui.spokenLabel.textContent = label;
  ui.spokenText.textContent = text;
  ui.spokenText.hidden = text === "";
}

function setStatusBadge(status) {
  ui.recordStatus.textContent = status;
  ui.recordStatus.dataset.status = status;
}

function renderRecord(record, tookMs) {
  setStatusBadge(record.status);
  ui.record.dataset.status = record.status;
  ui.recordReason.textContent = record.recoveryReason
    ? `${record.recoveryReason}: ${REASONS[record.recoveryReason] ?? ""}`
    : "—";
  ui.recordReason.dataset.reason = record.recoveryReason ?? "";
  ui.recordTook.textContent = `${tookMs} ms`;
  renderAttempts(record);
  // Last, so that a test waiting for `data-settled` sees everything above.
  ui.record.dataset.settled = "true";
}

function renderAttempts(record) {
  ui.attempts.replaceChildren(...(record?.attempts ?? []).map(attemptRow));
}

function attemptRow(attempt) {
  const duration = attempt.finishedAt === undefined ? "running" : `${attempt.finishedAt - attempt.startedAt} ms`;
  return row(
    [cell(attempt.requestId, true), cell(attempt.route), cell(attempt.result), cell(attempt.error ?? "—"), cell(duration)],
    { route: attempt.route, result: attempt.result, error: attempt.error },
  );
}

/** One log line per event: the time since its turn started, the turn, the type and the details. */
function appendEvent(event) {
  if (event.type === "turn_started") state.turnStarts.set(event.turnId, event.at);
  const start = state.turnStarts.get(event.turnId) ?? event.at;
  const item = document.createElement("li");
  item.dataset.turn = event.turnId;
  item.dataset.type = event.type;
  item.append(
    span("log-time", `+${event.at - start} ms`),
    span("log-turn", event.turnId),
    span("log-type", event.type),
    span("log-detail", eventDetail(event)),
  );
  ui.log.append(item);
  while (ui.log.childElementCount > LOG_LIMIT) ui.log.firstElementChild.remove();
  ui.log.scrollTop = ui.log.scrollHeight;
  if (["accepted", "recovered", "cancelled"].includes(event.type)) state.turnStarts.delete(event.turnId);
  // Keep the attempts table live while the turn runs (run() only resolves when it settles).
  if (state.running && event.turnId === state.shownTurn && event.type.startsWith("attempt_")) {
    renderAttempts(state.controller.getTurn(event.turnId));
  }
}

function eventDetail(event) {
  switch (event.type) {
    case "attempt_started":
      return `${event.route}, times out in ${event.timeoutAt - event.at} ms`;
    case "attempt_finished":
      return `${event.route}: ${event.result}${event.error ? ` (${event.error})` : ""} in ${event.durationMs} ms`;
    case "accepted":
      return `${event.route}'s answer`;
    case "recovered":
      return `reason: ${event.reason}`;
    case "callback_error":
      return `${event.callback} threw`;
    default:
      return "";
  }
}

function showError(error) {
  ui.error.textContent = `${error.name}: ${error.message}`;
  ui.error.hidden = false;
}

function hideError() {
  ui.error.hidden = true;
  ui.error.textContent = "";
}
