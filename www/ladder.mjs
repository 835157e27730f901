// The "Turn ladder" panel: a TurnController with a primary and a fallback route, both
// `openAiCompatibleRoute`s streaming from the dev stack's mock LLM with a fault scenario picked per
// turn. It shows the sentences as they stream, what would be spoken in the end, the turn's record,
// the conversation history the fallback receives and every event, so the ladder's rules
// (DESIGN.md §1) can be watched at work.

import { cell, row, span } from "./dom.mjs";

// Fixed configuration, never generated (T8): the same words whatever went wrong.
const RECOVERY_TEXT = "Sorry, I lost my train of thought. Could you say that again?";
const LOG_LIMIT = 200;
/** The controller's default `historyLimit`: the mirror below keeps as many exchanges. */
const HISTORY_LIMIT = 1000;
/** Words the `stall_after` scenario sends before it goes silent: a sentence and a bit. */
const STALL_AFTER_WORDS = 8;

const PRIMARY_PERSONA = "ava";
/** Each persona's system prompt (the mock ignores it, a real model would not). */
const PERSONAS = {
  ava: "You are Ava, a calm and concise voice assistant. Answer in short spoken sentences.",
  max: "You are Max, an upbeat voice assistant. Answer in short spoken sentences.",
};

const REASONS = {
  exhausted: "every attempt failed (or the fallback policy allows no second one)",
  deadline: "the turn deadline passed before an answer arrived",
  non_retryable: "the failure is one a fallback cannot fix, so none was tried",
  persona: "the fallback has another persona and the policy is samePersona, so none was tried",
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
  slowTokenMs: $("#slow-token-ms"),
  attemptTimeout: $("#attempt-timeout"),
  turnDeadline: $("#turn-deadline"),
  firstChunkTimeout: $("#first-chunk-timeout"),
  chunkIdleTimeout: $("#chunk-idle-timeout"),
  fallbackPolicy: $("#fallback-policy"),
  fallbackPersona: $("#fallback-persona"),
  runButton: $("#run-turn"),
  interruptButton: $("#interrupt"),
  newControllerButton: $("#new-controller"),
  controllerNote: $("#controller-note"),
  error: $("#turn-error"),
  result: $("#turn-result"),
  spoken: $("#spoken"),
  spokenLabel: $("#spoken-label"),
  sentences: $("#spoken-sentences"),
  spokenFull: $("#spoken-full"),
  spokenFullLabel: $("#spoken-full-label"),
  spokenText: $("#spoken-text"),
  record: $("#turn-record"),
  recordTurn: $("#record-turn"),
  recordStatus: $("#record-status"),
  recordReason: $("#record-reason"),
  recordTook: $("#record-took"),
  attempts: $("#record-attempts"),
  history: $("#history"),
  historyCount: $("#history-count"),
  log: $("#event-log"),
  clearLog: $("#clear-log"),
};

const state = {
  TurnController: null,
  openAiCompatibleRoute: null,
  onTurnSettled: null,
  controller: null,
  controllerCount: 0,
  /** The options the current controller was built with; other ones need a new controller. */
  config: null,
  configKey: "",
  turnCount: 0,
  /** The turn on screen, whether it is still running, and the sentences it has spoken so far. */
  shownTurn: null,
  running: false,
  sentences: [],
  /** turnId → the routes built for its scenarios when it started: later form changes don't alter it. */
  turnRoutes: new Map(),
  /** turnId → epoch ms of its turn_started event, for relative times in the log. */
  turnStarts: new Map(),
  /**
   * The controller's conversation history, mirrored: it keeps the exchanges it sends to
   * `shareHistory` routes but does not expose them, so the page records the same ones.
   */
  history: [],
};

/**
 * Enables the panel once the library has loaded (`library` is the module: `TurnController` and
 * `openAiCompatibleRoute`); `onTurnSettled()` is called after every turn.
 */
