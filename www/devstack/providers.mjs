// The provider mocks the dev stack mounts through one interface, so a new STT provider is its mock
// file and one line here: each entry names the mock, its HTTP path (the backend's token call), its
// socket path and switches, and how to make it. A mock made by `create(ctx)` has
// `{ handleHttp(req, res, url), handleUpgrade(req, socket, head, url), close(), stats(), reset() }`.
// (Deepgram and AssemblyAI predate this list and are mounted by devstack.mjs itself.)

import { createSonioxMock, matchSonioxKeyPath, matchSonioxSocketPath, SONIOX_SWITCHES } from "./soniox.mjs";
import { createSpeechmaticsMock, matchSpeechmaticsKeyPath, matchSpeechmaticsSocketPath, SPEECHMATICS_SWITCHES } from "./speechmatics.mjs";
import { createElevenLabsMock, ELEVENLABS_SWITCHES, matchElevenLabsSocketPath, matchElevenLabsTokenPath } from "./elevenlabs.mjs";
import { createOpenAiMock, matchOpenAiSecretPath, matchOpenAiSocketPath, OPENAI_SWITCHES } from "./openai.mjs";

export const PROVIDER_MOCKS = Object.freeze([
  {
    name: "openai",
    service: { path: "/v1/realtime/client_secrets", socket: "/v1/realtime?intent=transcription (subprotocols realtime, openai-insecure-api-key.<ek>)", switches: OPENAI_SWITCHES },
    matchHttp: matchOpenAiSecretPath,
    matchSocket: matchOpenAiSocketPath,
    create: createOpenAiMock,
  },
  {
    name: "speechmatics",
    service: { path: "/v1/api_keys?type=rt", socket: "/v2?jwt=<key>", switches: SPEECHMATICS_SWITCHES },
    matchHttp: matchSpeechmaticsKeyPath,
    matchSocket: matchSpeechmaticsSocketPath,
    create: createSpeechmaticsMock,
  },
  {
    name: "soniox",
    service: { path: "/v1/auth/temporary-api-key", socket: "/transcribe-websocket (api_key in the first message)", switches: SONIOX_SWITCHES },
    matchHttp: matchSonioxKeyPath,
    matchSocket: matchSonioxSocketPath,
    create: createSonioxMock,
  },
  {
    name: "elevenlabs",
    service: { path: "/v1/single-use-token/realtime_scribe", socket: "/v1/speech-to-text/realtime?token=<single-use token>", switches: ELEVENLABS_SWITCHES },
    matchHttp: matchElevenLabsTokenPath,
    matchSocket: matchElevenLabsSocketPath,
    create: createElevenLabsMock,
  },
]);
