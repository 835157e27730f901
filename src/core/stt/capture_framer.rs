//! The microphone's samples as the transcriber takes them: mono float samples at the capture's
//! rate in, PCM16 little-endian frames of 20 ms at the transcriber's rate out. Where the browser
//! hands the page its capture directly (Chromium's `MediaStreamTrackProcessor`), this does in
//! wasm what `capture-worklet.js` does on the audio thread elsewhere, by the same arithmetic: a
//! box low-pass (the mean of each output period's inputs) when downsampling, linear
//! interpolation when upsampling, and the worklet's rounding to PCM16.

use alloc::vec::Vec;

/// Frames of this many milliseconds, as the worklet posts them.
pub const FRAME_MS: u32 = 20;

/// Turns a stream of mono samples into PCM16 frames of [`FRAME_MS`].
#[derive(Clone, Debug)]
pub struct CaptureFramer {
    input_rate: f64,
    /// Input samples per output sample.
    step: f64,
    frame_samples: usize,
    frame: Vec<u8>,
    phase: f64,
    sum: f64,
    count: u32,
    previous: f64,
}

impl CaptureFramer {
    /// From `input_rate` Hz (the capture's) to `target_rate` Hz (the transcriber's).
    pub fn new(input_rate: f64, target_rate: u32) -> Self {
        let target = f64::from(target_rate.max(1));
        let input_rate = if input_rate.is_finite() && input_rate > 0.0 {
            input_rate
        } else {
            target
        };
        // As the worklet: round(rate / 50).
        let frame_samples = ((u64::from(target_rate) * u64::from(FRAME_MS) + 500) / 1000).max(1);
        let frame_samples = usize::try_from(frame_samples).unwrap_or(1);
        Self {
            input_rate,
            step: input_rate / target,
            frame_samples,
            frame: Vec::with_capacity(frame_samples * 2),
            phase: 0.0,
            sum: 0.0,
            count: 0,
            previous: 0.0,
        }
    }

    /// The capture rate this framer was made for.
    pub fn input_rate(&self) -> f64 {
        self.input_rate
    }

    /// Takes the next samples; `emit` gets each frame as it fills.
    pub fn push(&mut self, samples: &[f32], emit: &mut dyn FnMut(Vec<u8>)) {
        for &sample in samples {
            let sample = f64::from(sample);
            if self.step >= 1.0 {
                self.sum += sample;
                self.count += 1;
                self.phase += 1.0;
                if self.phase >= self.step {
                    let mean = self.sum / f64::from(self.count);
                    self.put(mean, emit);
                    self.phase -= self.step;
                    self.sum = 0.0;
                    self.count = 0;
                }
            } else {
                while self.phase < 1.0 {
                    let value = self.previous + (sample - self.previous) * self.phase;
                    self.put(value, emit);
                    self.phase += self.step;
                }
                self.phase -= 1.0;
                self.previous = sample;
            }
        }
    }

    fn put(&mut self, value: f64, emit: &mut dyn FnMut(Vec<u8>)) {
        let clamped = value.clamp(-1.0, 1.0);
        let scaled = if clamped < 0.0 {
            clamped * 32768.0
        } else {
            clamped * 32767.0
        };
        // In range after the clamp; NaN (never from a browser) becomes 0.
        let pcm = libm::round(scaled) as i16;
        self.frame.extend_from_slice(&pcm.to_le_bytes());
        if self.frame.len() >= self.frame_samples * 2 {
            let full =
                core::mem::replace(&mut self.frame, Vec::with_capacity(self.frame_samples * 2));
            emit(full);
        }
    }
}

/// Adds `plane` (one channel) into `mono`, each sample divided by `channels`: the mean of every
/// channel once each plane is added.
pub fn mix_into(mono: &mut [f32], plane: &[f32], channels: u32) {
    let share = 1.0 / channels.max(1) as f32;
    for (out, &sample) in mono.iter_mut().zip(plane) {
        *out += sample * share;
    }
}
