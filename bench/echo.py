"""The echo measurement behind VoiceSession's barge-in defaults (V4): `npm run echo` (or
`.venv/bin/python bench/echo.py [answers] [seed]`).

The agent's own answers, spoken by espeak-ng, reach the real recognizer of the dev stack (the
pocketsphinx session of www/devstack/stt_engine.py, driven here in-process, 20 ms at a time) the
way an echo through laptop speakers does: attenuated and 20-80 ms late, over a faint noise floor.
Each recognizer event is stamped with the audio position at which it was emitted, so "when" is
audio time, exact and repeatable (no wall clock). The session's barge-in rule is then replayed
on the events for each candidate (minPartialChars, echoGuardMs):

  - while the agent speaks, a speech_start at least echoGuardMs after the playback start, a
    partial of at least minPartialChars at least echoGuardMs after it, or any final, cuts it;
  - a self-interruption is such a cut by the echo alone;
  - a real interruption is a different espeak-ng voice saying "stop" or "wait a moment" over
    the same echo: its delay is from the user's first sound to the first cut after it.

Prints a table per echo level and writes bench/echo.json.
"""

import json
import math
import os
import random
import subprocess
import sys
from array import array

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "www", "devstack"))
import stt_engine  # noqa: E402  (the dev stack's own recognizer session)

RATE = 16000
FRAME = 320  # 20 ms of samples: what a capture worklet sends
AGENT_VOICE = "en-us"
USER_VOICE = "en-gb+f3"
USER_WORDS = ["stop", "wait a moment"]
# Echo models: what of the agent's voice reaches the microphone, as a gain over time from the
# start of its playback. A constant residual below and above the recognizer's VAD threshold
# (found at about -25 dB: 0.055 never triggered it, 0.06 did), and an echo canceller that
# converges after each playback start (browsers' getUserMedia echoCancellation, which turnguard's
# microphone asks for): -10 dB at the first syllable, decaying with a 150 ms time constant to
# -30 dB. The guard exists for the last one.
MODELS = {
    "constant -26 dB": lambda t: 0.05,
    "constant -20 dB": lambda t: 0.1,
    "converging canceller": lambda t: 0.03 + 0.29 * math.exp(-t / 0.15),
}
# (minPartialChars, echoGuardMs, what the guard covers): speech starts and partials (V4), or
# short finals as well (a final under minPartialChars characters inside the guard is echo).
CANDIDATES = [(m, g, rule) for rule in ("starts+partials", "+short finals") for m in (1, 4, 8, 12, 16) for g in (0, 250, 500, 750, 1000, 1250, 1500)]
if os.environ.get("ECHO_MODELS"):
    MODELS = {name: MODELS[name] for name in os.environ["ECHO_MODELS"].split(",")}
if os.environ.get("ECHO_CANDIDATES"):  # e.g. "12:1000:+short finals;16:1500:+short finals"
    CANDIDATES = [(int(m), int(g), rule) for m, g, rule in (c.split(":") for c in os.environ["ECHO_CANDIDATES"].split(";"))]

SUBJECTS = ["the weather", "your order", "the meeting", "the train", "the forecast", "your account", "the recipe", "the flight"]
OPENINGS = [
    "It is sunny today with a light breeze from the west.",
    "Your order shipped this morning and should arrive on Thursday.",
    "The meeting moved to three o'clock in the small room.",
    "The next train leaves at ten past nine from platform four.",
    "I found two recipes that use what you have at home.",
    "Your flight is on time and boarding starts at gate twelve.",
    "Tomorrow looks cloudy with some rain in the afternoon.",
    "I have added the reminder to your calendar.",
]
FOLLOWS = [
    "Take an umbrella in case it changes later.",
    "Would you like me to send you the tracking number?",
    "I can tell the others if you want.",
    "There is a quieter one twenty minutes after that.",
    "The first one takes about half an hour to make.",
    "Remember to bring your passport and your boarding pass.",
    "Let me know if you want more details about {s}.",
    "Is there anything else you would like to know about {s}?",
]


def speak(text, voice):
    """PCM16 mono 16 kHz samples of espeak-ng saying `text` (text on stdin, never argv)."""
    wav = subprocess.run(["espeak-ng", "-v", voice, "--stdout"], input=text.encode(), capture_output=True, check=True).stdout
    raw = subprocess.run(
        ["sox", "-t", "wav", "-", "-t", "raw", "-r", str(RATE), "-e", "signed", "-b", "16", "-c", "1", "-"],
        input=wav,
        capture_output=True,
        check=True,
    ).stdout
    return array("h", raw)


def mix(length, parts, rng):
    """`parts` = [(samples, offset, gain)] over a noise floor of about -60 dBFS; `gain` is a
    number or a function of the seconds since the part began."""
    out = [rng.randint(-30, 30) for _ in range(length)]
    for samples, offset, gain in parts:
        gains = [gain(i / RATE) for i in range(len(samples))] if callable(gain) else None
        for i, sample in enumerate(samples):
            j = offset + i
            if 0 <= j < length:
                out[j] += int(sample * (gains[i] if gains else gain))
    return array("h", (max(-32768, min(32767, v)) for v in out))


