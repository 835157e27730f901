// The demo's stand-in for turnguard's SpeechPlayer until VoiceSession lands on main (see
// agent.mjs): WAV sentences of one turn played back to back on the audio clock, `stop()` silencing
// at once and returning the milliseconds actually played (read from `currentTime`), and an
// AnalyserNode on the output so the page (and its test) can see that sound came out.

export class DemoPlayer {
  constructor({ onNeedsGesture = () => {}, onPlaybackStart = () => {}, onPlaybackEnd = () => {} } = {}) {
    this.context = new AudioContext();
    this.output = this.context.createGain();
    this.analyser = this.context.createAnalyser();
    this.analyser.fftSize = 1024;
    this.output.connect(this.analyser);
    this.analyser.connect(this.context.destination);
    this.hooks = { onNeedsGesture, onPlaybackStart, onPlaybackEnd };
    this.turnId = null;
    this.sources = [];
    this.startedAt = null; // context time the turn's first buffer starts
    this.endsAt = 0; // context time the last scheduled buffer ends
    this.stopped = new Set();
    this.peak = 0;
    this.context.onstatechange = () => this.checkSuspended();
    this.checkSuspended();
  }

  get suspended() {
    return this.context.state === "suspended";
  }

  checkSuspended() {
    if (this.suspended) this.hooks.onNeedsGesture();
  }

  /** Call from a click handler: browsers start audio only after a user gesture. */
  resume() {
    return this.context.resume();
  }

  /** Decodes `wav` and plays it after whatever this turn already has scheduled. */
  async enqueue(turnId, wav) {
    const buffer = await this.context.decodeAudioData(wav);
    if (this.stopped.has(turnId)) return; // the turn was cut while this sentence was decoding
    if (this.turnId !== turnId) this.beginTurn(turnId);
    const source = this.context.createBufferSource();
    source.buffer = buffer;
    source.connect(this.output);
    const at = Math.max(this.context.currentTime + 0.02, this.endsAt);
    if (this.startedAt === null) {
      this.startedAt = at;
      this.hooks.onPlaybackStart(turnId);
    }
    source.start(at);
    this.endsAt = at + buffer.duration;
    this.sources.push(source);
    source.onended = () => {
      this.sources = this.sources.filter((s) => s !== source);
      if (this.sources.length === 0 && this.turnId === turnId && !this.stopped.has(turnId)) {
        this.hooks.onPlaybackEnd(turnId, this.playedMs());
        this.turnId = null;
        this.startedAt = null;
      }
    };
  }

  beginTurn(turnId) {
    this.silence();
    this.turnId = turnId;
    this.startedAt = null;
    this.endsAt = 0;
  }

  playedMs() {
    if (this.startedAt === null) return 0;
    return Math.max(0, (Math.min(this.context.currentTime, this.endsAt) - this.startedAt) * 1000);
  }

  /** Milliseconds of this turn's audio that are scheduled but not yet played. */
  remainingMs() {
    return Math.max(0, (this.endsAt - Math.max(this.context.currentTime, this.startedAt ?? 0)) * 1000);
  }

  /** Silences `turnId` now (and drops its audio still decoding); returns `{ heardMs, unheardMs }`. */
  stop(turnId) {
    this.stopped.add(turnId);
    if (this.turnId !== turnId) return { heardMs: 0, unheardMs: 0 };
    const result = { heardMs: this.playedMs(), unheardMs: this.remainingMs() };
    this.silence();
    this.turnId = null;
    this.startedAt = null;
    return result;
  }

  silence() {
    // A short ramp avoids a click; the sources stop right after it.
    const now = this.context.currentTime;
    this.output.gain.setTargetAtTime(0, now, 0.003);
    for (const source of this.sources) {
      source.onended = null;
      source.stop(now + 0.02);
    }
    this.sources = [];
    this.output.gain.setTargetAtTime(1, now + 0.03, 0.003);
  }

  /** The loudest output sample since the last call (0 when silent). */
  level() {
    const samples = new Float32Array(this.analyser.fftSize);
    this.analyser.getFloatTimeDomainData(samples);
    let peak = 0;
    for (const sample of samples) peak = Math.max(peak, Math.abs(sample));
    this.peak = Math.max(this.peak, peak);
    return peak;
  }

  close() {
    this.silence();
    return this.context.close();
  }
}
