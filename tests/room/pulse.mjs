// The room: a private PulseAudio daemon (its own XDG_RUNTIME_DIR, never another run's) with
//
//   room     a null sink of three channels on one clock (aux0, aux1, aux2), 48 kHz float
//   speaker  a remap sink onto room's aux0: the default output, where the page's audio plays
//   air      a remap sink onto aux1: what a microphone in the room hears
//   user     a remap sink onto aux1 and aux2 at once: the user's voice sounds in the air and,
//            alone, on aux2 (a probe, so the user's first sound is exact on the room's clock)
//   loopback speaker.monitor → air, `delayMs` late (module-loopback's latency_msec) and `echoDb`
//            down (its sink input's volume)
//   mic      a remap source of aux1: the default input. Chromium lists no monitor source as a
//            microphone, so the microphone is this remap of the air.
//
// and a recorder (parec) on room.monitor: one recording that carries the speaker, the air and the
// user side by side, sample-aligned, as a level envelope (signal.mjs) with its samples mapped to the
// wall clock. Nothing here is simulated: Chromium's audio goes through this daemon.

import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { AIR, CHANNELS, Envelope, FRAME_SAMPLES, RATE, SPEAKER, delayAndGain } from "./signal.mjs";

const run = promisify(execFile);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// The page stamps its events with Date.now(): the same clock here.
const wallNow = () => Date.now();

/** Why the room cannot be built here, or null when PulseAudio's daemon and tools are installed. */
export async function roomToolsMissing() {
  const missing = [];
  for (const tool of ["pulseaudio", "pactl", "paplay", "parec"]) {
    try {
      await run("sh", ["-c", `command -v ${tool}`]);
    } catch {
      missing.push(tool);
    }
  }
  return missing.length > 0 ? `${missing.join(", ")} not installed (npm run bootstrap installs pulseaudio)` : null;
}

/**
 * Starts the daemon, builds the room and starts recording. `echoDb` (≤ 0) and `delayMs` set the
 * loopback. Resolves to the room; `close()` ends the recorder and the daemon and removes the folder.
 */
