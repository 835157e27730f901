// useVoiceSession: one turnguard VoiceSession per mounted component.
//
// - Created on mount, freed on unmount. Under <StrictMode> React mounts, unmounts and mounts again
//   in development: the first session is freed (its AudioContext closed, nothing reconnects) before
//   the second is made, so exactly one lives.
// - The browser lets audio play (and asks for the microphone) only after a user gesture: call
//   `start()` and `talk()` from a click. `start()` resumes the session's AudioContext in that click.
// - `makeOptions()` makes the session's options at each mount: after `init()`, whatever the
//   import order (openAiCompatibleRoute is a turnguard call too), and fresh for each session.

import { useCallback, useEffect, useRef, useState } from "react";
import { VoiceSession } from "turnguard";

export function useVoiceSession(makeOptions) {
  const make = useRef(makeOptions);
  make.current = makeOptions;
  const sessionRef = useRef(null);
  const [state, setState] = useState("idle");
  const [caption, setCaption] = useState("");
  const [answer, setAnswer] = useState({ turnId: null, text: "" });
  const [error, setError] = useState(null);

  useEffect(() => {
    const options = make.current();
    // A freed session still reports its last steps (`stopped`); under StrictMode they would land
    // in the state of the component's next session, which React keeps across the remount.
    let live = true;
    const mine = (callback) => (...args) => live && callback(...args);
    const session = new VoiceSession({
      ...options,
      onStateChange: mine((next) => {
        setState(next);
        options.onStateChange?.(next);
      }),
      onCaption: mine((text, isFinal) => {
        setCaption(text);
        options.onCaption?.(text, isFinal);
      }),
      onSpeech: mine((turnId, text, info) => {
        setAnswer((shown) => ({ turnId, text: shown.turnId === turnId ? `${shown.text} ${text}` : text }));
        options.onSpeech?.(turnId, text, info);
      }),
      onHeard: mine((turnId, heard) => {
        setAnswer((shown) => (shown.turnId === turnId ? { turnId, text: heard } : shown));
        options.onHeard?.(turnId, heard);
      }),
      onError: mine((failure) => {
        if (failure.terminal) setError(failure.code);
        options.onError?.(failure);
      }),
    });
    sessionRef.current = session;
    return () => {
      live = false;
      sessionRef.current = null;
      session.free(); // stops, releases the microphone and the session's AudioContext; idempotent
    };
  }, []);

  // From a click: the gesture lets the AudioContext run. Typed input only until talk().
  const start = useCallback(async () => {
    const session = sessionRef.current;
    if (!session) return;
    // resume() first, inside the click's user activation; the start needs no gesture.
    await Promise.all([session.resume(), session.start({ microphone: false })]);
  }, []);
  const talk = useCallback(() => sessionRef.current?.attachMicrophone(), []);
  const send = useCallback((text) => sessionRef.current?.sendText(text), []);
  const interrupt = useCallback(() => sessionRef.current?.interrupt(), []);
  const stop = useCallback(() => sessionRef.current?.stop(), []);

  return { state, caption, answer, error, start, talk, send, interrupt, stop };
}
