// The voice rows of `npm run bench`: barge-in latency (from the provider's message that cut
// reaching the page to the output source stopped) over 20 barge-ins of a VoiceSession against
// the dev stack's mock STT, and SpeechPlayer's heard milliseconds (read from the audio clock)
// against the frames that really rendered, counted by an AudioWorklet on its output (beside what
// a wall-clock estimate would have said). Ratios and spreads only; nothing asserts a time.

import { runModule } from "../tests/e2e/harness.mjs";

/** Chromium refuses a routed page's WebSocket to loopback under Local Network Access checks. */
export const VOICE_CHROMIUM_ARGS = ["--disable-features=LocalNetworkAccessChecks"];

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const p95 = (values) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * 0.95))];

/**
 * The voice rows. `baseline`: the URL of another build's `turnguard.js` (`BENCH_BASELINE`): its
 * voice-to-voice overhead is measured too, in rounds interleaved with this build's.
 */
export async function runVoiceBench(page, stackUrl, { tiny, baseline }) {
  const bargeIns = tiny ? 3 : 20;
  const runs = tiny ? 3 : 20;
  await runModule(page, stackUrl, `
    import { bargeInLatency } from "/bench/voice_page.mjs";
    window.__bargeIn = await bargeInLatency(${JSON.stringify(stackUrl)}, ${bargeIns});
  `);
  // Each runModule loads a fresh page: read the result before the next one.
  const bargeIn = await page.evaluate(() => window.__bargeIn);
  await runModule(page, stackUrl, `
    import { heardAccuracy } from "/bench/voice_page.mjs";
    window.__heard = await heardAccuracy(${runs});
  `);
  const heard = await page.evaluate(() => window.__heard);
  const overheadOf = async (build, turns) => {
    await runModule(page, stackUrl, `
      import { voiceOverhead } from "/bench/voice_page.mjs";
      window.__overhead = await voiceOverhead(${JSON.stringify(stackUrl)}, ${turns}, ${JSON.stringify(build)});
    `, { timeoutMs: 300_000 });
    return page.evaluate(() => window.__overhead);
  };
  const turns = tiny ? 5 : 240;
  // With a baseline: four rounds of a quarter of the turns each, alternating builds, so both see
  // the same machine load; each round is a fresh page.
  const rounds = baseline ? 4 : 1;
  const samples = { route: [], synthesize: [], schedule: [], decode: [] };
  const before = { route: [], synthesize: [], schedule: [], decode: [] };
  for (let round = 0; round < rounds; round += 1) {
    for (const [build, into] of baseline ? [[undefined, samples], [baseline, before]] : [[undefined, samples]]) {
      const got = await overheadOf(build, Math.ceil(turns / rounds));
      for (const key of Object.keys(into)) into[key].push(...got[key]);
    }
  }
  // Streamed speech (issue 18): a TTS whose first byte comes after F ms, its whole sentence after S.
  const F = 250;
  const S = 1200;
  await runModule(page, stackUrl, `
    import { firstSound } from "/bench/voice_page.mjs";
    window.__firstSound = await firstSound(${JSON.stringify(stackUrl)}, ${tiny ? 2 : 20}, ${F}, ${S});
  `, { timeoutMs: 300_000 });
  const first = await page.evaluate(() => window.__firstSound);
  await runModule(page, stackUrl, `
    import { streamUnderruns } from "/bench/voice_page.mjs";
    window.__underruns = await streamUnderruns(${JSON.stringify(stackUrl)}, ${tiny ? 4 : 100});
  `, { timeoutMs: 600_000 });
  const underruns = await page.evaluate(() => window.__underruns);
  await runModule(page, stackUrl, `
    import { cutStreamHeard } from "/bench/voice_page.mjs";
    window.__cutHeard = await cutStreamHeard(${JSON.stringify(stackUrl)}, ${tiny ? 2 : 20});
  `, { timeoutMs: 600_000 });
  const cutHeard = await page.evaluate(() => window.__cutHeard);
  // Preemptive attempts (issue 24): the mock LLM's first token at 600 ms, Flux's eager guess
  // 250 ms before its final.
  await runModule(page, stackUrl, `
    import { preemptiveLatency, discardedGuesses } from "/bench/voice_page.mjs";
    window.__preemptive = await preemptiveLatency(${JSON.stringify(stackUrl)}, { turns: ${tiny ? 2 : 5}, rounds: ${tiny ? 2 : 4}, leadMs: 250, firstTokenMs: 600 });
    window.__discarded = await discardedGuesses(${JSON.stringify(stackUrl)}, ${tiny ? 2 : 10});
  `, { timeoutMs: 600_000 });
  const preemptive = await page.evaluate(() => ({ ...window.__preemptive, discardedGuesses: window.__discarded }));
  const ownOf = (s) => s.route.map((route, i) => route + s.synthesize[i] + s.schedule[i]);
  const own = ownOf(samples);
  const summary = (values) => ({ medianMs: median(values), p95Ms: p95(values) });
  return {
    overhead: {
      turns: own.length,
      own: summary(own),
      ...(baseline ? { before: { turns: before.route.length, own: summary(ownOf(before)) } } : {}),
      route: summary(samples.route),
      synthesize: summary(samples.synthesize),
      schedule: summary(samples.schedule),
      decode: summary(samples.decode),
    },
    streamed: {
      firstByteMs: F,
      wholeMs: S,
      whole: summary(first.whole),
      streamed: summary(first.streamed),
      firstByteToSound: summary(first.firstByteToSound),
      turns: first.streamed.length,
      underruns,
      cutHeard: { runs: cutHeard.errors.length, meanWords: cutHeard.errors.reduce((a, b) => a + b, 0) / Math.max(1, cutHeard.errors.length), maxWords: Math.max(...cutHeard.errors), overReports: cutHeard.overReports },
    },
    preemptive,
    bargeIn: { count: bargeIn.latencies.length, medianMs: median(bargeIn.latencies), maxMs: Math.max(...bargeIn.latencies), triggers: bargeIn.triggers, quantumMs: bargeIn.quantumMs },
    heard: {
      runs: heard.audioErrors.length,
      audioClock: { medianMs: median(heard.audioErrors), maxMs: Math.max(...heard.audioErrors) },
      wallClock: { medianMs: median(heard.wallErrors), maxMs: Math.max(...heard.wallErrors) },
      quantumMs: heard.quantumMs,
    },
  };
}

