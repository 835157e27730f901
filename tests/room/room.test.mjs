// A short run of the room in `npm test`: three rounds (a question each; a "wait a moment", an "okay") with Chromium's canceller on, echo -20 dB /
// 150 ms. It asserts only what holds on a busy machine today: the room measures what it was
// built with, the user's words reach the recognizer and start turns, and the agent's answers
// reach the air. The barge-in figures are printed, never asserted (issue 23's targets are for the
// work that builds on this room; `npm run room` measures them).

import assert from "node:assert/strict";
import { test } from "node:test";
import { enginePython } from "../../www/devstack/engine.mjs";
import { roomToolsMissing } from "./pulse.mjs";
import { parseArgs, runRoom } from "./run.mjs";
import { voiceLine } from "./score.mjs";

const skip = (await roomToolsMissing()) ?? (enginePython() ? false : "no .venv with pocketsphinx (npm run bootstrap makes it)");

test("the room: the user is heard, the agent answers into the air", { skip, timeout: 180_000 }, async () => {
  const options = {
    ...parseArgs(["--echo-db", "-20", "--delay-ms", "150", "--echo-check", "off"]),
    script: [
      { index: 0, kind: "none", question: "what is the weather like today", phrase: null, momentMs: null },
      { index: 1, kind: "stop", question: "tell me a joke", phrase: "wait a moment", momentMs: 2000 },
      { index: 2, kind: "backchannel", question: "what time is it", phrase: "okay", momentMs: 2000 },
    ],
  };
  const run = await runRoom(options, { log: (line) => console.log(line) });
  console.log(run.residual.line);
  console.log(voiceLine(run.result.voice));
  console.log(run.line);
  const { result, loopback } = run;
  assert.ok(Math.abs(loopback.gainDb + 20) < 1 && Math.abs(loopback.delayMs - 150) < 5, `loopback ${JSON.stringify(loopback)}`);
  // (An interjection is said only into an answer that sounded: under a heavy load the echo can cut
  // an answer before it sounds, so only the questions are counted.)
  assert.equal(run.utterances.filter((u) => u.kind === "question").length, 3, "each question reached the air");
  // The recognizer heard the questions: turns started from them, and their answers sounded.
  assert.ok(result.answered >= 1, `answered ${result.answered} of ${result.rounds}`);
  assert.ok(result.turnList.some((t) => t.afterUserMs !== null && t.afterUserMs < 3000), "a turn started from the user's words");
});
