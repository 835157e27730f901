// `node tests/room/rescore.mjs RUN.json…`: scores recorded runs again (what `--json` wrote) with
// score.mjs as it is now, so a change of the rules can be checked against past runs without a room.

import { readFileSync } from "node:fs";
import { score, stopPathLine, summaryLine, voiceLengthsLine, wordsLine } from "./score.mjs";
import { FRAME_MS } from "./signal.mjs";

for (const file of process.argv.slice(2)) {
  const run = JSON.parse(readFileSync(file, "utf8"));
  const { air } = run;
  if (air?.frameMs !== FRAME_MS) throw new Error(`${file}: its recording levels are not in ${FRAME_MS} ms frames (an older run)`);
  const speaker = Float32Array.from(air.speaker, (db) => (db <= -120 ? 0 : 10 ** (db / 10)));
  const frameOfWall = (at) => Math.floor((at - air.startAt) / air.frameMs);
  const result = score({ entries: run.entries, utterances: run.utterances, rounds: run.rounds, speaker, frameOfWall });
  console.log(`${file}: ${stopPathLine(result.stopPath)}`);
  console.log(`${file}: ${voiceLengthsLine(result.voiceLengths)}`);
  console.log(`${file}: ${wordsLine(result)}`);
  console.log(`${file}: ${summaryLine(result)}`);
}