export function voiceRows(voice) {
  const ms = (value) => `${value.toFixed(2)} ms`;
  const b = voice.bargeIn;
  const o = voice.overhead;
  const mp = (s) => `${ms(s.medianMs)} / ${ms(s.p95Ms)}`;
  const h = voice.heard;
  const st = voice.streamed;
  const streamRows = st
    ? [
        [
          `first sentence's text → its first sound, TTS first byte F = ${st.firstByteMs} ms, whole sentence S = ${st.wholeMs} ms (${st.turns} turns each), median / p95`,
          `streamed ${mp(st.streamed)}`,
          `whole-sentence ${mp(st.whole)}; turnguard's own share, first byte at the page → first sound: ${mp(st.firstByteToSound)} (goal < 5 ms)`,
        ],
        [
          `underruns per 100 streamed sentences, page busy 20 ms of every 50 (${st.underruns.sentences} sentences at 2× real time)`,
          `${((100 * st.underruns.underruns) / st.underruns.sentences).toFixed(1)} inside sentences`,
          `${((100 * st.underruns.gaps) / st.underruns.sentences).toFixed(1)} gaps between sentences or inside them, from the scheduled starts`,
        ],
        [
          `heard text of streams cut mid-sentence vs what rendered (${st.cutHeard.runs} cuts): words rendered − words heard`,
          `mean ${st.cutHeard.meanWords.toFixed(2)}, max ${st.cutHeard.maxWords}`,
          `over-reports (heard more than rendered): ${st.cutHeard.overReports}`,
        ],
      ]
    : [];
  const pre = voice.preemptive;
  const preRows = pre
    ? (() => {
        const on = pre.on;
        const off = pre.off;
        const d = pre.discardedGuesses;
        const mixed = (k, dTurns) => (on.requestsPerTurn * k + (d.requests / d.turns) * dTurns) / (k + dTurns);
        return [
          [
            `final → first sound, Flux's eager guess ${pre.leadMs} ms before its final, LLM first token at ${pre.firstTokenMs} ms (${on.turns} turns each, interleaved), median`,
            `preemptive on ${ms(median(on.finalToSoundMs))}, off ${ms(median(off.finalToSoundMs))}: ${ms(median(off.finalToSoundMs) - median(on.finalToSoundMs))} sooner`,
            `turn_latency voiceToVoiceMs median: on ${ms(median(on.voiceToVoiceMs))}, off ${ms(median(off.voiceToVoiceMs))}; kept ${on.kept}/${on.turns}`,
          ],
          [
            "requests per turn: Flux guesses (all kept) / own guesses on a partial that never matches its final (all discarded) / a 4:1 mix",
            `${on.requestsPerTurn.toFixed(2)} / ${(d.requests / d.turns).toFixed(2)} / ${mixed(4, 1).toFixed(2)}`,
            `answers spoken from discarded attempts: ${d.discardedSpoken}; repeated request ids: ${on.repeatedIds + off.repeatedIds + d.repeatedIds}`,
          ],
          [
            `turn_latency marks vs the bench's stopwatch (first sound, route call, synthesize; ${on.markErrorsMs.length + off.markErrorsMs.length} marks), absolute difference`,
            `median ${ms(median([...on.markErrorsMs, ...off.markErrorsMs]))}, max ${ms(Math.max(...on.markErrorsMs, ...off.markErrorsMs))}`,
            `one render quantum: ${ms(pre.quantumMs)}`,
          ],
        ];
      })()
    : [];
  return [
    ...preRows,
    ...streamRows,
    [
      `voice-to-voice overhead, turnguard's own (${o.turns} turns): final → route call + first sentence → synthesize + audio → scheduled start, median / p95`,
      mp(o.own),
      `parts: ${mp(o.route)} + ${mp(o.synthesize)} + ${mp(o.schedule)}; decodeAudioData apart: ${mp(o.decode)}; goal < 2 ms`,
    ],
    ...(o.before
      ? [[`voice-to-voice overhead, turnguard / the baseline build (${o.turns} / ${o.before.turns} turns, interleaved rounds), median / p95`, mp(o.own), `${mp(o.before.own)} the baseline (BENCH_BASELINE)`]]
      : []),
    [`barge-in: the provider's message that cut at the page → source stopped (${b.count} barge-ins)`, `median ${ms(b.medianMs)}, max ${ms(b.maxMs)}`, `the messages that cut: ${Object.entries(b.triggers ?? {}).map(([type, n]) => `${type} ${n}`).join(", ")}; silent one render quantum (${ms(b.quantumMs)}) later on the audio clock`],
    [`heard ms vs the audio that rendered (${h.runs} stops): absolute error`, `median ${ms(h.audioClock.medianMs)}, max ${ms(h.audioClock.maxMs)}`, `a wall-clock estimate: median ${ms(h.wallClock.medianMs)}, max ${ms(h.wallClock.maxMs)}`],
  ];
}