export async function startRoom({ echoDb, delayMs, log = () => {} }) {
  const dir = mkdtempSync(path.join(tmpdir(), "turnguard-room-"));
  const socket = path.join(dir, "native");
  // HOME too: the daemon and its clients keep their state (cookie, databases) under it.
  const env = { ...process.env, XDG_RUNTIME_DIR: dir, HOME: dir, PULSE_SERVER: `unix:${socket}` };
  delete env.PULSE_SINK;
  delete env.PULSE_SOURCE;
  // Not daemonized: it is this process's child, ended by its pid. With no client left (this
  // process gone) it exits by itself after 10 s.
  const daemon = spawn(
    "pulseaudio",
    ["-n", "--daemonize=no", "--exit-idle-time=10", "--realtime=no", "--log-target=stderr", "--log-level=error", `--load=module-native-protocol-unix auth-anonymous=1 socket=${socket}`],
    { env, stdio: ["ignore", "ignore", "pipe"] },
  );
  let daemonErrors = "";
  daemon.stderr.on("data", (data) => (daemonErrors = (daemonErrors + data).slice(-2000)));
  const exited = new Promise((resolve) => daemon.once("exit", resolve));
  const pactl = async (...args) => (await run("pactl", args, { env })).stdout.trim();

  let recorder = null;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    recorder?.stop();
    if (daemon.exitCode === null && daemon.signalCode === null) {
      daemon.kill("SIGTERM");
      await Promise.race([exited, sleep(3000)]);
      if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill("SIGKILL");
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    for (let i = 0; ; i += 1) {
      try {
        await pactl("info");
        break;
      } catch (error) {
        if (daemon.exitCode !== null || i === 100) throw new Error(`pulseaudio did not start: ${daemonErrors || error.message}`);
        await sleep(50);
      }
    }
    const load = (...args) => pactl("load-module", ...args);
    await load("module-null-sink", "sink_name=room", `channels=${CHANNELS}`, "channel_map=aux0,aux1,aux2", `rate=${RATE}`, "format=float32le", "sink_properties=device.description=room");
    // remix=no: a channel lands only where it is mapped (the speaker never leaks into the probe).
    await load("module-remap-sink", "sink_name=speaker", "master=room", "channels=1", "channel_map=mono", "master_channel_map=aux0", "remix=no", "sink_properties=device.description=speaker");
    await load("module-remap-sink", "sink_name=air", "master=room", "channels=1", "channel_map=mono", "master_channel_map=aux1", "remix=no", "sink_properties=device.description=air");
    await load("module-remap-sink", "sink_name=user", "master=room", "channels=2", "channel_map=front-left,front-right", "master_channel_map=aux1,aux2", "remix=no", "sink_properties=device.description=user");
    await load("module-remap-source", "source_name=mic", "master=room.monitor", "channels=1", "channel_map=mono", "master_channel_map=aux1", "remix=no", "source_properties=device.description=room-microphone");
    await pactl("set-default-sink", "speaker");
    await pactl("set-default-source", "mic");
    recorder = startRecorder(env);
    await recorder.ready;

    const room = {
      dir,
      /** The environment for a process that should use this room's audio (Chromium, paplay). */
      env,
      recorder,
      echo: null,
      /** (Re)loads the loopback: the echo `echoDb` down, `delayMs` late. */
      async setEcho({ echoDb: db, delayMs: ms }) {
        if (!(db <= 0 && Number.isFinite(db))) throw new RangeError(`echo-db must be a finite number ≤ 0, got ${db}`);
        if (!(ms >= 1 && ms <= 2000)) throw new RangeError(`delay-ms must be between 1 and 2000, got ${ms}`);
        if (this.echo) await pactl("unload-module", String(this.echo.module));
        const module = Number(await load("module-loopback", "source=speaker.monitor", "sink=air", `latency_msec=${ms}`, "source_dont_move=true", "sink_dont_move=true", "remix=no"));
        const inputs = JSON.parse(await pactl("--format=json", "list", "sink-inputs"));
        const input = inputs.find((entry) => Number(entry.owner_module) === module);
        if (!input) throw new Error("the loopback's sink input is not listed");
        // pactl takes a linear factor (not a negative dB); PulseAudio's software volume applies it exactly.
        await pactl("set-sink-input-volume", String(input.index), (10 ** (db / 20)).toFixed(6));
        this.echo = { module, sinkInput: input.index, echoDb: db, delayMs: ms };
      },
      /**
       * Plays `wav` into `sink` with paplay; resolves once paplay ended, with when it started and
       * ended (wall clock). The sound itself is found in the recording.
       */
      async play(wav, sink = "user") {
        const startedAt = wallNow();
        const child = spawn("paplay", [`--device=${sink}`, "--latency-msec=20", wav], { env, stdio: ["ignore", "ignore", "pipe"] });
        let stderr = "";
        child.stderr.on("data", (data) => (stderr += data));
        const code = await new Promise((resolve) => child.once("exit", resolve));
        if (code !== 0) throw new Error(`paplay ${path.basename(wav)} into ${sink} failed: ${stderr.trim()}`);
        return { startedAt, endedAt: wallNow() };
      },
      /**
       * Measures the loopback: plays `probeWav` (tone bursts and noise) into the speaker sink and
       * finds the delay and gain of the air against the speaker in the recording.
       */
      async measureEcho(probeWav) {
        recorder.keepRaw(true);
        const from = recorder.samples();
        await this.play(probeWav, "speaker");
        await sleep(this.echo.delayMs + 300);
        const raw = recorder.rawSince(from);
        recorder.keepRaw(false);
        const frames = raw.length / CHANNELS;
        const speaker = new Float32Array(frames);
        const air = new Float32Array(frames);
        for (let i = 0; i < frames; i += 1) {
          speaker[i] = raw[i * CHANNELS + SPEAKER];
          air[i] = raw[i * CHANNELS + AIR];
        }
        return delayAndGain(speaker, air, Math.round(((this.echo.delayMs + 200) / 1000) * RATE));
      },
      close,
    };
    await room.setEcho({ echoDb, delayMs });
    log(`room: PulseAudio in ${dir}, echo ${echoDb} dB / ${delayMs} ms`);
    return room;
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * parec on room.monitor, three channels of float at 48 kHz in 10 ms pieces. Keeps the envelope
 * (signal.mjs) and the wall-clock time of each sample: the earliest arrival of every piece, less
 * its duration, bounds when its first sample sounded (the lower envelope over the whole run).
 */
function startRecorder(env) {
  const child = spawn("parec", ["--device=room.monitor", "--format=float32le", `--channels=${CHANNELS}`, `--rate=${RATE}`, "--channel-map=aux0,aux1,aux2", "--latency-msec=10", "--raw"], { env, stdio: ["ignore", "pipe", "pipe"] });
  const envelope = new Envelope();
  const bytesPerFrame = CHANNELS * 4;
  let pending = Buffer.alloc(0);
  let offsetMs = Infinity; // wall time of sample 0
  let raw = null;
  let rawStart = 0;
  let stopped = false;
  let failure = null;
  let stderr = "";
  child.stderr.on("data", (data) => (stderr = (stderr + data).slice(-2000)));
  let onFirst;
  const ready = new Promise((resolve, reject) => {
    onFirst = resolve;
    child.once("exit", (code) => {
      if (!stopped) failure = new Error(`parec stopped (${code}): ${stderr.trim()}`);
      reject(failure ?? new Error("parec stopped"));
    });
  });
  ready.catch(() => {});
  child.stdout.on("data", (chunk) => {
    const arrived = wallNow();
    pending = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
    const whole = Math.floor(pending.length / (bytesPerFrame * FRAME_SAMPLES)) * bytesPerFrame * FRAME_SAMPLES;
    if (whole === 0) return;
    const piece = new Float32Array(pending.buffer.slice(pending.byteOffset, pending.byteOffset + whole));
    pending = pending.subarray(whole);
    envelope.push(piece);
    offsetMs = Math.min(offsetMs, arrived - (envelope.samples / RATE) * 1000);
    if (raw) raw.push(piece);
    onFirst();
  });
  return {
    ready,
    envelope,
    /** Samples recorded so far. */
    samples: () => envelope.samples,
    /** Throws when parec stopped on its own. */
    check() {
      if (failure) throw failure;
    },
    /** Wall-clock time (epoch ms) of the start of envelope frame `frame`. */
    wallOfFrame: (frame) => offsetMs + ((frame * FRAME_SAMPLES) / RATE) * 1000,
    /** The envelope frame sounding at wall-clock time `wall` (may be past the recording's end). */
    frameOfWall: (wall) => Math.floor((((wall - offsetMs) / 1000) * RATE) / FRAME_SAMPLES),
    /** Keeps the raw samples from now on (true), or drops them (false). */
    keepRaw(on) {
      raw = on ? [] : null;
      rawStart = envelope.samples;
    },
    /** The interleaved raw samples kept, from sample `from` on. */
    rawSince(from) {
      const all = Float32Array.from((raw ?? []).flatMap((piece) => Array.from(piece)));
      return all.subarray(Math.max(0, from - rawStart) * CHANNELS);
    },
    stop() {
      stopped = true;
      child.kill("SIGTERM");
    },
  };
}
