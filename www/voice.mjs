// The "Talk to it" panel: the voice agent (agent.mjs) with a microphone button, a typed-utterance
// box, captions, the answer with its heard part marked, barge-in, the failure switches and the
// live timeline (timeline.mjs), redrawn from the session's onEvent / onStateChange / onError.

import { createAgent, CONTROLLER_TIMING } from "./agent.mjs";
import { timelineEntry, timelineSvg } from "./timeline.mjs";

/** The timeline shows the last 40 seconds. */
const TIMELINE_WINDOW_MS = 40_000;
const $ = (selector) => document.querySelector(selector);
const ui = {
  panel: $("#talk"),
  controls: $("#talk-controls"),
  banner: $("#audio-banner"),
  enableAudio: $("#enable-audio"),
  engines: $("#engines"),
  mic: $("#mic-button"),
  sayForm: $("#say-form"),
  sayText: $("#say-text"),
  bargeIn: $("#barge-in"),
  restartStt: $("#restart-stt"),
  protocol: $("#stt-protocol"),
  agentState: $("#agent-state"),
  sttState: $("#stt-state"),
  switchBox: $("#switches"),
  caption: $("#caption"),
  answer: $("#answer"),
  error: $("#talk-error"),
  timeline: $("#timeline"),
};

const entries = [];
let agent = null;
let started = null; // the start() promise: microphone or not
let redrawQueued = false;
let session = 0; // which VoiceSession the entries come from (Restart STT makes a new one)
const answer = { turnId: null, sentences: [], recovery: false };

const switches = () => document.querySelectorAll("[data-failure]");

function failures() {
  return Object.fromEntries([...switches()].map((input) => [input.dataset.failure, input.checked]));
}

/**
 * The protocol selector and each protocol's failure switches, from the dev stack's list (GET
 * /__protocols): the page names no protocol itself.
 */
function addProtocols(protocols) {
  for (const protocol of protocols) {
    const option = document.createElement("option");
    option.value = protocol.name;
    option.textContent = protocol.label;
    option.selected = protocol.default;
    ui.protocol.append(option);
    for (const failure of protocol.failures) {
      const input = document.createElement("input");
      input.type = "checkbox";
      input.dataset.failure = `${protocol.name}.${failure.id}`;
      input.dataset.stt = "";
      input.dataset.protocol = protocol.name;
      const label = document.createElement("label");
      label.append(input, ` STT ${failure.label}`);
      ui.switchBox.append(label);
    }
  }
}

/** Shows the switches of the chosen protocol (and the ones of none: LLM and TTS). */
function showSwitches() {
  for (const input of switches()) {
    const own = input.dataset.protocol;
    input.closest("label").hidden = own !== undefined && own !== ui.protocol.value;
    if (own !== undefined && own !== ui.protocol.value) input.checked = false;
  }
}

function redraw() {
  if (redrawQueued) return;
  redrawQueued = true;
  setTimeout(() => {
    redrawQueued = false;
    const width = Math.max(640, ui.timeline.clientWidth - 10);
    ui.timeline.innerHTML = timelineSvg(entries, { now: performance.now(), turnDeadlineMs: CONTROLLER_TIMING.turnDeadlineMs, width, windowMs: TIMELINE_WINDOW_MS });
  }, 50);
}

function showAnswer(kind, text) {
  ui.answer.dataset.kind = kind;
  ui.answer.textContent = text;
}

/** The answer with what the user heard marked and the rest struck through. */
function showHeard(heard) {
  const full = answer.sentences.join(" ");
  const mark = document.createElement("mark");
  mark.textContent = heard;
  const rest = document.createElement("span");
  rest.className = "unheard";
  rest.textContent = full.startsWith(heard) ? full.slice(heard.length) : full;
  ui.answer.dataset.kind = "cut";
  ui.answer.dataset.heard = heard;
  ui.answer.replaceChildren(mark, rest);
}

function record(entry) {
  entries.push({ t: performance.now(), session, ...entry });
  redraw();
}

