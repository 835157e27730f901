// How well Chromium's echo canceller removes the page's own output in the room, and what it does
// to the user's voice while the page talks (double talk). What the page captured comes from its
// meter (page.mjs: the mean square of every 10 ms of the microphone track, after Chromium's
// processing), what sounded from the room's recording (pulse.mjs), on the same wall clock.
//
// Two measurements:
// - measureCanceller, before the agent listens: the page opens the room microphone (the demo's
//   constraints, echoCancellation as asked) and plays espeak-ng speech itself; the user's voice is
//   played into the air alone, the page's speech alone, then both. Figures: what the page captured
//   of its own speech against that speech at the speaker (in dB: the *echo return loss*, over the
//   whole sentence, per 100 ms, and over its first 500 ms), the same just after the user stopped
//   talking over it, and how much weaker the user's voice came through over the page's speech than
//   alone (the *double-talk loss*);
// - residualInRounds, after the rounds: every 100 ms in which the agent spoke and the user did not,
//   what the page captured against what the speaker played.

import { AIR, dbOfMeanSquare, dbOfRatio, FRAME_MS, meanPower, quantile, spans, SPEAKER, USER } from "./signal.mjs";
import { spokenWav, USER_VOICE } from "./voices.mjs";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const AGENT_TEXT = "I cannot see outside from here. Locally, it is always fair weather for testing. Bring a jacket just in case.";
const USER_TEXT = "please tell me about the weather today";
const WINDOW_MS = 100;

/** Mean power of the meter's frames (`[at, meanSquare]`, sorted by `at`) in [from, to), or null. */
function captured(meter, from, to) {
  let lo = 0;
  let hi = meter.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (meter[mid][0] < from) lo = mid + 1;
    else hi = mid;
  }
  let sum = 0;
  let n = 0;
  for (let i = lo; i < meter.length && meter[i][0] < to; i += 1, n += 1) sum += meter[i][1];
  return n === 0 ? null : sum / n;
}

/**
 * How much later the page's meter stamps a sound than the recording does (capture buffers,
 * processing, the message): the lag in 0–300 ms that best lines up the captured level with the
 * user's voice in the air, over the frames where the user sounded. Null without enough of them.
 */
export function captureLagMs(meter, recorder) {
  const user = recorder.envelope.channel(USER);
  const frames = meter.filter(([at]) => {
    const f = recorder.frameOfWall(at);
    return f >= 0 && f < user.length && user[f] > 1e-6;
  });
  if (frames.length < 50) return null;
  const level = (power) => Math.max(-100, dbOfMeanSquare(power));
  let best = null;
  for (let lag = 0; lag <= 300; lag += 5) {
    const pairs = frames.map(([at, power]) => {
      const f = recorder.frameOfWall(at - lag);
      return [level(meanPower(user, f, f + 10 / FRAME_MS)), level(power)];
    });
    const mean = (k) => pairs.reduce((s, p) => s + p[k], 0) / pairs.length;
    const [mx, my] = [mean(0), mean(1)];
    let sxy = 0;
    let sxx = 0;
    let syy = 0;
    for (const [x, y] of pairs) {
      sxy += (x - mx) * (y - my);
      sxx += (x - mx) ** 2;
      syy += (y - my) ** 2;
    }
    const r = sxy / Math.sqrt(sxx * syy || 1);
    if (!best || r > best.r) best = { lag, r };
  }
  return best.lag;
}

const fmt = (db) => (db === null || db === undefined || Number.isNaN(db) ? "n/a" : db === -Infinity ? "-inf" : db.toFixed(1));

/** Figures over a list of per-window levels (dB). */
function distribution(values) {
  return {
    windows: values.length,
    medianDb: quantile(values, 0.5),
    p90Db: quantile(values, 0.9),
    p99Db: quantile(values, 0.99),
    worstDb: values.length > 0 ? Math.max(...values) : null,
    // Windows where the echo came through at -40 dB of the output or louder: enough to be heard
    // as speech by a recognizer (the agent speaks at about -20 dBFS here).
    leaks: values.filter((v) => v > -40).length,
  };
}

