// Gladia live v2: the seed protocol. A backend creates the session with its key; the page connects
// to the URL it got, and reconnects to that same URL while the session lives (its audio
// acknowledgements say what the server has).
//
// A protocol descriptor (docs/maintainers/layout.md): what the library's `protocol` option names,
// the dev stack's mock of it (www/devstack/mocks/gladia.mjs), the demo's failure switches, the
// backend recipe an app's server runs, and what the shared browser suite expects of it.
// Browser-safe: no Node import.

export default {
  name: "gladia",
  label: "Gladia live v2",
  default: true, // the library's default protocol, and the demo's
  hosts: { api: "https://api.gladia.io", socket: "wss://api.gladia.io" },
  mock: { http: "/v2/live", socket: "/v2/live/ws", shown: "POST /v2/live -> { id, url: /v2/live/ws?token=<id> }" },

  /**
   * The demo's switches of this protocol's own, besides the shared ones (devstack/protocols.mjs):
   * `socket` switches go into the socket URL, `token` ones into the token request.
   */
  failures: [
    { id: "close4403", label: "accept-then-4403 (every session)", socket: "mock_close=4403" },
  ],

  /**
   * The app's backend: creates a live session with its key and hands the page its URL. `api`: the
   * provider's host (the dev stack's in development); `call(url, init)`: the server's HTTP client,
   * resolving with the JSON answer or rejecting with an error that has the HTTP `status`.
   */
  async backend({ api = this.hosts.api, key, call }) {
    const { id, url } = await call(`${api}/v2/live`, {
      method: "POST",
      headers: { "x-gladia-key": key, "content-type": "application/json" },
      body: JSON.stringify({ encoding: "wav/pcm", sample_rate: 16000, bit_depth: 16, channels: 1 }),
    });
    return { url, id };
  },

  /** What the shared browser suite (tests/browser/protocols.js) expects of this protocol. */
  fixture: {
    freshCredentials: false, // reconnects reuse the session's URL (R6 does not apply)
    acks: true, // audio is acknowledged: a socket that stops acknowledging is half-open
    authCounter: "provisionsWithKey",
    drop: { afterFrames: 30, stream: [0, 74], finals: ["w0 w25"], resent: 0 },
    expired: { outcome: "open", reasons: ["start", "session_over"] },
    fatal: null, // every 4000–4999 close ends the session; none is fatal
    sessionOver: {}, // end_session while in use, then close 1000
    throttled: null,
    keepalive: null,
    pacing: null,
    finish: { finishes: 1, closeCodes: [1000] },
  },
};