function hooks() {
  return {
    onSession(n) {
      session = n;
    },
    onEvent(event) {
      // turn_latency's marks are epoch ms; the entries are on performance.now().
      record(timelineEntry(event, { timeOrigin: performance.timeOrigin }));
      if (event.type === "turn_started") {
        Object.assign(answer, { turnId: event.turnId, sentences: [], recovery: false });
        ui.answer.dataset.turn = event.turnId;
        delete ui.answer.dataset.heard;
        showAnswer("thinking", "…");
        ui.error.textContent = "";
      } else if (event.type === "accepted" && event.turnId === answer.turnId && ui.answer.dataset.kind !== "cut") {
        showAnswer("answer", answer.sentences.join(" "));
      } else if (event.type === "transcriber_state") {
        ui.sttState.dataset.state = event.state;
        ui.sttState.textContent = `STT: ${event.state}`;
      }
    },
    onStateChange(state) {
      record({ kind: "state", state });
      ui.agentState.dataset.state = state;
      ui.agentState.textContent = state;
    },
    onCaption(text, isFinal) {
      ui.caption.dataset.final = String(isFinal);
      ui.caption.textContent = text;
    },
    onSpeech(turnId, text, { recovery }) {
      if (turnId !== answer.turnId || ui.answer.dataset.kind === "cut") return;
      if (recovery) return showAnswer("recovery", text);
      answer.sentences.push(text);
      showAnswer(ui.answer.dataset.kind === "answer" ? "answer" : "streaming", answer.sentences.join(" "));
    },
    onHeard(turnId, heard) {
      if (turnId === answer.turnId) showHeard(heard);
    },
    onTurn(record) {
      ui.answer.dataset.status = record.status;
      ui.answer.dataset.reason = record.recoveryReason ?? "";
      ui.answer.dataset.settled = record.turnId;
    },
    onError(error) {
      record({ kind: "error", code: error.code, terminal: error.terminal ?? false, turnId: error.turnId });
      ui.error.dataset.code = error.code;
      ui.error.textContent = `${error.terminal ? "Stopped" : "Note"}: ${error.code}${error.message ? ` (${error.message})` : ""}`;
    },
    onNeedsGesture() {
      ui.banner.hidden = false;
    },
  };
}

async function ensureStarted(microphone) {
  started ??= agent.start({ microphone });
  try {
    await started;
  } catch (error) {
    ui.error.textContent = `Could not start: ${error.message}`;
    started = null;
    throw error;
  }
}

async function showEngines() {
  try {
    const stats = await (await fetch("/__stats", { cache: "no-store" })).json();
    const tts = stats.ttsEngine === "espeak-ng" ? "espeak-ng" : "a tone generator (espeak-ng is not installed: run npm run bootstrap)";
    const stt = stats.recognizer?.engine === "pocketsphinx" ? "pocketsphinx" : "unavailable (run npm run bootstrap)";
    const llm = stats.llmUpstream?.upstream ? `your model ${stats.llmUpstream.model ?? ""} via LLM_URL, the mock as fallback` : "the mock LLM (set LLM_URL to use a real one)";
    ui.engines.dataset.tts = stats.ttsEngine;
    ui.engines.dataset.stt = stats.recognizer?.engine ?? "";
    ui.engines.textContent = `Recognition: ${stt} · voice: ${tts} · answers: ${llm}.`;
    return stats.llmUpstream?.upstream ? stats.llmUpstream : null;
  } catch {
    ui.engines.textContent = "The dev stack does not answer.";
    return null;
  }
}

/** Sets the panel up once the library has loaded. */
export async function setupVoice(library) {
  const upstream = await showEngines();
  const protocols = await (await fetch("/__protocols", { cache: "no-store" })).json();
  addProtocols(protocols);
  agent = createAgent(library, { failures, protocols, protocol: () => ui.protocol.value, upstream, hooks: hooks() });
  window.__demoVoice = { agent, entries, failures };
  if (agent.player.suspended) ui.banner.hidden = false;
  ui.enableAudio.addEventListener("click", async () => {
    await agent.resumeAudio();
    ui.banner.hidden = true;
  });
  ui.mic.addEventListener("click", async () => {
    agent.resumeAudio();
    const active = ui.mic.dataset.active === "true";
    ui.mic.dataset.active = "true";
    ui.mic.textContent = "Listening… (click to reopen)";
    // Started already (typed input, or the microphone on): a new capture on the same connection.
    if (started) await agent.attachMicrophone().catch((error) => (ui.error.textContent = error.message));
    else await ensureStarted(true).catch(() => (ui.mic.dataset.active = String(active)));
  });
  ui.sayForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    agent.resumeAudio();
    const text = ui.sayText.value.trim();
    if (!text) return;
    ui.sayText.value = "";
    ensureStarted(false).catch(() => {});
    try {
      agent.sendText(text);
    } catch (error) {
      // A stopped or failed session takes no more turns: Restart STT makes a new one.
      ui.error.textContent = `${error.message}: press Restart STT to start a new conversation`;
    }
  });
  ui.bargeIn.addEventListener("click", () => agent.interrupt());
  showSwitches();
  ui.protocol.addEventListener("change", () => {
    showSwitches();
    // A new session speaks the chosen protocol: at once if listening, else at the next start.
    if (started) {
      started = agent.restartStt({ microphone: ui.mic.dataset.active === "true" });
      started.catch((error) => (ui.error.textContent = error.message));
    } else {
      agent.replace();
    }
  });
  ui.restartStt.addEventListener("click", () => {
    started = agent.restartStt({ microphone: ui.mic.dataset.active === "true" });
    started.catch((error) => (ui.error.textContent = error.message));
  });
  // What comes out of the speakers, for the page's tests: the loudest sample seen.
  setInterval(() => {
    const level = agent.player.level();
    if (level > Number(ui.panel.dataset.peak ?? 0)) ui.panel.dataset.peak = level.toFixed(3);
  }, 30);
  setInterval(() => {
    if (agent.state === "thinking" || agent.state === "speaking" || entries.length > 0) redraw();
  }, 250);
  ui.controls.disabled = false;
  redraw();
}