/**
 * The page's capture against the speaker, per WINDOW_MS, over the wall-clock span [from, to):
 * windows where the speaker played (above `minSpeakerDb` dBFS) and the user was silent from 300 ms
 * before to 500 ms after (noise suppression and the canceller's own hangover).
 */
export function residualWindows({ meter, recorder, lagMs, from, to, minSpeakerDb = -45 }) {
  const speaker = recorder.envelope.channel(SPEAKER);
  const user = recorder.envelope.channel(USER);
  const out = [];
  const per = WINDOW_MS / FRAME_MS;
  for (let t = from; t + WINDOW_MS <= to; t += WINDOW_MS) {
    const f = recorder.frameOfWall(t - lagMs);
    if (f < 0 || f + per > speaker.length) continue;
    const played = meanPower(speaker, f, f + per);
    if (dbOfMeanSquare(played) < minSpeakerDb) continue;
    if (spans(user, { from: f - 300 / FRAME_MS, to: f + per + 500 / FRAME_MS }).length > 0) continue;
    const power = captured(meter, t, t + WINDOW_MS);
    if (power !== null) out.push(Math.round(dbOfRatio(power, played) * 10) / 10);
  }
  return out;
}

/** The residual echo over the whole run (every round): a distribution of 100 ms windows. */
export function residualInRounds({ meter, recorder, lagMs, from, to }) {
  const values = residualWindows({ meter, recorder, lagMs, from, to });
  const figures = distribution(values);
  return { ...figures, line: `echo: in the rounds, the agent's speech captured at ${fmt(figures.medianDb)} dB of its output (median of ${figures.windows} windows of 100 ms; p90 ${fmt(figures.p90Db)}, p99 ${fmt(figures.p99Db)}, worst ${fmt(figures.worstDb)}; ${figures.leaks} at -40 dB or louder)` };
}

/**
 * The measurement before the rounds, `repeats` times over. `mic`: `{ ec, nsAgc }` (the
 * constraints); `meter`: the array the page's meter frames land in. Resolves with each trial,
 * the figures over all of them, and a line to print.
 */
