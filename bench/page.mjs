// Runs in the bench page: the same workloads through turnguard and through the plain JS ladder,
// interleaved in rounds so that both see the same page, JIT state and machine load.

import init, { TurnController, openAiCompatibleRoute } from "/pkg/turnguard.js";
import { PlainTurnController } from "/bench/plain_ladder.mjs";

const TURNS = 5000;
const ROUNDS = 15;

function options(sink) {
  return {
    recoveryText: "Sorry?",
    turnDeadlineMs: 10_000,
    attemptTimeoutMs: 5_000,
    onAcceptedText: (turnId, text) => { sink.spoken += text.length; },
    onRecovery: () => { sink.recovered += 1; },
    onEvent: () => { sink.events += 1; },
  };
}

/** 5000 sequential turns whose route resolves at once; returns ms per turn. */
async function sequentialTurns(Controller) {
  const sink = { spoken: 0, recovered: 0, events: 0 };
  const route = { name: "primary", generate: ({ input }) => Promise.resolve(`echo ${input}`) };
  const controller = new Controller([route, route], options(sink));
  const started = performance.now();
  for (let i = 0; i < TURNS; i++) {
    const record = await controller.run(`turn-${i}`, "hello there");
    if (record.status !== "accepted") throw new Error(`turn ${i} ended ${record.status}`);
  }
  const elapsed = performance.now() - started;
  if (sink.spoken === 0 || sink.recovered !== 0) throw new Error("the workload did not run as intended");
  controller.free?.();
  return elapsed / TURNS;
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

export async function runBench() {
  await init();
  // Warm both up so the JIT has seen each path.
  await sequentialTurns(TurnController);
  await sequentialTurns(PlainTurnController);
  const turnguard = [];
  const plain = [];
  for (let round = 0; round < ROUNDS; round++) {
    turnguard.push(await sequentialTurns(TurnController));
    plain.push(await sequentialTurns(PlainTurnController));
  }
  const streaming = await streamingLatency();
  return {
    streaming,
    turns: TURNS,
    rounds: ROUNDS,
    turnguardMsPerTurn: median(turnguard),
    plainMsPerTurn: median(plain),
    ratio: median(turnguard) / median(plain),
    samples: { turnguard, plain },
  };
}
