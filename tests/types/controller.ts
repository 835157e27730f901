// The "turnguard/controller" entry: the turn ladder and its routes only, with the same types as
// the whole package. `tsc --strict --noEmit` checks it; the `@ts-expect-error` lines prove the
// entry has nothing of the transcriber or the voice half.
import init, { openAiCompatibleRoute, TurnController, type CallbackError, type PreemptiveStart, type TurnEvent, type TurnRecord } from "turnguard/controller";
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
      // A throwing callback: a non-terminal callback_error, to onError and as an event.
      onError: (error: CallbackError) => console.warn(error.callback, error.turnId, error.terminal === false, error.cause),
      onEvent: (event: TurnEvent) => {
        if (event.type === "callback_error") console.warn(event.callback, event.at);
      },
    },
  );
  try {
    // An eager end of turn starts the first attempt early; the final keeps or discards it.
    const started: PreemptiveStart = controller.runPreemptive("turn-1", "hello");
    if (started === "limit" || started === "retry_budget") console.log("no guess this time");
    const withdrawn: boolean = controller.discardPreemptive("turn-1");
    console.log(withdrawn);
    return await controller.run("turn-1", "hello");
  } finally {
    controller.free();
  }
}

export const unused = [VoiceSession, LiveTranscriber];
