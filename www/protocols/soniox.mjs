// Soniox real-time. A backend mints a temporary key with its own; the page's first message (the
// configuration) carries it. Descriptor format: docs/maintainers/layout.md. Browser-safe.

export default {
  name: "soniox",
  label: "Soniox real-time",
  hosts: { api: "https://api.soniox.com", socket: "wss://stt-rt.soniox.com" },
  mock: { http: "/v1/auth/temporary-api-key", socket: "/transcribe-websocket", shown: "POST /v1/auth/temporary-api-key -> /transcribe-websocket (api_key in the first message)" },

  failures: [
    { id: "error503", label: "error 503 (start again)", socket: "mock_close=503&mock_close_after_frames=100&mock_times=1" },
    { id: "error402", label: "error 402 (balance: fatal)", socket: "mock_close=402&mock_close_after_frames=100" },
  ],

  /** The app's backend: a temporary key, single-use, for every connect. */
  async backend({ api = this.hosts.api, socket = this.hosts.socket, key, call }) {
    const { api_key } = await call(`${api}/v1/auth/temporary-api-key`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ usage_type: "transcribe_websocket", expires_in_seconds: 60, single_use: true }),
    });
    return { url: `${socket}/transcribe-websocket`, config: { api_key } };
  },

  fixture: {
    freshCredentials: true,
    authCounter: "configs",
    oneFinal: { server: { badConfigs: 0, frames: 100, endpoints: 2 } },
    drop: { afterFrames: 30, stream: [0, 74], finals: ["w0 w25 w50"], resent: 5 },
    // A key the server refuses is the backend's bug: error 401, terminal.
    expired: { outcome: "failed", server: { badConfigs: 1 } },
    fatal: { close: "402", code: 1000 }, // error 402, then a normal close
    sessionOver: null,
    throttled: { close: "429", code: 1000 },
    keepalive: { idleMs: 12_000, atLeast: 1 }, // a keepalive every 10 s
    pacing: { frames: 150 }, // about real time
    finish: { finishes: 2, closeCodes: [1000], server: { finalizes: 1, endOfAudio: 1, finished: 1 } },
    scenarios: {
      async error503StartsAgainAtOnce(t) {
        const app = t.backend("mock_close=503&mock_close_after_frames=3&mock_times=1");
        const close = t.closes();
        const transcriber = t.make({ protocol: "soniox", provision: app.provision, policy: t.FAST, onEvent: close.onEvent });
        await transcriber.start();
        for (const n of t.range(0, 9)) transcriber.sendAudio(t.frame(n));
        await t.until(async () => (await app.stats()).configs === 2, 4000, "a second session");
        t.assertEq(close.events.map(([code, kind]) => [code, kind]), [[1000, "retry"]], "retried");
        t.assertEq(app.reasons, ["start", "reconnect"], "with a fresh key");
        await transcriber.stop();
        transcriber.free();
      },
    },
  },
};
