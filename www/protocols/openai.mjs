// OpenAI Realtime transcription sessions. A backend mints a client secret with its key; the page
// offers it as the subprotocols ["realtime", "openai-insecure-api-key.<secret>"]. Audio goes as
// 24 kHz base64 in JSON. Descriptor format: docs/maintainers/layout.md. Browser-safe.

const SESSION = {
  type: "transcription",
  audio: { input: { format: { type: "audio/pcm", rate: 24000 }, transcription: { model: "gpt-4o-transcribe" }, turn_detection: { type: "server_vad" } } },
};

export default {
  name: "openai",
  label: "OpenAI Realtime transcription",
  hosts: { api: "https://api.openai.com", socket: "wss://api.openai.com" },
  mock: { http: "/v1/realtime/client_secrets", socket: "/v1/realtime", shown: "POST /v1/realtime/client_secrets -> /v1/realtime?intent=transcription (subprotocols realtime, openai-insecure-api-key.<ek>)" },

  failures: [
    { id: "sessionExpired", label: "session_expired (a new session)", socket: "mock_session_ms=5000&mock_times=1" },
    { id: "close4000", label: "close 4000 (fatal)", socket: "mock_close=4000&mock_close_after_frames=100" },
  ],

  /** The app's backend: a client secret (it expires), asked for every connect. */
  async backend({ api = this.hosts.api, socket = this.hosts.socket, key, call }) {
    const { value } = await call(`${api}/v1/realtime/client_secrets`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ expires_after: { anchor: "created_at", seconds: 600 }, session: SESSION }),
    });
    return { url: `${socket}/v1/realtime?intent=transcription`, protocols: ["realtime", `openai-insecure-api-key.${value}`] };
  },

  fixture: {
    freshCredentials: true,
    authCounter: "subprotocolAuth",
    // Completions out of commit order, each sent twice: still one final per item, in order.
    oneFinal: { socket: "mock_out_of_order=1&mock_duplicate_completed=1", server: { items: 2, completed: 2 } },
    // Cut before its first item was committed: none of its audio was finalized, all is resent.
    drop: { afterFrames: 30, stream: [0, 74], finals: ["w0 w25"], resent: 30 },
    expired: { outcome: "open", reasons: ["start", "reconnect"], server: { refused: 1 } }, // refused at the handshake
    fatal: { close: "4000", code: 4000 },
    sessionOver: {}, // session_expired, then close 1001
    throttled: null,
    keepalive: null,
    pacing: null,
    finish: { finishes: 1, server: { commits: 1, emptyCommits: 0 } },
    scenarios: {
      async resampledAudioReachesTheMockAt24KhzWithItsDuration(t) {
        const app = t.backend();
        const events = t.recorder();
        const transcriber = t.make({ protocol: "openai", provision: app.provision, policy: t.FAST, ...events });
        await transcriber.start();
        await t.stream(transcriber, 0, 99); // 2 s at 16 kHz
        await t.until(() => events.log.finals.length === 2, 6000, "two finals");
        await transcriber.stop();
        const server = await app.stats();
        // 2 s of 24 kHz PCM16 is 96000 bytes, in 100 appends; the words prove the samples survived.
        t.assertEq([server.frames, server.bytes, server.audioMs, server.badAudio], [100, 96000, 2000, 0], "24 kHz, 2 s");
        t.assertEq(events.log.finals.map(([text]) => text), ["w0 w25", "w50 w75"], "the frames' words");
        transcriber.free();
      },
    },
  },
};
