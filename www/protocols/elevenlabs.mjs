// ElevenLabs Scribe realtime. A backend mints a single-use token with its key for every connect;
// the page puts it in the socket URL's query. Audio goes as base64 in JSON. Descriptor format:
// docs/maintainers/layout.md. Browser-safe: no Node import.

const QUERY = "model_id=scribe_v2_realtime&audio_format=pcm_16000&commit_strategy=vad&include_timestamps=true";

export default {
  name: "elevenlabs",
  label: "ElevenLabs Scribe realtime",
  hosts: { api: "https://api.elevenlabs.io", socket: "wss://api.elevenlabs.io" },
  mock: { http: "/v1/single-use-token/realtime_scribe", socket: "/v1/speech-to-text/realtime", shown: "POST /v1/single-use-token/realtime_scribe -> /v1/speech-to-text/realtime?token=<single-use token>" },

  failures: [
    { id: "rateLimited", label: "rate_limited (throttled)", socket: "mock_close=rate_limited&mock_close_after_frames=100&mock_times=1" },
    { id: "terms", label: "unaccepted_terms (fatal)", socket: "mock_close=unaccepted_terms&mock_close_after_frames=100" },
  ],

  /** The app's backend: one single-use token per connect (R6). */
  async backend({ api = this.hosts.api, socket = this.hosts.socket, key, call }) {
    const { token } = await call(`${api}/v1/single-use-token/realtime_scribe`, { method: "POST", headers: { "xi-api-key": key } });
    return { url: `${socket}/v1/speech-to-text/realtime?${QUERY}&token=${encodeURIComponent(token)}` };
  },

  fixture: {
    freshCredentials: true,
    oneFinal: { server: { committed: 2, frames: 100, badChunks: 0 } }, // each commit is sent in two forms
    // Cut after 60 frames: "w0 w25" (frames 0–49) was committed, frames 50–59 were not: they are
    // resent, with the last final as `previous_text`.
    drop: { afterFrames: 60, stream: [0, 99], finals: ["w0 w25", "w50 w75"], resent: 10, server: { previousTexts: ["w0 w25"] } },
    expired: { outcome: "failed", closeCode: 1008, server: { refused: 1 } }, // auth_error, then 1008
    fatal: { close: "unaccepted_terms", code: 1008 },
    sessionOver: { code: 1008 }, // session_time_limit_exceeded, then 1008
    throttled: { close: "rate_limited", code: 1008 },
    keepalive: null,
    pacing: null,
    finish: { finishes: 1, server: { commits: 1 } },
    scenarios: {
      async unacceptedTermsIsFatalInItsOtherSpelling(t) {
        const app = t.backend("mock_close=unaccepted_terms_error&mock_close_after_frames=3");
        const close = t.closes();
        const transcriber = t.make({ protocol: "elevenlabs", provision: app.provision, policy: t.FAST, onEvent: close.onEvent });
        await transcriber.start();
        for (const n of t.range(0, 9)) transcriber.sendAudio(t.frame(n));
        await t.until(() => transcriber.state === "failed", 3000, "failed");
        t.assertEq(close.events.map(([code, kind]) => [code, kind]), [[1008, "fatal"]], "unaccepted_terms_error");
        t.assertEq(app.reasons.length, 1, "no retry");
        transcriber.free();
      },
    },
  },
};
