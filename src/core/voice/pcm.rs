//! Raw PCM from a stream, cut into frames (issue 18): a streamed `synthesize` hands over bytes in
//! chunks of any size, and a chunk may end inside a sample or inside a frame (a sample of every
//! channel). The bytes that do not make a whole frame are carried to the next chunk, so the audio
//! stays gapless and no sample is ever read across a torn boundary.

/// Sample encodings a stream may carry, little-endian and interleaved by channel.
use alloc::vec::Vec;
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PcmFormat {
    /// 16-bit signed integers (OpenAI's `pcm`, most TTS services).
    Pcm16,
    /// 32-bit IEEE floats.
    F32,
}

impl PcmFormat {
    /// `"pcm16"` or `"f32"`.
    #[must_use]
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "pcm16" => Some(PcmFormat::Pcm16),
            "f32" => Some(PcmFormat::F32),
            _ => None,
        }
    }

    #[must_use]
    pub fn bytes_per_sample(self) -> usize {
        match self {
            PcmFormat::Pcm16 => 2,
            PcmFormat::F32 => 4,
        }
    }
}

/// Turns arriving bytes into whole frames, one `Vec<f32>` per channel.
#[derive(Clone, Debug)]
pub struct PcmFramer {
    format: PcmFormat,
    channels: usize,
    /// Bytes of a frame torn by the end of the last chunk; always shorter than one frame.
    carry: Vec<u8>,
    frames: u64,
}

impl PcmFramer {
    /// `channels` is at least 1.
    #[must_use]
    pub fn new(format: PcmFormat, channels: usize) -> Self {
        PcmFramer {
            format,
            channels: channels.max(1),
            carry: Vec::new(),
            frames: 0,
        }
    }

    fn frame_bytes(&self) -> usize {
        self.format.bytes_per_sample() * self.channels
    }

    /// The whole frames that `bytes` completes, per channel (empty when none is complete yet).
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Vec<f32>> {
        let frame_bytes = self.frame_bytes();
        let mut data = core::mem::take(&mut self.carry);
        data.extend_from_slice(bytes);
        let whole = data.len() - data.len() % frame_bytes;
        let (frames_part, rest) = data.split_at(whole);
        let count = whole / frame_bytes;
        let mut channels: Vec<Vec<f32>> = (0..self.channels)
            .map(|_| Vec::with_capacity(count))
            .collect();
        let width = self.format.bytes_per_sample();
        for frame in frames_part.chunks_exact(frame_bytes) {
            for (sample, channel) in frame.chunks_exact(width).zip(channels.iter_mut()) {
                channel.push(self.sample(sample));
            }
        }
        self.carry = rest.to_vec();
        self.frames += count as u64;
        if count == 0 {
            return Vec::new();
        }
        channels
    }

    // `max`/`min`, not `clamp`: its NaN assertion pulls float formatting into the wasm.
    #[allow(clippy::manual_clamp)]
    fn sample(&self, bytes: &[u8]) -> f32 {
        match (self.format, bytes) {
            (PcmFormat::Pcm16, [lo, hi]) => f32::from(i16::from_le_bytes([*lo, *hi])) / 32768.0,
            (PcmFormat::F32, [a, b, c, d]) => {
                let value = f32::from_le_bytes([*a, *b, *c, *d]);
                if value.is_finite() {
                    value.max(-1.0).min(1.0)
                } else {
                    0.0
                }
            }
            _ => 0.0,
        }
    }

    /// Bytes of a torn frame still waiting for the rest (dropped if the stream ends now).
    #[must_use]
    pub fn carried(&self) -> usize {
        self.carry.len()
    }

    /// Frames produced so far.
    #[must_use]
    pub fn frames(&self) -> u64 {
        self.frames
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn pcm16(samples: &[i16]) -> Vec<u8> {
        samples.iter().flat_map(|s| s.to_le_bytes()).collect()
    }

    #[test]
    fn one_byte_at_a_time_gives_the_same_samples_as_one_chunk() {
        let bytes = pcm16(&[0, 16384, -32768, 32767, 1]);
        let mut whole = PcmFramer::new(PcmFormat::Pcm16, 1);
        let expected = whole.push(&bytes).remove(0);
        let mut framer = PcmFramer::new(PcmFormat::Pcm16, 1);
        let mut got = Vec::new();
        for byte in &bytes {
            for channel in framer.push(core::slice::from_ref(byte)) {
                got.extend(channel);
            }
        }
        assert_eq!(got, expected);
        assert_eq!(got[1], 0.5);
        assert_eq!(got[2], -1.0);
        assert_eq!(framer.carried(), 0);
    }

    #[test]
    fn a_split_frame_of_two_channels_is_carried_and_deinterleaved() {
        let bytes = pcm16(&[100, -100, 200, -200]);
        let mut framer = PcmFramer::new(PcmFormat::Pcm16, 2);
        assert!(
            framer.push(&bytes[..3]).is_empty(),
            "3 of 4 bytes: no frame yet"
        );
        assert_eq!(framer.carried(), 3);
        let out = framer.push(&bytes[3..]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].len(), 2);
        assert!(out[0].iter().all(|s| *s > 0.0) && out[1].iter().all(|s| *s < 0.0));
        assert_eq!(framer.frames(), 2);
    }

    #[test]
    fn f32_samples_are_read_and_bad_ones_silenced() {
        let mut bytes: Vec<u8> = Vec::new();
        for value in [0.25f32, f32::NAN, 7.0] {
            bytes.extend(value.to_le_bytes());
        }
        let mut framer = PcmFramer::new(PcmFormat::F32, 1);
        let out = framer.push(&bytes[..5]);
        let mut samples = out.into_iter().next().unwrap_or_default();
        samples.extend(framer.push(&bytes[5..]).into_iter().flatten());
        assert_eq!(samples, [0.25, 0.0, 1.0]);
    }

    #[test]
    fn names_parse() {
        assert_eq!(PcmFormat::parse("pcm16"), Some(PcmFormat::Pcm16));
        assert_eq!(PcmFormat::parse("f32"), Some(PcmFormat::F32));
        assert_eq!(PcmFormat::parse("mp3"), None);
    }
}
