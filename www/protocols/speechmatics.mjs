// Speechmatics real-time (`/v2`). A backend mints a temporary key with its own; the page puts it
// in the socket URL's query, and the start message carries the configuration. Descriptor format:
// docs/maintainers/layout.md. Browser-safe: no Node import.

export default {
  name: "speechmatics",
  label: "Speechmatics real-time",
  hosts: { api: "https://mp.speechmatics.com", socket: "wss://eu2.rt.speechmatics.com" },
  mock: { http: "/v1/api_keys", socket: "/v2", shown: "POST /v1/api_keys?type=rt -> /v2?jwt=<key>" },

  failures: [
    { id: "close4005", label: "concurrency quota (4005: throttled)", socket: "mock_close=4005&mock_close_after_frames=100&mock_times=1" },
    { id: "lateReceipts", label: "receipts 2 s late (flow control)", socket: "mock_receipt_delay_ms=2000" },
  ],

  /** The app's backend: a temporary key (usable until it expires), asked for every connect. */
  async backend({ api = this.hosts.api, socket = this.hosts.socket, key, call }) {
    const { key_value: jwt } = await call(`${api}/v1/api_keys?type=rt`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ ttl: 60 }),
    });
    const config = { transcription_config: { language: "en", enable_partials: true, max_delay: 1.0, conversation_config: { end_of_utterance_silence_trigger: 0.5 } } };
    return { url: `${socket}/v2?jwt=${encodeURIComponent(jwt)}`, config };
  },

  fixture: {
    freshCredentials: true,
    acks: true, // AudioAdded receipts: a socket that stops receipting is half-open
    authCounter: "jwtAuth",
    oneFinal: { server: { starts: 1, languages: ["en"], audioBeforeStart: 0, frames: 100 } },
    drop: { afterFrames: 30, stream: [0, 74], finals: ["w0 w25 w50"], resent: 5 },
    expired: { outcome: "open", reasons: ["start", "reconnect"], server: { refused: 1 } }, // refused at the handshake
    fatal: { close: "4001", code: 4001 },
    sessionOver: { code: 1008 },
    throttled: { close: "4005", code: 4005 },
    keepalive: null,
    pacing: null, // flow control by receipts instead (the scenario below)
    // EndOfStream names the last frame sent.
    finish: { finishes: 1, closeCodes: [1000], server: { lastSeqNos: [60], framesAtEnd: [60] } },
    scenarios: {
      async aBacklogNeverRunsMoreThanFiveSecondsAheadOfAudioAdded(t) {
        // 8 s captured before the socket; the mock receipts each frame 300 ms late.
        const app = t.backend("mock_receipt_delay_ms=300");
        const transcriber = t.make({ protocol: "speechmatics", provision: app.provision, policy: t.FAST });
        for (const n of t.range(0, 399)) transcriber.sendAudio(t.frame(n));
        await transcriber.start();
        await t.until(() => transcriber.stats.framesSent === 400, 8000, "every frame sent");
        const server = await app.stats();
        t.assertEq(server.frames, 400, "all of it arrived");
        t.assert(server.maxAheadMs <= 5000, `never more than 5 s ahead of AudioAdded: ${server.maxAheadMs} ms`);
        t.assert(server.maxAheadMs >= 4000, `the window was used: ${server.maxAheadMs} ms`);
        await transcriber.stop();
        transcriber.free();
      },
    },
  },
};
