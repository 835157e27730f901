// The one place the demo page loads turnguard. demo.mjs imports this module dynamically, so a
// missing or broken pkg/ rejects that import (and the page says so) instead of breaking the page.

import init, { LiveTranscriber, openAiCompatibleRoute, ReconnectPolicy, TurnController, VoiceSession } from "/pkg/turnguard.js";

await init();

export { LiveTranscriber, openAiCompatibleRoute, ReconnectPolicy, TurnController, VoiceSession };
