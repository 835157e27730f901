"""Local speech recognition for the dev stack's live STT (www/devstack/speech.mjs).

One process serves every live session of the dev stack. It reads JSON lines on stdin and writes
JSON lines on stdout, each tagged with the session number Node gave it:

  in:  {"op": "open", "id": 1}
       {"op": "audio", "id": 1, "pcm": "<base64 PCM16 LE mono 16 kHz>"}
       {"op": "flush", "id": 1}      end of the recording: finish the utterance in progress
       {"op": "close", "id": 1}
  out: {"type": "ready"}             once, when the model is loaded
       {"id": 1, "type": "speech_start", "time": 0.42}
       {"id": 1, "type": "partial", "text": "what is", "start": 0.42, "end": 1.2}
       {"id": 1, "type": "final", "text": "what is the weather", "start": 0.42, "end": 2.1}
       {"id": 1, "type": "speech_end", "time": 2.1}
       {"id": 1, "type": "flushed"}

An endpointer over pocketsphinx 5's voice activity detector (WebRTC VAD) finds where speech starts
and ends; its Decoder, with the US-English model shipped in the wheel, turns each utterance into
text. Times are seconds of audio received by the session, like Gladia's. Nothing said is ever
logged.

`stt_engine.py --phrases FILE` decodes with a grammar of FILE's phrases (one a line) instead of
the general language model: a recognizer that knows what may be said, as the room's script does.
The general model writes espeak-ng's short words as others ("okay" as "eight" or "a"), where a
provider's model hears them; the grammar hears "okay" as itself, though rarely a lone British
"stop" (docs/maintainers/performance.md, "The recognizer's words, not the rule"). Phrases with a
word the dictionary lacks are left out (their count goes to stderr, never their words).
"""

import base64
import json
import re
import signal
import sys
from collections import deque

from pocketsphinx import Decoder, Vad

SAMPLE_RATE = 16000
# Seconds of audio between two partial hypotheses: often enough for live captions, rarely
# enough to keep the decoder's search cheap.
PARTIAL_EVERY_S = 0.3


class Endpointer:
    """Where speech starts and ends: pocketsphinx's voice activity detector over the last 0.3 s of
    30 ms frames. pocketsphinx's own Endpointer asks 90 % of the window to be voiced to start, which
    misses a lone "stop" (about 200 ms of voice) said over the agent's answer, where a provider
    hears it; this one starts at half the window voiced and, like pocketsphinx's, ends at 90 %
    unvoiced, so a question's pauses between words do not split it."""

    WINDOW_S = 0.3
    START_RATIO = 0.5
    END_RATIO = 0.9

    def __init__(self, sample_rate):
        self.vad = Vad(Vad.STRICT, sample_rate)
        self.frame_bytes = self.vad.frame_bytes
        self.frame_length = self.vad.frame_length
        self.size = round(self.WINDOW_S / self.frame_length)
        self.window = deque(maxlen=self.size)  # (frame, voiced) of the last frames
        self.frames = 0
        self.in_speech = False
        self.speech_start = 0.0
        self.speech_end = 0.0

    def process(self, frame):
        """Takes one frame; returns the speech to decode (the whole window when speech starts), or
        None outside speech."""
        self.frames += 1
        voiced = self.vad.is_speech(frame)
        self.window.append((frame, voiced))
        now = self.frames * self.frame_length
        if not self.in_speech:
            if sum(v for _, v in self.window) < self.START_RATIO * self.size:
                return None
            self.in_speech = True
            self.speech_start = now - len(self.window) * self.frame_length
            speech = b"".join(f for f, _ in self.window)
            self.window.clear()
            return speech
        if len(self.window) == self.size and sum(not v for _, v in self.window) >= self.END_RATIO * self.size:
            self.in_speech = False
            self.speech_end = now - self.size * self.frame_length
            self.window.clear()
        return frame

    def end_stream(self, tail):
        """The last (padded) frame of a recording; speech in progress ends with it."""
        speech = self.process((tail + bytes(self.frame_bytes))[: self.frame_bytes])
        if self.in_speech:
            self.in_speech = False
            self.speech_end = self.frames * self.frame_length
        return speech


