// The protocol seam's public types: provision's reason and result, the protocol option, close events.
import {
  LiveTranscriber,
  ReconnectPolicy,
  type Provisioner,
  type ProvisionReason,
  type TranscriberEvent,
  type TranscriberProtocol,
} from "turnguard";

// Deepgram: the app's backend mints a short-lived JWT per connect (reason "start" or "reconnect").
const deepgram: Provisioner = async ({ signal, reason }) => {
  const why: ProvisionReason = reason;
  const { token } = await (await fetch(`/api/deepgram-token?reason=${why}`, { method: "POST", signal })).json();
  return {
    url: "wss://api.deepgram.com/v1/listen?model=nova-3&encoding=linear16&sample_rate=16000&interim_results=true&utterance_end_ms=1000",
    protocols: ["bearer", token as string],
  };
};

const protocol: TranscriberProtocol = "deepgram";
const transcriber = new LiveTranscriber({
  protocol,
  provision: deepgram,
  throttledDelayMs: 15_000,
  ackTimeoutMs: 0,
  workletUrl: "/capture-worklet.js",
  onEvent(event: TranscriberEvent) {
    if (event.type === "close") console.log(event.code, event.class, event.next, event.delayMs);
  },
  onError(error) {
    if (error.code === "fatal_close") console.log(error.closeCode);
  },
});

// AssemblyAI: a single-use token in the query; config is optional.
new LiveTranscriber({
  protocol: "assemblyai",
  provision: async ({ reason }) => ({ url: `wss://streaming.assemblyai.com/v3/ws?sample_rate=16000&token=${reason}`, config: {} }),
});

// @ts-expect-error not a protocol turnguard speaks
new LiveTranscriber({ protocol: "whisper", provision: deepgram });

// @ts-expect-error subprotocols are strings
const bad: Provisioner = async () => ({ url: "wss://x", protocols: [1] });

const policy = new ReconnectPolicy({ protocol: "assemblyai", throttledDelayMs: 20_000 });
const decision = policy.onClose(3009, performance.now());
if (decision.reason === "throttled" || decision.reason === "fatal_close") console.log(decision.delayMs);

export const unused = [transcriber, bad];
