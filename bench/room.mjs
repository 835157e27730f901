// `npm run bench:room [-- --rounds N --echo-db D --delay-ms M --ec on|off --protocols a,b]` (and
// any other option of the room, e.g. `--mix backchannel=1 --recognizer script`): the
// room (tests/room/) once per speech-to-text protocol the dev stack mocks, every round a question
// and a "stop" or "wait a moment" at a random moment of the answer (its first 3 s). One row per
// protocol: voice onset → silence (the user's first sound in the air to the agent's last), how
// many stops cut, self-cuts and extra turns. Writes bench/room.json. Nothing asserts a time.

import { writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startDevStack } from "../www/devstack.mjs";
import { parseArgs, runRoom } from "../tests/room/run.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

async function protocolNames() {
  const stack = await startDevStack({ port: 0, upstream: null });
  try {
    return stack.protocols.map((p) => (typeof p === "string" ? p : p.name));
  } finally {
    await stack.close();
  }
}

const argv = process.argv.slice(2);
const at = argv.indexOf("--protocols");
const only = at >= 0 ? argv.splice(at, 2)[1].split(",") : null;
const options = { ...parseArgs(["--rounds", "12", "--mix", "stop=1", "--echo-check", "off", ...argv]) };
const protocols = only ?? (await protocolNames());
const ms = (v) => (v === null ? "-" : `${Math.round(v)} ms`);
const rows = [];
for (const protocol of protocols) {
  const load = os.loadavg()[0];
  const run = await runRoom({ ...options, protocol }, { log: () => {} });
  const { result } = run;
  // What made each self-cut and extra turn, so a rare one is explained by the run that had it: the
  // recognizer's captions of the 3 s before it, and how far it was from the user's last words.
  const captionsBefore = (at) => run.entries.filter((e) => e.kind === "caption" && e.at >= at - 3000 && e.at <= at + 200 && e.text.trim() !== "").map((e) => `${e.isFinal ? "final" : "partial"} ${Math.round(e.at - at)} ms: ${e.text}`);
  const fromUser = (at) => {
    const before = run.utterances.filter((u) => u.onsetAt <= at);
    const last = before.at(-1);
    return last ? { kind: last.kind, round: last.round, afterEndMs: Math.round(at - last.endAt) } : null;
  };
  const why = {
    selfCuts: result.selfCutTurns.map((t) => ({ ...t, at: Math.round(t.at), user: fromUser(t.at), captions: captionsBefore(t.at) })),
    extraTurns: result.extraTurnIds.map((t) => ({ ...t, at: Math.round(t.at), user: fromUser(t.at), captions: captionsBefore(t.at) })),
  };
  const row = { protocol, why, rounds: result.rounds, answered: result.answered, stopsCut: result.stop.cut, stops: result.stop.total, medianMs: result.stop.medianMs, p90Ms: result.stop.p90Ms, latenciesMs: result.stop.latenciesMs, backchannelsCut: result.backchannels.cut, backchannels: result.backchannels.total, selfCuts: result.selfCuts, extraTurns: result.extraTurns, residualMedianDb: run.residual.medianDb, load: Math.round(load * 10) / 10 };
  rows.push(row);
  console.log(`bench:room: ${protocol}: stop cut ${row.stopsCut}/${row.stops}, voice onset → silence median ${ms(row.medianMs)} p90 ${ms(row.p90Ms)}, ${row.backchannels ? `backchannels cut ${row.backchannelsCut}/${row.backchannels}, ` : ""}${row.selfCuts} self-cuts, ${row.extraTurns} extra turns (load ${row.load})`);
  for (const [kind, list] of Object.entries(why)) for (const t of list) console.log(`  ${kind === "selfCuts" ? "self-cut" : "extra turn"} ${t.turnId}${t.cause ? ` by ${t.cause}` : ""}; user's last: ${JSON.stringify(t.user)}; captions: ${JSON.stringify(t.captions)}`);
}
const conditions = { echoDb: options.echoDb, delayMs: options.delayMs, ec: options.ec, rounds: options.rounds, seed: options.seed, mix: options.mix, recognizer: options.recognizer };
writeFileSync(path.join(root, "bench/room.json"), `${JSON.stringify({ date: new Date().toISOString(), machine: `${os.cpus().length} cores`, conditions, rows }, null, 1)}\n`);
console.log(`\n| protocol | stops cut | voice onset → silence, median / p90 | self-cuts | extra turns |\n| --- | --- | --- | --- | --- |`);
for (const r of rows) console.log(`| ${r.protocol} | ${r.stopsCut}/${r.stops} | ${ms(r.medianMs)} / ${ms(r.p90Ms)} | ${r.selfCuts} | ${r.extraTurns} |`);
console.log(`\nbench:room: echo ${options.echoDb} dB / ${options.delayMs} ms, canceller ${options.ec ? "on" : "off"}, ${options.rounds} rounds each, the ${options.recognizer} recognizer; wrote bench/room.json`);
