// The "turnguard/transcriber" entry: live speech-to-text and its protocols, with the same types as
// the whole package. The `@ts-expect-error` lines prove it has nothing of the ladder or the voice half.
import init, { LiveTranscriber, ReconnectPolicy, type TranscriberProtocol } from "turnguard/transcriber";
// @ts-expect-error TurnController is not in the transcriber entry
import { TurnController } from "turnguard/transcriber";
// @ts-expect-error VoiceSession is not in the transcriber entry
import { VoiceSession } from "turnguard/transcriber";

export async function listen(protocol: TranscriberProtocol): Promise<void> {
  await init();
  const transcriber = new LiveTranscriber({
    protocol,
    provision: async ({ reason }) => ({ url: `wss://stt.example/live?reason=${reason}` }),
    onFinal: (text: string) => console.log(text),
  });
  const policy = new ReconnectPolicy({ protocol });
  policy.free();
  await transcriber.start();
}

export const unused = [TurnController, VoiceSession];
