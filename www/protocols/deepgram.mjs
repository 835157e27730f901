// Deepgram listen v1. A backend mints a short-lived token (30 s) with its key for every connect;
// the page offers it as the subprotocols ["bearer", token]. Descriptor format:
// docs/maintainers/layout.md. Browser-safe: no Node import.

const LISTEN = "model=nova-3&encoding=linear16&sample_rate=16000&channels=1&interim_results=true&utterance_end_ms=1000&vad_events=true&endpointing=300";

export default {
  name: "deepgram",
  label: "Deepgram listen v1",
  hosts: { api: "https://api.deepgram.com", socket: "wss://api.deepgram.com" },
  mock: { http: "/v1/auth/grant", socket: "/v1/listen", shown: "POST /v1/auth/grant -> /v1/listen (subprotocols bearer, <token>)" },

  failures: [
    { id: "expired", label: "expired token (refused at the handshake)", token: "mock_expired=1&mock_times=1" },
    { id: "close1008", label: "1008 (undecodable audio: fatal)", socket: "mock_close=1008&mock_close_after_frames=100" },
  ],

  /** The app's backend: a token for one connect, asked again for every connect (R6). */
  async backend({ api = this.hosts.api, socket = this.hosts.socket, key, call }) {
    const { access_token: token } = await call(`${api}/v1/auth/grant`, {
      method: "POST",
      headers: { authorization: `Token ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ ttl_seconds: 30 }),
    });
    return { url: `${socket}/v1/listen?${LISTEN}`, protocols: ["bearer", token] };
  },

  fixture: {
    freshCredentials: true,
    authCounter: "bearer",
    speechStarts: true,
    oneFinal: { server: { frames: 100 } },
    drop: { afterFrames: 30, stream: [0, 74], finals: ["w0 w25 w50"], resent: 5 },
    expired: { outcome: "open", reasons: ["start", "reconnect"], server: { refused: 1 } }, // refused at the handshake
    fatal: { close: "1008", code: 1008 },
    sessionOver: null, // no session limit
    throttled: null,
    keepalive: { idleMs: 10_000, atLeast: 2 }, // KeepAlive every 4 s; the server's limit is 10 s
    pacing: { frames: 200 }, // at most 1.25x real time
    finish: { finishes: 2, closeCodes: [1000], server: { finalizes: 1, closeStreams: 1 } },
  },
};
