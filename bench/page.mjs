// Runs in the bench page: the same workloads through turnguard and through the plain JS ladder,
// interleaved in rounds so that both see the same page, JIT state and machine load.

import init, { TurnController, openAiCompatibleRoute } from "/pkg/turnguard.js";
import { LeanTurnController } from "/bench/lean_ladder.mjs";
import { PlainTurnController } from "/bench/plain_ladder.mjs";

await init();

/** The settings of a full run; `npm test` runs the same code with tiny ones. */
export const FULL = { turns: 5000, rounds: 15, inFlight: 500 };
export const TINY = { turns: 50, rounds: 2, inFlight: 20 };

function options(sink) {
  return {
    recoveryText: "Sorry?",
    turnDeadlineMs: 10_000,
    attemptTimeoutMs: 5_000,
    onAcceptedText: (turnId, text) => { sink.spoken += text.length; },
    onRecovery: () => { sink.recovered += 1; },
  };
}

/**
 * `turns` turns whose route resolves at once, `inFlight` at a time (1: sequential); returns ms
 * per turn. `onEvent` is set only for the full plain ladder, which builds events anyway.
 */
async function perTurn(Controller, turns, inFlight) {
  const sink = { spoken: 0, recovered: 0 };
  const route = { name: "primary", generate: ({ input }) => Promise.resolve(`echo ${input}`) };
  const controller = new Controller([route, route], options(sink));
  let next = 0;
  const one = async () => {
    const record = await controller.run(`turn-${next++}`, "hello there");
    if (record.status !== "accepted") throw new Error(`a turn ended ${record.status}`);
  };
  const started = performance.now();
  for (let done = 0; done < turns; done += inFlight) {
    const batch = [];
    for (let i = 0; i < Math.min(inFlight, turns - done); i++) batch.push(one());
    await Promise.all(batch);
  }
  const elapsed = performance.now() - started;
  if (sink.spoken === 0 || sink.recovered !== 0) throw new Error("the workload did not run as intended");
  controller.free?.();
  return elapsed / turns;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * A 60-token answer streamed at 25 ms per token by the mock LLM: when does the first sentence
 * reach `onSentence`, against the arrival of the chunk that completed it, and against the end?
 */
async function streamingLatency() {
  const timeline = [];
  const route = openAiCompatibleRoute({
    name: "primary",
    url: "/llm/slow/v1/chat/completions?tokens=60&tokenMs=25",
    model: "bench",
  });
  // Timestamps each chunk as the ladder receives it.
  const timed = {
    name: route.name,
    async generate(request) {
      const stream = await route.generate(request);
      return (async function* () {
        for await (const chunk of stream) {
          timeline.push({ kind: "chunk", at: performance.now() });
          yield chunk;
        }
      })();
    },
  };
  let firstSentenceAt;
  let firstSentenceLag;
  const controller = new TurnController([timed], {
    recoveryText: "Sorry?",
    turnDeadlineMs: 20_000,
    attemptTimeoutMs: 10_000,
    onSentence: () => {
      const at = performance.now();
      if (firstSentenceAt === undefined) {
        firstSentenceAt = at;
        const lastChunk = timeline.filter((entry) => entry.kind === "chunk").at(-1);
        firstSentenceLag = at - lastChunk.at;
      }
    },
    onAcceptedText: () => {},
    onRecovery: () => {},
  });
  const started = performance.now();
  const record = await controller.run("stream-1", "time the first sentence");
  const finished = performance.now();
  controller.free();
  if (record.status !== "accepted") throw new Error(`the streamed turn ended ${record.status}`);
  return {
    chunks: timeline.length,
    firstSentenceMs: firstSentenceAt - started,
    fullAnswerMs: finished - started,
    firstSentenceLagMs: firstSentenceLag,
  };
}

const stats = (values) => ({ median: median(values), min: Math.min(...values), max: Math.max(...values) });

/** Ten virtual minutes of a server that accepts every socket and closes it at once. */
function storm(ReconnectPolicy, closeCode) {
  const STORM_MS = 10 * 60 * 1000;
  // turnguard's policy, with its defaults and a fixed seed.
  const policy = new ReconnectPolicy({ randomSeed: 7 });
  const counts = { provisions: 1, connections: 0 };
  for (let now = 0; now <= STORM_MS;) {
    counts.connections += 1;
    policy.onOpen(now);
    const decision = policy.onClose(closeCode, now);
    if (decision.action === "stop") break;
    if (decision.action === "reprovision") counts.provisions += 1;
    now += decision.delayMs;
  }
  // The naive client resets its backoff on every open and never re-provisions: its first delay
  // (500 ms) forever, to the same dead URL.
  const naive = { provisions: 1, connections: Math.floor(STORM_MS / 500) + 1 };
  return { turnguard: counts, naive };
}

/**
 * `baseline`: the URL of another build's `turnguard.js` (e.g. the last release), measured as the
 * ladder `before` beside this one.
 */
export async function runBench(settings = FULL, baseline = undefined) {
  const { TurnController: Controller, ReconnectPolicy } = await import("/pkg/turnguard.js");
  const ladders = { turnguard: Controller, lean: LeanTurnController, full: PlainTurnController };
  if (baseline) {
    const before = await import(baseline);
    await before.default();
    ladders.before = before.TurnController;
  }
  // Warm each up so the JIT has seen each path.
  for (const Ladder of Object.values(ladders)) {
    await perTurn(Ladder, settings.turns, 1);
    await perTurn(Ladder, settings.turns, settings.inFlight);
  }
  const samples = { sequential: {}, inFlight: {} };
  for (const name of Object.keys(ladders)) {
    samples.sequential[name] = [];
    samples.inFlight[name] = [];
  }
  // Interleaved rounds: each ladder sees the same page, JIT state and machine load.
  // Every other round in the reverse order: whichever runs first in a round runs on a page that
  // has just been quiet, which favours it (an A/A run measured it 1.03–1.04×).
  for (let round = 0; round < settings.rounds; round++) {
    const order = Object.entries(ladders);
    if (round % 2) order.reverse();
    for (const [name, Ladder] of order) {
      samples.sequential[name].push(await perTurn(Ladder, settings.turns, 1));
      samples.inFlight[name].push(await perTurn(Ladder, settings.turns, settings.inFlight));
    }
  }
  const perTurnMs = {};
  for (const mode of ["sequential", "inFlight"]) {
    perTurnMs[mode] = {};
    for (const name of Object.keys(ladders)) perTurnMs[mode][name] = stats(samples[mode][name]);
  }
  // Ratios within each round, then their median: both sides of a ratio ran back to back.
  const ratios = {};
  for (const mode of ["sequential", "inFlight"]) {
    ratios[mode] = {};
    for (const base of Object.keys(ladders).filter((name) => name !== "turnguard")) {
      ratios[mode][base] = stats(samples[mode].turnguard.map((ms, i) => ms / samples[mode][base][i]));
    }
  }
  const streaming = await streamingLatency();
  const storms = { close4403: storm(ReconnectPolicy, 4403), close1006: storm(ReconnectPolicy, 1006) };
  return { settings, perTurnMs, ratios, streaming, storms };
}