def recognize(samples):
    """Events of the dev stack's recognizer session, each with the audio second it came out at."""
    events = []
    session = stt_engine.Session(1)
    original = stt_engine.emit
    stt_engine.emit = lambda message: events.append(dict(message, at=session.received / 2 / RATE))
    try:
        pcm = samples.tobytes()
        for i in range(0, len(pcm), FRAME * 2):
            session.audio(pcm[i : i + FRAME * 2])
        session.flush()
    finally:
        stt_engine.emit = original
    return [e for e in events if e["type"] in ("speech_start", "partial", "final")]


def cuts(events, start, end, min_chars, guard_ms, rule):
    """Audio seconds at which the session would cut an answer playing from `start` to `end`."""
    out = []
    for e in events:
        at = e["at"]
        if not start <= at < end:
            continue
        guarded = at < start + guard_ms / 1000
        short = len(e.get("text", "").strip()) < min_chars
        if e["type"] == "final":
            cut = not (rule == "+short finals" and guarded and short)
        elif e["type"] == "partial":
            cut = not guarded and not short
        else:
            cut = not guarded
        if cut:
            out.append((at, e["type"]))
    return out


def main():
    answers = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    rng = random.Random(seed)
    stt_engine.Decoder(samprate=RATE, loglevel="ERROR")  # load the model once up front
    users = {words: speak(words, USER_VOICE) for words in USER_WORDS}
    lead = RATE  # one second of listening before the agent speaks
    results = {}
    for level, gain in MODELS.items():
        self_cuts = {c: 0 for c in CANDIDATES}
        causes = {c: {} for c in CANDIDATES}
        delays = {c: [] for c in CANDIDATES}
        missed = {c: 0 for c in CANDIDATES}
        phantom = 0
        for n in range(answers):
            sentences = [rng.choice(OPENINGS), rng.choice(FOLLOWS).format(s=rng.choice(SUBJECTS))]
            # One synthesis per sentence, played back to back (gapless), as the session does.
            chunks = [speak(sentence, AGENT_VOICE) for sentence in sentences]
            agent = chunks[0] + chunks[1]
            delay = int(rng.uniform(0.020, 0.080) * RATE)
            start, end = lead / RATE, (lead + len(agent)) / RATE
            length = lead + len(agent) + delay + RATE
            echo = recognize(mix(length, [(agent, lead + delay, gain)], rng))
            # A final of the echo after the answer ended would be a turn of its own.
            phantom += sum(1 for e in echo if e["type"] == "final" and e["at"] >= end)
            for c in CANDIDATES:
                found = cuts(echo, start, end, *c)
                if found:
                    self_cuts[c] += 1
                    cause = found[0][1]
                    causes[c][cause] = causes[c].get(cause, 0) + 1
            # The user talks over the same answer.
            words = rng.choice(USER_WORDS)
            onset = lead + int(rng.uniform(0.8, 1.6) * RATE)
            both = recognize(mix(length, [(agent, lead + delay, gain), (users[words], onset, 1.0)], rng))
            for c in CANDIDATES:
                after = [at for at, _ in cuts(both, start, end, *c) if at >= onset / RATE]
                before = [at for at, _ in cuts(both, start, end, *c) if at < onset / RATE]
                if before:
                    continue  # already cut by the echo: counted above
                if after:
                    delays[c].append((after[0] - onset / RATE) * 1000)
                else:
                    missed[c] += 1
            print(f"level {level}: answer {n + 1}/{answers}", file=sys.stderr, end="\r")
        rows = []
        for c in CANDIDATES:
            d = sorted(delays[c])
            rows.append(
                {
                    "minPartialChars": c[0],
                    "echoGuardMs": c[1],
                    "guardCovers": c[2],
                    "selfInterruptionsPer100": round(100 * self_cuts[c] / answers, 1),
                    "selfCauses": causes[c],
                    "userDelayMedianMs": round(d[len(d) // 2]) if d else None,
                    "userDelayP90Ms": round(d[int(len(d) * 0.9)]) if d else None,
                    "userMissed": missed[c],
                    "userMeasured": len(d),
                }
            )
        results[level] = {"answers": answers, "phantomEchoTurnsPer100": round(100 * phantom / answers, 1), "rows": rows}
        print(f"\necho {level}: {answers} answers, echo finals after the answer: {phantom}", file=sys.stderr)
        print(f"  {'guard covers':>15} {'minPartialChars':>15} {'echoGuardMs':>11} {'self-cuts/100':>13} {'user delay median':>17} {'p90':>6} {'missed':>6}  causes")
        for r in rows:
            print(
                f"  {r['guardCovers']:>15} {r['minPartialChars']:>15} {r['echoGuardMs']:>11} {r['selfInterruptionsPer100']:>13} "
                f"{str(r['userDelayMedianMs']):>17} {str(r['userDelayP90Ms']):>6} {r['userMissed']:>6}  {r['selfCauses']}"
            )
    with open(os.environ.get("ECHO_OUT", os.path.join(os.path.dirname(os.path.abspath(__file__)), "echo.json")), "w") as out:
        json.dump({"seed": seed, "agentVoice": AGENT_VOICE, "userVoice": USER_VOICE, "models": results}, out, indent=1)


if __name__ == "__main__":
    main()
