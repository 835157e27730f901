// turnguard's microphone capture worklet (L5): mixes the input to mono, resamples it to the
// transcriber's rate and posts PCM16 frames (20 ms each) to the main thread.
//
// One file, two uses:
// - loaded as an AudioWorklet module (`attachMicrophone(stream, { workletUrl })`, the URL of this
//   file as the package ships it: pkg/capture-worklet.js), it registers the processor itself;
// - imported by the shell, `captureWorkletSource()` gives the same code as a string for the
//   zero-config blob: URL.

function registerTurnguardCapture() {
  class TurnguardCapture extends AudioWorkletProcessor {
    constructor(options) {
      super();
      const { targetRate, frameSamples } = options.processorOptions;
      this.step = sampleRate / targetRate; // input samples per output sample
      this.frameSamples = frameSamples;
      this.frame = new Int16Array(frameSamples);
      this.fill = 0;
      this.phase = 0;
      this.sum = 0;
      this.count = 0;
      this.previous = 0;
    }

    emit(value) {
      const clamped = Math.max(-1, Math.min(1, value));
      this.frame[this.fill++] = Math.round(clamped < 0 ? clamped * 0x8000 : clamped * 0x7fff);
      if (this.fill === this.frameSamples) {
        // Transferred, not copied: the old buffer is detached, so the next frame is a new one.
        this.port.postMessage(this.frame.buffer, [this.frame.buffer]);
        this.frame = new Int16Array(this.frameSamples);
        this.fill = 0;
      }
    }

    process(inputs) {
      const channels = inputs[0];
      if (!channels || channels.length === 0) return true;
      const length = channels[0].length;
      for (let i = 0; i < length; i++) {
        let sample = 0;
        for (let c = 0; c < channels.length; c++) sample += channels[c][i];
        sample /= channels.length;
        if (this.step >= 1) {
          // Downsampling: average the inputs of each output period (a box low-pass against aliasing).
          this.sum += sample;
          this.count += 1;
          this.phase += 1;
          if (this.phase >= this.step) {
            this.emit(this.sum / this.count);
            this.phase -= this.step;
            this.sum = 0;
            this.count = 0;
          }
        } else {
          // Upsampling: linear interpolation between consecutive inputs.
          while (this.phase < 1) {
            this.emit(this.previous + (sample - this.previous) * this.phase);
            this.phase += this.step;
          }
          this.phase -= 1;
          this.previous = sample;
        }
      }
      return true;
    }
  }
  registerProcessor("turnguard-capture", TurnguardCapture);
}

/** The worklet as source text, for a blob: URL: the function above, called. */
export function captureWorkletSource() {
  return `(${registerTurnguardCapture.toString()})();\n`;
}

// In an AudioWorkletGlobalScope (loaded by URL), register; on the main thread, do nothing.
if (typeof registerProcessor === "function" && typeof AudioWorkletProcessor === "function") {
  registerTurnguardCapture();
}
