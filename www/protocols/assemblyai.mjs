// AssemblyAI Universal-Streaming v3. A backend gets a single-use token with its key for every
// connect; the page puts it in the socket URL's query. Descriptor format:
// docs/maintainers/layout.md. Browser-safe: no Node import.

export default {
  name: "assemblyai",
  label: "AssemblyAI Universal-Streaming v3",
  hosts: { api: "https://streaming.assemblyai.com", socket: "wss://streaming.assemblyai.com" },
  mock: { http: "/v3/token", socket: "/v3/ws", shown: "GET /v3/token -> /v3/ws?token=<single-use token>" },

  failures: [
    { id: "expired", label: "expired token (1008: a fresh one once)", token: "mock_expired=1&mock_times=1" },
    { id: "close3008", label: "session cap (3008)", socket: "mock_session_ms=5000&mock_times=1" },
    { id: "close3009", label: "too many sessions (3009)", socket: "mock_close=3009&mock_times=1" },
  ],

  /** The app's backend: one single-use token per connect (R6). */
  async backend({ api = this.hosts.api, socket = this.hosts.socket, key, call }) {
    const { token } = await call(`${api}/v3/token?expires_in_seconds=60`, { headers: { authorization: key } });
    return { url: `${socket}/v3/ws?sample_rate=16000&encoding=pcm_s16le&format_turns=true&token=${encodeURIComponent(token)}` };
  },

  fixture: {
    freshCredentials: true,
    authCounter: "tokenAuth",
    oneFinal: { server: { badFrames: 0 } },
    format: "sentence", // format_turns: "w0 w25" comes back as "W0 w25."
    framesPerChunk: 3, // 60 ms chunks: AssemblyAI takes 50–1000 ms
    // Frames go out three at a time (60 ms, over AssemblyAI's 50 ms floor): the cut after ten
    // chunks (frames 0–29) finalized w0; the chunk from frame 24 on is resent.
    drop: { afterFrames: 10, stream: [0, 77], finals: ["w0 W24 w49."], resent: 2 }, // chunks: frames 24–29
    expired: { outcome: "open", reasons: ["start", "reconnect"], closes: [[1008, "retry", "reconnect_same_url"]] },
    fatal: { close: "3007", code: 3007 },
    sessionOver: { code: 3008 },
    throttled: { close: "3009", code: 3009 },
    keepalive: null, // no inactivity limit unless asked for
    pacing: { frames: 150 }, // never faster than real time (3007)
    finish: { finishes: 2, closeCodes: [1000], server: { forceEndpoints: 1, terminates: 1, badFrames: 0 } },
    scenarios: {
      /** A backend that hands out one token every time: refused, a fresh one "once", then terminal. */
      async aReusedTokenIsRefusedTwiceAndTheTranscriberFails(t) {
        const app = t.backend("mock_drop_after_ms=200&mock_times=1", { reuse: true });
        const events = t.recorder();
        const transcriber = t.make({ protocol: "assemblyai", provision: app.provision, policy: t.FAST, ...events });
        await transcriber.start();
        await t.until(() => transcriber.state === "failed", 4000, "failed");
        const terminal = events.log.errors.filter((error) => error.terminal);
        t.assertEq(terminal.map((error) => [error.code, error.closeCode]), [["fatal_close", 1008]], "terminal after a fresh token did not help");
        t.assertEq((await app.stats()).refused, 2, "refused twice");
        transcriber.free();
      },

      async serverError3005IsRetried(t) {
        const app = t.backend("mock_close=3005&mock_times=1");
        const transcriber = t.make({ protocol: "assemblyai", provision: app.provision, policy: t.FAST });
        await transcriber.start();
        await t.until(() => app.reasons.length === 2 && transcriber.state === "open", 3000, "retried");
        await transcriber.stop();
        transcriber.free();
      },
    },
  },
};
