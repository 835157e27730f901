// Deepgram Flux: the conversational model at /v2/listen, which ends each turn itself. A backend
// mints the same short-lived token as for listen v1 on every connect; the page offers it as the
// subprotocols ["bearer", token]; the end-of-turn thresholds go in the URL. Descriptor format:
// docs/maintainers/layout.md. Browser-safe: no Node import.

const LISTEN = "model=flux-general-en&encoding=linear16&sample_rate=16000&eot_threshold=0.7";

export default {
  name: "deepgram-flux",
  label: "Deepgram Flux",
  hosts: { api: "https://api.deepgram.com", socket: "wss://api.deepgram.com" },
  mock: { http: "/v1/auth/grant", socket: "/v2/listen", shown: "POST /v1/auth/grant -> /v2/listen (subprotocols bearer, <token>)" },

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
    return { url: `${socket}/v2/listen?${LISTEN}`, protocols: ["bearer", token] };
  },

  fixture: {
    freshCredentials: true,
    authCounter: "bearer",
    speechStarts: true, // StartOfTurn
    oneFinal: { server: { frames: 100 } },
    // A turn cut by the drop is transcribed again, whole, from the resent audio: no EndOfTurn had
    // come, so every frame of the first connection goes again.
    drop: { afterFrames: 30, stream: [0, 74], finals: ["w0 w25"], resent: 30 },
    expired: { outcome: "open", reasons: ["start", "reconnect"], server: { refused: 1 } },
    fatal: { close: "1008", code: 1008 },
    sessionOver: null, // no session limit
    throttled: null,
    keepalive: null, // Flux has no KeepAlive message: audio keeps a socket
    pacing: { frames: 200 }, // at most 1.25x real time
    // ForceEndTurn then CloseStream; the server closes without a status.
    finish: { finishes: 2, closeCodes: [1005], server: { forceEndTurns: 1, closeStreams: 1 } },

    scenarios: {
      /** With eager_eot_threshold, each turn's EagerEndOfTurn reaches onEvent before its final, without its text. */
      async eagerEndsOfTurnAreReportedBeforeTheirFinals(t) {
        const app = t.backend("eager_eot_threshold=0.5");
        const events = t.recorder();
        const hints = [];
        const transcriber = t.make({
          protocol: "deepgram-flux",
          provision: app.provision,
          policy: t.FAST,
          ...events,
          onEvent: (event) => event.type !== "close" && hints.push([event.type, event.utterance, Object.keys(event).sort().join(",")]),
          onFinal: (text, meta) => {
            events.onFinal(text, meta);
            hints.push(["final", meta.utterance]);
          },
        });
        await transcriber.start();
        await t.stream(transcriber, 0, 99);
        await t.until(() => events.log.finals.length === 2, 6000, "two finals");
        t.assertEq(hints, [
          ["eager_end_of_turn", 1, "type,utterance"],
          ["final", 1],
          ["eager_end_of_turn", 2, "type,utterance"],
          ["final", 2],
        ], "each hint before its final, with no text");
        t.assertEq(events.log.finals.map(([text]) => text), ["w0 w25", "w50 w75"], "one final per turn");
        t.assertEq((await app.stats()).eagerEnds, 2, "the mock sent two eager ends");
        await transcriber.stop();
        transcriber.free();
      },

      /** A config from provision() goes first as a Configure message, which the server confirms. */
      async aProvisionedConfigIsSentAsConfigure(t) {
        const app = t.backend("");
        const provision = async (request) => ({ ...(await app.provision(request)), config: { thresholds: { eot_threshold: 0.8 } } });
        const transcriber = t.make({ protocol: "deepgram-flux", provision, policy: t.FAST });
        await transcriber.start();
        await t.until(async () => (await app.stats()).configures === 1, 3000, "Configure received");
        t.assertEq((await app.stats()).invalidMessages, 0, "nothing outside the schema");
        await transcriber.stop();
        transcriber.free();
      },
    },
  },
};