export function setupLadder(library, { onTurnSettled = () => {} } = {}) {
  state.TurnController = library.TurnController;
  state.openAiCompatibleRoute = library.openAiCompatibleRoute;
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

/** The mock LLM's URL for a scenario; `slow` gets the form's pace, `stall_after` its word count. */
function scenarioUrl(scenario) {
  const params = new URLSearchParams();
  if (scenario === "slow") params.set("tokenMs", String(ui.slowTokenMs.valueAsNumber));
  if (scenario === "stall_after") params.set("after", String(STALL_AFTER_WORDS));
  const query = params.size > 0 ? `?${params}` : "";
  return `/llm/${encodeURIComponent(scenario)}/v1/chat/completions${query}`;
}

/**
 * This turn's two routes, for the scenarios picked in the form. `openAiCompatibleRoute` POSTs a
 * streaming chat completion with the attempt's signal (so a timeout or an interrupt really cancels
 * the request) and its requestId as idempotency key, and rejects with `{ status }` on HTTP errors.
 */
function routesForTurn() {
  const { openAiCompatibleRoute } = state;
  const fallbackPersona = state.config.fallbackPersona;
  return {
    primary: openAiCompatibleRoute({
      name: "primary",
      url: scenarioUrl(ui.primary.value),
      model: "mock-primary",
      systemPrompt: PERSONAS[PRIMARY_PERSONA],
      persona: PRIMARY_PERSONA,
    }),
    fallback: openAiCompatibleRoute({
      name: "fallback",
      url: scenarioUrl(ui.fallback.value),
      model: "mock-fallback",
      systemPrompt: PERSONAS[fallbackPersona],
      persona: fallbackPersona,
      shareHistory: true,
    }),
  };
}

/**
 * A route as the controller sees it. The controller reads `name`, `persona` and `shareHistory`
 * once, when it is built; the scenario is picked per turn, so `generate` hands each attempt
 * (history included) to the `openAiCompatibleRoute` built for its turn. That keeps one controller,
 * and so one conversation history, across scenario changes.
 */
function ladderRoute(name, { persona, shareHistory = false }) {
  return {
    name,
    persona,
    shareHistory,
    generate(request) {
      const route = state.turnRoutes.get(request.turnId)?.[name];
      if (!route) throw Object.assign(new Error(`no ${name} route for ${request.turnId}`), { retryable: false });
      return route.generate(request);
    },
  };
}

function controllerConfig() {
  return {
    attemptTimeoutMs: ui.attemptTimeout.valueAsNumber,
    turnDeadlineMs: ui.turnDeadline.valueAsNumber,
    firstChunkTimeoutMs: ui.firstChunkTimeout.valueAsNumber,
    chunkIdleTimeoutMs: ui.chunkIdleTimeout.valueAsNumber,
    fallbackPolicy: ui.fallbackPolicy.value,
    fallbackPersona: ui.fallbackPersona.value,
  };
}

/**
 * Builds a controller with the form's options and frees the old one (and with it its history and
 * budgets). Only called while no turn runs (the buttons that lead here are disabled meanwhile), so
 * freeing never cuts a turn short.
 */
function replaceController() {
  const config = controllerConfig();
  const { fallbackPersona, ...options } = config;
  // Build first: if the options are invalid, the constructor throws and the old controller stays.
  const controller = new state.TurnController(
    [
      ladderRoute("primary", { persona: PRIMARY_PERSONA }),
      ladderRoute("fallback", { persona: fallbackPersona, shareHistory: true }),
    ],
    {
      ...options,
      recoveryText: RECOVERY_TEXT,
      onAcceptedText,
      onRecovery,
      onSentence,
      onEvent: appendEvent,
    },
  );
  state.controller?.free();
  state.controller = controller;
  state.config = config;
  state.configKey = JSON.stringify(config);
  state.controllerCount += 1;
  state.history = [];
  renderHistory();
  ui.controllerNote.textContent =
    `Controller #${state.controllerCount}: attempt ${options.attemptTimeoutMs} ms, deadline ${options.turnDeadlineMs} ms, ` +
    `first chunk ${options.firstChunkTimeoutMs} ms, idle ${options.chunkIdleTimeoutMs} ms, ` +
    `policy ${options.fallbackPolicy}, fallback persona ${fallbackPersona}`;
}

/** For the New controller button: invalid options show the library's RangeError in the form. */
function tryReplaceController() {
  hideError();
  try {
    replaceController();
  } catch (error) {
    showError(error);
  }
}

/** Options and personas are controller configuration: a change means a new controller. */
function controllerForForm() {
  if (JSON.stringify(controllerConfig()) !== state.configKey || !state.controller) replaceController();
  return state.controller;
}

function personaOf(route) {
  return route === "primary" ? PRIMARY_PERSONA : state.config?.fallbackPersona;
}

function routeLabel(route) {
  const persona = personaOf(route);
  return `the ${route} route${persona ? ` (persona ${persona})` : ""}`;
}

function onSentence(turnId, sentence) {
  if (turnId !== state.shownTurn) return;
  state.sentences.push(sentence);
  const item = document.createElement("li");
  item.textContent = sentence;
  ui.sentences.append(item);
  ui.sentences.hidden = false;
}

function onAcceptedText(turnId, text) {
  if (turnId !== state.shownTurn) return;
  // Calling back into the controller from its own callback is allowed: it holds no borrow here.
  const record = state.controller.getTurn(turnId);
  const route = record?.attempts.find((attempt) => attempt.requestId === record.acceptedRequestId)?.route;
  setSpoken("answer", route ? `Answer from ${routeLabel(route)}` : "Answer");
  setFullText("The whole answer, as onAcceptedText got it once the stream ended:", text);
}

function onRecovery(turnId, text) {
  if (turnId !== state.shownTurn) return;
  setSpoken("recovery", "Recovery text: fixed configuration, not generated");
  setFullText("", text);
}

// ---------------------------------------------------------------------------
// Running and interrupting a turn

async function onSubmit(event) {
  event.preventDefault();
  if (state.running) return;
  hideError();
  let controller;
  let routes;
  try {
    controller = controllerForForm();
    routes = routesForTurn();
  } catch (error) {
    showError(error);
    return;
  }
  const turnId = `turn-${++state.turnCount}`;
  state.turnRoutes.set(turnId, routes);
  await runTurn(controller, turnId, ui.utterance.value);
}

async function runTurn(controller, turnId, input) {
  showTurnStarted(turnId);
  setRunning(true);
  try {
    const record = await controller.run(turnId, input);
    if (record.status === "cancelled") showInterrupted();
    if (record.status === "accepted") showCutShort(record);
    renderRecord(record, Date.now() - record.startedAt);
    rememberExchange(controller, record);
  } catch (error) {
    // run rejects only for bad arguments, e.g. an utterance of blanks or one over maxInputChars.
    showError(error);
    ui.result.hidden = true;
  } finally {
    state.turnRoutes.delete(turnId);
    setRunning(false);
    state.onTurnSettled();
  }
}

/**
 * Mirrors what the controller put in its history for this turn: an accepted answer as delivered;
 * after an interrupt, what was delivered until `setHeardText` trims it to the sentences that went
 * out (in a voice agent: what the user heard before talking over it).
 */
function rememberExchange(controller, record) {
  if (record.status === "accepted") {
    pushExchange({ turnId: record.turnId, user: record.input, assistant: record.acceptedText ?? "", kind: "accepted" });
  } else if (record.status === "cancelled") {
    const heard = state.sentences.join(" ");
    // False when the turn was interrupted before its answer committed: then it has no exchange.
    if (controller.setHeardText(record.turnId, heard)) {
      pushExchange({ turnId: record.turnId, user: record.input, assistant: heard.trim(), kind: "interrupted" });
    }
  }
}

function pushExchange(exchange) {
  state.history.push(exchange);
  if (state.history.length > HISTORY_LIMIT) state.history.splice(0, state.history.length - HISTORY_LIMIT);
  renderHistory();
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
  state.sentences = [];
  ui.result.hidden = false;
  ui.sentences.replaceChildren();
  ui.sentences.hidden = true;
  delete ui.sentences.dataset.cut;
  setSpoken("pending", "Waiting for the first words…");
  setFullText("", "");
  ui.record.dataset.turn = turnId;
  ui.record.dataset.status = "running";
  delete ui.record.dataset.settled;
  ui.recordTurn.textContent = turnId;
  setStatusBadge("running");
  ui.recordReason.textContent = "—";
  ui.recordReason.dataset.reason = "";
  ui.recordTook.textContent = "—";
  ui.attempts.replaceChildren();
}

function showStreaming(route) {
  setSpoken("streaming", `Streaming from ${routeLabel(route)}, sentence by sentence…`);
}

function showInterrupted() {
  const count = state.sentences.length;
  if (count > 0) {
    ui.sentences.dataset.cut = "true";
    setSpoken("none", `Interrupted after ${count} sentence${count === 1 ? "" : "s"}: nothing more is spoken`);
  } else {
    setSpoken("none", "Nothing is spoken: the turn was interrupted");
  }
  setFullText("", "");
}

/** An answer whose stream stalled or broke after the commit is accepted with what arrived (T12). */
function showCutShort(record) {
  const accepted = record.attempts.find((attempt) => attempt.requestId === record.acceptedRequestId);
  if (!accepted?.error) return;
  const how = accepted.error === "stalled" ? "went silent" : `broke (${accepted.error})`;
  setSpoken("answer", `Answer from ${routeLabel(accepted.route)}, cut short: its stream ${how}, so the turn ended with what had arrived`);
}

function setSpoken(kind, label) {
  ui.spoken.dataset.kind = kind;
  ui.spoken.dataset.turn = state.shownTurn;
  ui.spokenLabel.textContent = label;
}

function setFullText(caption, text) {
  ui.spokenFullLabel.textContent = caption;
  ui.spokenFullLabel.hidden = caption === "";
  ui.spokenText.textContent = text;
  ui.spokenFull.hidden = text === "";
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

/** The history as chat messages, the way `request.history` carries it: no empty assistant message. */
function renderHistory() {
  const items = state.history.map((exchange) => {
    const item = document.createElement("li");
    item.dataset.turn = exchange.turnId;
    item.dataset.kind = exchange.kind;
    item.append(message("user", exchange.user));
    if (exchange.assistant) item.append(message("assistant", exchange.assistant));
    if (exchange.kind === "interrupted") {
      const note = exchange.assistant ? "interrupted: only what was spoken is kept" : "interrupted before a sentence went out: no answer is kept";
      item.append(span("history-note", note));
    }
    return item;
  });
  ui.history.replaceChildren(...items);
  const messages = state.history.reduce((total, exchange) => total + (exchange.assistant ? 2 : 1), 0);
  const exchanges = state.history.length;
  ui.historyCount.textContent = exchanges === 0 ? "" : `${exchanges} exchange${exchanges === 1 ? "" : "s"}, ${messages} messages`;
}

function message(role, content) {
  const line = document.createElement("div");
  line.className = "message";
  line.dataset.role = role;
  line.append(span("message-role", role), span("message-content", content));
  return line;
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
  if (event.turnId !== state.shownTurn || !state.running) return;
  if (event.type === "committed") showStreaming(event.route);
  // Keep the attempts table live while the turn runs (run() only resolves when it settles).
  if (event.type.startsWith("attempt_")) renderAttempts(state.controller.getTurn(event.turnId));
}

function eventDetail(event) {
  switch (event.type) {
    case "attempt_started":
      return `${event.route}, times out in ${event.timeoutAt - event.at} ms`;
    case "attempt_finished":
      return `${event.route}: ${event.result}${event.error ? ` (${event.error})` : ""} in ${event.durationMs} ms`;
    case "committed":
      return `${event.route}'s first words after ${event.latencyMs} ms: it is the answer now`;
    case "accepted":
      return `${event.route}'s answer, complete after ${event.latencyMs} ms`;
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
