// What the provider mocks (deepgram.mjs, assemblyai.mjs) put behind their protocols: the real
// recognizer (pocketsphinx, through the speech engine that speech.mjs runs) or a scripted one
// whose words come from the audio itself, so a test can tell which audio was transcribed.
//
// Both take PCM16 16 kHz mono and report, in seconds of the audio they received:
//   { type: "speech_start", time }
//   { type: "partial", text, pending, start, end } the utterance so far (captions), and its part
//                                             not in a segment yet
//   { type: "segment", text, start, end, last } a finalized piece of the utterance (scripted only;
//                                             `last`: the utterance ends with it)
//   { type: "final", text, start, end, pieces } the utterance's end: its whole text, and how many
//                                             segments it had (0: none were reported)
//   { type: "speech_end", time }
//   { type: "flushed" }                        after flush(): everything received is transcribed
//   { type: "error" }                          the engine lost the session
// and have `{ audio(buffer), flush(), close() }`.

export const BYTES_PER_SECOND = 32000;

export const seconds = (bytes) => Math.round((bytes / BYTES_PER_SECOND) * 1000) / 1000;

/**
 * The scripted recognizer. Every `segmentBytes` of audio (default 16000, half a second) is one
 * word, `w<N>` where N is the first four bytes of the segment read as a little-endian number (the
 * browser tests number their frames so); `wordsPerUtterance` words (default 2) make an utterance.
 * A partial comes at half of each word. `flush()` ends a word and an utterance under way.
 */
export function scriptedRecognizer({ segmentBytes = 16000, wordsPerUtterance = 2 } = {}, onEvent) {
  let received = 0;
  let segmentStart = 0;
  let segment = [];
  let segmentLength = 0;
  let words = [];
  let utteranceStart = 0;
  let partialSent = false;

  const wordOf = (chunks) => {
    const head = Buffer.concat(chunks).subarray(0, 4);
    return head.length === 4 ? `w${head.readUInt32LE(0)}` : "w";
  };

  function endSegment(final) {
    const word = wordOf(segment);
    const end = seconds(segmentStart + segmentLength);
    words.push(word);
    const last = final || words.length >= wordsPerUtterance;
    onEvent({ type: "segment", text: word, start: seconds(segmentStart), end, last });
    if (last) {
      onEvent({ type: "final", text: words.join(" "), start: seconds(utteranceStart), end, pieces: words.length });
      onEvent({ type: "speech_end", time: end });
      words = [];
    }
    segmentStart += segmentLength;
    segment = [];
    segmentLength = 0;
    partialSent = false;
  }

  return {
    audio(buffer) {
      let rest = buffer;
      while (rest.length > 0) {
        if (segmentLength === 0 && words.length === 0) {
          utteranceStart = segmentStart;
          onEvent({ type: "speech_start", time: seconds(segmentStart) });
        }
        const take = Math.min(rest.length, segmentBytes - segmentLength);
        segment.push(rest.subarray(0, take));
        segmentLength += take;
        received += take;
        rest = rest.subarray(take);
        if (!partialSent && segmentLength * 2 >= segmentBytes) {
          partialSent = true;
          const pending = wordOf(segment);
          const text = [...words, pending].join(" ");
          onEvent({ type: "partial", text, pending, start: seconds(utteranceStart), end: seconds(received) });
        }
        if (segmentLength === segmentBytes) endSegment(false);
      }
    },
    flush() {
      if (segmentLength > 0) endSegment(true);
      else if (words.length > 0) {
        const end = seconds(segmentStart);
        onEvent({ type: "final", text: words.join(" "), start: seconds(utteranceStart), end, pieces: words.length });
        onEvent({ type: "speech_end", time: end });
        words = [];
      }
      onEvent({ type: "flushed" });
    },
    close() {},
  };
}

/**
 * A recognizer as `params` ask: `recognizer=speech` for pocketsphinx through `speech` (the dev
 * stack's speech STT), anything else for the scripted one (`segment_ms`, `words_per_utterance`).
 * Resolves to the recognizer, or rejects when pocketsphinx is not installed.
 */
export async function openRecognizer(params, speech, onEvent) {
  if (params.get("recognizer") === "speech") {
    const engine = await speech.openRecognizer((event) => onEvent(event.type === "final" ? { ...event, pieces: 0 } : event));
    return engine;
  }
  const segmentMs = intParam(params, "segment_ms", 500, 10, 60_000);
  const words = intParam(params, "words_per_utterance", 2, 1, 1000);
  return scriptedRecognizer({ segmentBytes: Math.round((segmentMs / 1000) * BYTES_PER_SECOND / 2) * 2, wordsPerUtterance: words }, onEvent);
}

/** A whole number from `params`, clamped, or `fallback`. */
export function intParam(params, name, fallback, min = 0, max = Number.MAX_SAFE_INTEGER) {
  const raw = params.get(name);
  if (raw === null || raw === "") return fallback;
  const value = Number(raw);
  return Number.isFinite(value) ? Math.min(max, Math.max(min, Math.trunc(value))) : fallback;
}
