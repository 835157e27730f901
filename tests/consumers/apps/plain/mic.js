// The microphone under `script-src 'self' 'wasm-unsafe-eval'`: the capture worklet loads from the
// package's own file on this origin (`workletUrl`), and frames reach the dev stack's mock STT.
// With `?worklet=none` no `workletUrl` is given: Chromium's track processor needs no worklet, so
// frames flow under this CSP all the same. With `?worklet=blob` the track processor is taken
// away, so the zero-config blob: worklet is used, which this CSP blocks: that must come to
// onError as turnguard's `worklet_blocked`.
import init, { LiveTranscriber } from "./node_modules/turnguard/turnguard.js";
import { llmFromPage, report } from "./turn.js";

const WORKLET_URL = new URL("./node_modules/turnguard/capture-worklet.js", import.meta.url).href;
const params = new URL(location.href).searchParams;

async function capture() {
  await init();
  const errors = [];
  const stt = new URL("/v2/live", llmFromPage()).href;
  const transcriber = new LiveTranscriber({
    provision: async ({ signal }) => (await fetch(stt, { method: "POST", signal, body: "{}" })).json(),
    onError: (error) => errors.push({ code: error.code, message: error.message }),
  });
  await transcriber.start();
  let attach = null;
  try {
    const worklet = params.get("worklet");
    if (worklet === "blob") window.MediaStreamTrackProcessor = undefined;
    if (worklet === "blob" || worklet === "none") await transcriber.attachMicrophone();
    else await transcriber.attachMicrophone({ workletUrl: WORKLET_URL });
  } catch (error) {
    attach = { name: error.name, code: error.code, message: error.message };
  }
  // 20 ms frames: wait for a quarter second of audio (or give up after 5 s).
  for (let waited = 0; waited < 5000 && transcriber.stats.framesSent < 12 && !attach; waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const framesSent = transcriber.stats.framesSent;
  await transcriber.stop();
  transcriber.free();
  return { attach, errors, framesSent };
}

report(capture());
