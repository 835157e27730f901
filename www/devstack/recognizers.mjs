// What the protocol mocks put behind their protocols: the real recognizer (pocketsphinx, through
// engine.mjs) or a scripted one whose words come from the audio itself, so a test can tell which
// audio was transcribed.
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
//
// Which one, from a mock's switches:
//   recognizer=speech          pocketsphinx
//   recognizer=count           "utterance N": one word an utterance of `segment_ms` (default 1000),
//                              the partial "utterance" at its half (the chaos soak's and Gladia's
//                              scripted mock's words: a partial long enough to barge in with)
//   recognizer=frames (else)   `w<N>` per `segment_ms` (default 500), `words_per_utterance` (2)
//   segment_bytes=N            the segment in bytes instead of `segment_ms`
//   max_utterances=N           audio after the N-th utterance is silence

export const BYTES_PER_SECOND = 32000;

export const seconds = (bytes) => Math.round((bytes / BYTES_PER_SECOND) * 1000) / 1000;

/**
 * The scripted recognizer. Every `segmentBytes` of audio is one word: `w<N>`, N the first four bytes
 * of the segment read as a little-endian number (the browser tests number their frames so), or
 * with `count`, "utterance <k>" (its partial: "utterance"). `wordsPerUtterance` words make an
 * utterance. A partial comes at half of each word. `flush()` ends a word and an utterance under way.
 */
export function scriptedRecognizer({ segmentBytes = 16000, wordsPerUtterance = 2, count = false, maxUtterances = Infinity } = {}, onEvent) {
  let received = 0;
  let segmentStart = 0;
  let segment = [];
  let segmentLength = 0;
  let words = [];
  let utteranceStart = 0;
  let partialSent = false;
  let utterances = 0;

  const wordOf = (chunks, final) => {
    if (count) return final ? `utterance ${utterances + 1}` : "utterance";
    const head = Buffer.concat(chunks).subarray(0, 4);
    return head.length === 4 ? `w${head.readUInt32LE(0)}` : "w";
  };

  function endUtterance(end) {
    onEvent({ type: "final", text: words.join(" "), start: seconds(utteranceStart), end, pieces: words.length });
    onEvent({ type: "speech_end", time: end });
    words = [];
    utterances += 1;
  }

  function endSegment(final) {
    const word = wordOf(segment, true);
    const end = seconds(segmentStart + segmentLength);
    words.push(word);
    const last = final || words.length >= wordsPerUtterance;
    onEvent({ type: "segment", text: word, start: seconds(segmentStart), end, last });
    if (last) endUtterance(end);
    segmentStart += segmentLength;
    segment = [];
    segmentLength = 0;
    partialSent = false;
  }

  return {
    audio(buffer) {
      let rest = buffer;
      while (rest.length > 0) {
        if (utterances >= maxUtterances) {
          received += rest.length;
          segmentStart += rest.length;
          return;
        }
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
          const pending = wordOf(segment, false);
          const text = [...words, pending].join(" ");
          onEvent({ type: "partial", text, pending, start: seconds(utteranceStart), end: seconds(received) });
        }
        if (segmentLength === segmentBytes) endSegment(false);
      }
    },
    flush() {
      if (segmentLength > 0) endSegment(true);
      else if (words.length > 0) endUtterance(seconds(segmentStart));
      onEvent({ type: "flushed" });
    },
    close() {},
  };
}

/**
 * A recognizer as `params` ask (see the top of this file), `engine` (engine.mjs) for the real one.
 * Resolves to the recognizer, or rejects when pocketsphinx is not installed.
 */
export async function openRecognizer(params, engine, onEvent) {
  const kind = params.get("recognizer");
  if (kind === "speech") {
    return engine.open((event) => onEvent(event.type === "final" ? { ...event, pieces: 0 } : event));
  }
  const count = kind === "count";
  const segmentMs = intParam(params, "segment_ms", count ? 1000 : 500, 10, 60_000);
  const bytes = intParam(params, "segment_bytes", Math.round(((segmentMs / 1000) * BYTES_PER_SECOND) / 2) * 2, 2, 1 << 30);
  return scriptedRecognizer(
    {
      segmentBytes: bytes,
      wordsPerUtterance: count ? 1 : intParam(params, "words_per_utterance", 2, 1, 1000),
      count,
      maxUtterances: intParam(params, "max_utterances", Infinity),
    },
    onEvent,
  );
}

/**
 * A recognizer that is still opening: audio, flushes and the close wait for it, in order. `failed`
 * runs when it cannot open.
 */
export function recognizerSlot(opening, failed = () => {}) {
  let recognizer = null;
  let closed = false;
  const queue = [];
  const run = (action) => (recognizer ? action(recognizer) : queue.push(action));
  const ready = opening.then(
    (opened) => {
      recognizer = opened;
      if (closed) return opened.close();
      for (const action of queue.splice(0)) action(opened);
      return undefined;
    },
    () => {
      if (!closed) failed();
    },
  );
  return {
    ready,
    audio: (buffer) => run((r) => r.audio(buffer)),
    flush: () => run((r) => r.flush()),
    close() {
      if (closed) return;
      closed = true;
      if (recognizer) recognizer.close();
      queue.length = 0;
    },
  };
}

/** A whole number from `params`, clamped, or `fallback`. */
export function intParam(params, name, fallback, min = 0, max = Number.MAX_SAFE_INTEGER) {
  const raw = params.get(name);
  if (raw === null || raw === "") return fallback;
  const value = Number(raw);
  return Number.isFinite(value) ? Math.min(max, Math.max(min, Math.trunc(value))) : fallback;
}
