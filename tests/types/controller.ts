// The "turnguard/controller" entry: the turn ladder and its routes only, with the same types as
// the whole package. `tsc --strict --noEmit` checks it; the `@ts-expect-error` lines prove the
// entry has nothing of the transcriber or the voice half.
import init, { openAiCompatibleRoute, TurnController, type TurnRecord } from "turnguard/controller";
// @ts-expect-error VoiceSession is not in the controller entry
import { VoiceSession } from "turnguard/controller";
// @ts-expect-error LiveTranscriber is not in the controller entry
import { LiveTranscriber } from "turnguard/controller";

export async function oneTurn(): Promise<TurnRecord> {
  await init();
  const controller = new TurnController(
    [openAiCompatibleRoute({ name: "primary", url: "/llm/ok/v1/chat/completions", model: "demo" })],
    {
      recoveryText: "Sorry, say that again?",
      onAcceptedText: (turnId: string, text: string) => console.log(turnId, text),
      onRecovery: (turnId: string, text: string) => console.log(turnId, text),
    },
  );
  try {
    return await controller.run("turn-1", "hello");
  } finally {
    controller.free();
  }
}

export const unused = [VoiceSession, LiveTranscriber];