export async function measureCanceller({ page, room, meter, mic, repeats = 3, log = () => {} }) {
  const { recorder } = room;
  const userWav = spokenWav(room.dir, USER_TEXT, USER_VOICE);
  await page.evaluate((m) => window.room.openMicrophone(m), mic);
  await sleep(1500);
  // What the page captures of the room's silence: the floor under every figure below.
  const quietFrom = Date.now();
  await sleep(1000);
  const floor = captured(meter, quietFrom, Date.now());

  /** The span of `channel` sounding between two wall-clock times, in frames. */
  const sounding = (channel, from, to) => {
    const found = spans(recorder.envelope.channel(channel), { from: recorder.frameOfWall(from) - 20, to: recorder.frameOfWall(to) + 40 });
    return found.length === 0 ? null : [found[0][0], found.at(-1)[1]];
  };
  const power = (channel, [a, b]) => meanPower(recorder.envelope.channel(channel), a, b);
  let lagMs = 0;
  /** What the page captured of the frames [a, b) of the recording (plus `tailMs`). */
  const capturedOver = ([a, b], tailMs = 0) => captured(meter, recorder.wallOfFrame(a) + lagMs, recorder.wallOfFrame(b) + lagMs + tailMs);
  /** The captured level of each 100 ms of `[a, b)` (frames), in dB against `reference` (a power). */
  const windows = ([a, b], reference) => {
    const out = [];
    for (let f = a; f + WINDOW_MS / FRAME_MS <= b; f += WINDOW_MS / FRAME_MS) {
      const value = capturedOver([f, f + WINDOW_MS / FRAME_MS]);
      if (value !== null) out.push(Math.round(dbOfRatio(value, reference) * 10) / 10);
    }
    return out;
  };

  const trials = [];
  for (let r = 0; r < repeats; r += 1) {
    // The user alone.
    const alone = await room.play(userWav);
    await sleep(400);
    const userSpan = sounding(USER, alone.startedAt, alone.endedAt);
    if (r === 0) lagMs = captureLagMs(meter, recorder) ?? 30;
    // The page alone.
    const own = await page.evaluate((text) => window.room.playSpeech(text), AGENT_TEXT);
    await sleep(400);
    const ownSpan = sounding(SPEAKER, own.startedAt, own.endedAt);
    // Both: the user starts 1.5 s into the page's speech.
    const bothPlaying = page.evaluate((text) => window.room.playSpeech(text), AGENT_TEXT);
    await sleep(1500);
    const over = await room.play(userWav);
    const both = await bothPlaying;
    await sleep(400);
    const overSpan = sounding(USER, over.startedAt, over.endedAt);
    const bothSpan = sounding(SPEAKER, both.startedAt, both.endedAt);
    if (!userSpan || !ownSpan || !overSpan || !bothSpan) throw new Error("the echo measurement found no sound in the air");

    const speech = power(SPEAKER, ownSpan);
    const delay = Math.round(room.echo.delayMs / FRAME_MS);
    const trial = {
      speechDbfs: dbOfMeanSquare(speech),
      echoInAirDb: dbOfRatio(power(AIR, [ownSpan[0] + delay, ownSpan[1] + delay]), speech),
      returnLossDb: dbOfRatio(capturedOver(ownSpan, room.echo.delayMs + 100), speech),
      first500Db: dbOfRatio(capturedOver([ownSpan[0], ownSpan[0] + 500 / FRAME_MS]), speech),
      windowsDb: windows(ownSpan, speech),
      // After the user's last word, while the page still speaks: how fast the canceller recovers.
      afterDoubleTalkDb: windows([overSpan[1] + 100 / FRAME_MS, bothSpan[1]], power(SPEAKER, bothSpan)),
      userAloneDb: dbOfRatio(capturedOver(userSpan, 100), power(USER, userSpan)),
      userOverSpeechDb: dbOfRatio(capturedOver(overSpan, 100), power(USER, overSpan)),
      // The page's speech still sounded for the whole of the user's words.
      doubleTalkCovered: overSpan[1] < bothSpan[1],
    };
    trial.doubleTalkLossDb = trial.userAloneDb - trial.userOverSpeechDb;
    trials.push(trial);
    log(`echo: trial ${r + 1}: the page's speech at ${fmt(trial.speechDbfs)} dBFS, its echo in the air ${fmt(trial.echoInAirDb)} dB; captured ${fmt(trial.returnLossDb)} dB (100 ms windows: median ${fmt(quantile(trial.windowsDb, 0.5))}, worst ${fmt(Math.max(...trial.windowsDb))}; first 500 ms ${fmt(trial.first500Db)}), just after double talk up to ${fmt(Math.max(...trial.afterDoubleTalkDb))} dB; the user alone ${fmt(trial.userAloneDb)} dB, over the page's speech ${fmt(trial.userOverSpeechDb)} dB`);
  }
  await page.evaluate(() => window.room.closeMicrophone());
  const median = (key) => quantile(trials.map((t) => t[key]), 0.5);
  const own = distribution(trials.flatMap((t) => t.windowsDb));
  const after = distribution(trials.flatMap((t) => t.afterDoubleTalkDb));
  const summary = { mic, lagMs, floorDbfs: dbOfMeanSquare(floor ?? 0), trials, returnLossDb: median("returnLossDb"), first500Db: median("first500Db"), windows: own, afterDoubleTalk: after, doubleTalkLossDb: median("doubleTalkLossDb") };
  summary.line = `echo: canceller ${mic.ec ? "on" : "off"}${mic.nsAgc ? "" : " (no NS/AGC)"}: the page's own speech captured at ${fmt(summary.returnLossDb)} dB of its output (100 ms windows: median ${fmt(own.medianDb)}, p90 ${fmt(own.p90Db)}, worst ${fmt(own.worstDb)}; first 500 ms ${fmt(summary.first500Db)}), just after double talk up to ${fmt(after.worstDb)} dB; the user's voice ${fmt(summary.doubleTalkLossDb)} dB weaker over the page's speech than alone (medians of ${trials.length} trials; silence captured at ${fmt(summary.floorDbfs)} dBFS, capture lag ${lagMs} ms)`;
  return summary;
}
