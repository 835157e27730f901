// The protocol seam's public types: provision's reason and result, the protocol option, close events.
import {
  LiveTranscriber,
  ReconnectPolicy,
  type Provisioner,
  type ProvisionReason,
  type TranscriberEvent,
  type TranscriberProtocol,
} from "turnguard";

// Deepgram, as its recipe in docs/providers.md: the app's backend mints a short-lived token per
// connect (reason "start" or "reconnect") and answers the socket's whole description.
const deepgram: Provisioner = async ({ signal, reason }) => {
  const why: ProvisionReason = reason;
  const response = await fetch("/api/stt/deepgram", { method: "POST", signal, headers: { "content-type": "application/json" }, body: JSON.stringify({ reason: why }) });
  const { url, protocols } = (await response.json()) as { url: string; protocols: string[] };
  return { url, protocols };
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
