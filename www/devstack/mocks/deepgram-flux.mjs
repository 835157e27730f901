// Mock Deepgram Flux (`/v2/listen`, PROVIDERS.md) on the socket skeleton (ws_mock.mjs). The
// official `@deepgram/sdk` connects to it as `listen.v2` (www/sdk-deepgram-flux.test.mjs).
//
//   POST /v1/auth/grant   Deepgram's token endpoint, shared with listen v1 (devstack/mocks/deepgram.mjs)
//   WS   /v2/listen?...   auth: subprotocols ["bearer", <token>] or ["token", <key>], or an
//                         Authorization header; a bearer token must be granted and unexpired, else
//                         the handshake gets HTTP 401.
//
// As Flux does: binary PCM16 frames (an empty one: close 1008 `DATA-0000`); `Connected` first;
// `TurnInfo` messages: `StartOfTurn` when speech begins, `Update` for every 0.25 s of audio (an
// empty transcript between turns), `EagerEndOfTurn` (only with `eager_eot_threshold` in the URL)
// then `EndOfTurn` with the turn's transcript (`mock_eager_lead_ms` later, a mock-only knob), `turn_index` counting turns from 0; `Configure` is
// answered with `ConfigureSuccess`; `ForceEndTurn` ends the open turn at once; `CloseStream` ends
// the open turn and closes without a status (1005); a message outside the schema is an `Error`
// (`UNPARSABLE_CLIENT_MESSAGE`). No frame for the idle limit (10 s, as listen v1 — unconfirmed for
// v2): close 1011. At most 1.25x real time (a second of slack).

import deepgram from "./deepgram.mjs";
import { randomUUID } from "node:crypto";
import { seconds } from "../recognizers.mjs";

const UPDATE_EVERY_S = 0.25;

export default {
  counters: () => ({ bearer: 0, token: 0, emptyFrames: 0, forceEndTurns: 0, closeStreams: 0, configures: 0, eagerEnds: 0 }),
  idleMs: 10_000,
  pacing: { rate: 1.25, slackMs: 1000 },
  handleProtocols: deepgram.handleProtocols,
  httpError: deepgram.httpError,
  http: deepgram.http,
  authorize: deepgram.authorize,

  open(conn) {
    const requestId = randomUUID();
    const eager = conn.params.has("eager_eot_threshold");
    const eagerLeadMs = Number(conn.params.get("mock_eager_lead_ms") ?? 0);
    const state = { sequence: 0, turn: 0, inTurn: false, transcript: "", updatedAt: 0, forcing: false, closing: false };
    const send = (message) => conn.send({ ...message, sequence_id: state.sequence++ });
    const turnInfo = (event, transcript, end, index = state.turn) =>
      send({
        type: "TurnInfo",
        request_id: requestId,
        event,
        turn_index: index,
        audio_window_start: 0,
        audio_window_end: end,
        transcript,
        words: transcript ? transcript.split(" ").map((word) => ({ word, confidence: 0.9 })) : [],
        end_of_turn_confidence: event === "EndOfTurn" ? 0.9 : 0.1,
        ...(event === "EndOfTurn" ? { trigger: state.forcing ? "manual" : "model" } : {}),
      });
    const endTurn = (text, end) => {
      // A turn the client ends (ForceEndTurn, CloseStream) ends at once, with no eager guess.
      if (eager && !state.forcing) {
        conn.count("eagerEnds");
        turnInfo("EagerEndOfTurn", text, end);
        if (eagerLeadMs > 0) {
          // The eager guess leads its EndOfTurn, as Flux's does (mock-only knob).
          const index = state.turn;
          setTimeout(() => turnInfo("EndOfTurn", text, end, index), eagerLeadMs);
          state.turn += 1;
          state.inTurn = false;
          state.transcript = "";
          return;
        }
      }
      turnInfo("EndOfTurn", text, end);
      state.turn += 1;
      state.inTurn = false;
      state.transcript = "";
    };
    send({ type: "Connected", request_id: requestId });
    return {
      recognized(event) {
        switch (event.type) {
          case "speech_start":
            state.inTurn = true;
            return turnInfo("StartOfTurn", "", event.time);
          case "partial":
            state.inTurn = true;
            state.transcript = event.text;
            return turnInfo("Update", event.text, event.end);
          case "final":
            return endTurn(event.text, event.end);
          case "flushed":
            // ForceEndTurn or CloseStream: a turn still open ends with what it has.
            if (state.inTurn) endTurn(state.transcript, seconds(conn.received));
            state.forcing = false;
            return state.closing ? conn.close() : undefined;
          case "error":
            return conn.close(1011, "recognition failed");
          default:
            return undefined;
        }
      },
      binary(data) {
        if (data.length === 0) {
          conn.count("emptyFrames");
          return conn.close(1008, "DATA-0000");
        }
        if (state.closing || !conn.audio(data)) return undefined;
        const now = seconds(conn.received);
        if (!state.inTurn && now - state.updatedAt >= UPDATE_EVERY_S) {
          state.updatedAt = now;
          turnInfo("Update", "", now);
        }
        return undefined;
      },
      json(message) {
        switch (message?.type) {
          case "Configure":
            conn.count("configures");
            return send({ type: "ConfigureSuccess", request_id: requestId, thresholds: message.thresholds ?? {}, keyterms: [] });
          case "ForceEndTurn":
            conn.count("forceEndTurns");
            conn.count("finishes");
            state.forcing = true;
            return conn.recognizer?.flush();
          case "CloseStream":
            conn.count("closeStreams");
            conn.count("finishes");
            state.forcing = true;
            state.closing = true;
            return conn.recognizer?.flush();
          default:
            conn.count("invalidMessages");
            return send({ type: "Error", code: "UNPARSABLE_CLIENT_MESSAGE", description: "the message is outside the schema" });
        }
      },
      idle: () => conn.close(1011, "Deepgram did not receive audio data within the timeout window."),
    };
  },
};