def emit(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def phrase_grammar(lines, known):
    """A JSGF grammar whose utterance is any one of `lines` (lowercased, punctuation dropped), less
    the phrases with a word `known(word)` rejects; returns (grammar, its phrases, how many were
    left out)."""
    phrases, left_out = set(), 0
    for line in lines:
        words = re.sub(r"[^a-z' ]+", " ", line.lower()).split()
        if not words:
            continue
        if all(known(word) for word in words):
            phrases.add(" ".join(words))
        else:
            left_out += 1
    choices = " | ".join(f"( {phrase} )" for phrase in sorted(phrases))
    return f"#JSGF V1.0;\ngrammar script;\npublic <utterance> = {choices} ;\n", phrases, left_out


def new_decoder(phrases):
    """A decoder, and the phrases its grammar accepts (None: the general language model)."""
    # FSG search logs an error when an utterance ends inside a phrase: that is not ours to report.
    decoder = Decoder(samprate=SAMPLE_RATE, loglevel="FATAL" if phrases else "ERROR")
    if not phrases:
        return decoder, None
    grammar, accepted, left_out = phrase_grammar(phrases, decoder.lookup_word)
    if left_out:
        sys.stderr.write(f"stt_engine: {left_out} phrases with words the dictionary lacks left out\n")
    decoder.add_jsgf_string("script", grammar)
    decoder.activate_search("script")
    return decoder, accepted


class Session:
    """One live session: an endpointer, a decoder, and the audio not yet framed."""

    def __init__(self, session_id, phrases):
        self.id = session_id
        self.endpointer = Endpointer(SAMPLE_RATE)
        self.decoder, self.accepted = new_decoder(phrases)
        self.pending = b""
        self.received = 0  # bytes, for the time of partials
        self.in_utterance = False
        self.last_partial = ""
        self.since_partial = 0.0

    def audio(self, pcm):
        self.received += len(pcm)
        self.pending += pcm
        size = self.endpointer.frame_bytes
        while len(self.pending) >= size:
            frame, self.pending = self.pending[:size], self.pending[size:]
            self.frame(self.endpointer.process(frame))

    def frame(self, speech, final_frame=False):
        """Feeds one frame the endpointer passed on (None: silence outside an utterance)."""
        if speech is None:
            return
        if not self.in_utterance:
            self.in_utterance = True
            self.decoder.start_utt()
            self.last_partial = ""
            self.since_partial = 0.0
            emit({"id": self.id, "type": "speech_start", "time": round(self.endpointer.speech_start, 3)})
        self.decoder.process_raw(speech)
        if self.endpointer.in_speech and not final_frame:
            self.partial(len(speech) / 2 / SAMPLE_RATE)
        else:
            self.finish()

    def partial(self, seconds):
        self.since_partial += seconds
        if self.since_partial < PARTIAL_EVERY_S:
            return
        self.since_partial = 0.0
        hyp = self.decoder.hyp()
        text = hyp.hypstr if hyp else ""
        if text and text != self.last_partial:
            self.last_partial = text
            emit({"id": self.id, "type": "partial", "text": text, "start": self.start(), "end": self.now()})

    def finish(self):
        self.in_utterance = False
        self.decoder.end_utt()
        hyp = self.decoder.hyp()
        text = hyp.hypstr if hyp else ""
        end = round(self.endpointer.speech_end, 3)
        emit({"id": self.id, "type": "speech_end", "time": end})
        # Noise the VAD took for speech decodes to nothing: no transcript for it. With a grammar,
        # the search's last word can end inside a phrase (its trailing silence unmatched) where its
        # last partial was the whole phrase: that phrase is the utterance; a part of one is noise.
        if self.accepted is not None and text not in self.accepted:
            text = self.last_partial if self.last_partial in self.accepted else ""
        if text:
            emit({"id": self.id, "type": "final", "text": text, "start": self.start(), "end": end})

    def flush(self):
        # end_stream pads the last partial frame and closes an utterance in progress.
        # (end_stream cannot take an empty buffer: a frame's worth of silence stands in.)
        tail = self.pending or bytes(self.endpointer.frame_bytes)
        speech = self.endpointer.end_stream(tail)
        self.pending = b""
        if speech is not None:
            self.frame(speech, final_frame=True)
        elif self.in_utterance:
            self.finish()
        emit({"id": self.id, "type": "flushed"})

    def start(self):
        return round(self.endpointer.speech_start, 3)

    def now(self):
        return round(self.received / 2 / SAMPLE_RATE, 3)


def main():
    # Ctrl-C reaches the whole process group: the dev stack stops this process itself (stdin
    # closes, or SIGTERM), so the interrupt is not ours to act on.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    phrases = None
    if len(sys.argv) == 3 and sys.argv[1] == "--phrases":
        with open(sys.argv[2], encoding="utf-8") as file:
            phrases = file.read().splitlines()
    sessions = {}
    # Loading the model once up front makes the first session start as fast as the others.
    new_decoder(phrases)
    emit({"type": "ready"})
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        op, session_id = message.get("op"), message.get("id")
        if op == "open":
            sessions[session_id] = Session(session_id, phrases)
        elif op == "close":
            sessions.pop(session_id, None)
        elif session_id in sessions:
            try:
                if op == "audio":
                    sessions[session_id].audio(base64.b64decode(message.get("pcm", "")))
                elif op == "flush":
                    sessions[session_id].flush()
            except Exception as error:  # one broken session must not end the others
                sys.stderr.write(f"stt_engine: session {session_id}: {type(error).__name__}\n")
                sessions.pop(session_id, None)
                emit({"id": session_id, "type": "error"})


if __name__ == "__main__":
    main()
