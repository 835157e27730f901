//! PCM16 mono resampling by linear interpolation, for protocols whose server takes another rate
//! than the capture (OpenAI: 24 kHz). Each frame is resampled on its own: the last sample is held
//! for the positions past it, so a frame's output length depends on that frame only and the
//! audio's duration is kept (16 → 24 kHz: exactly 3 samples for every 2).

/// `pcm` (PCM16 little-endian mono at `from` Hz) at `to` Hz. Odd trailing bytes are ignored; a
/// zero rate or equal rates give the samples back unchanged.
use alloc::vec::Vec;
pub fn resample_pcm16(pcm: &[u8], from: u32, to: u32) -> Vec<u8> {
    let samples: Vec<i16> = pcm
        .chunks_exact(2)
        .map(|pair| pair.try_into().map_or(0, i16::from_le_bytes))
        .collect();
    if from == to || from == 0 || to == 0 || samples.is_empty() {
        return samples.iter().flat_map(|s| s.to_le_bytes()).collect();
    }
    let (from, to) = (u64::from(from), u64::from(to));
    let count = samples.len() as u64;
    let out_len = (count * to + from / 2) / from;
    let last = samples.last().copied().unwrap_or(0);
    let at = |index: u64| {
        usize::try_from(index)
            .ok()
            .and_then(|index| samples.get(index))
            .copied()
            .unwrap_or(last)
    };
    let mut out = Vec::with_capacity(usize::try_from(out_len * 2).unwrap_or(0));
    for j in 0..out_len {
        let position = j * from;
        let (index, rest) = (position / to, position % to);
        let (a, b) = (i64::from(at(index)), i64::from(at(index + 1)));
        let weighted =
            a * i64::try_from(to - rest).unwrap_or(0) + b * i64::try_from(rest).unwrap_or(0);
        let to = i64::try_from(to).unwrap_or(1);
        // Rounded to the nearest, halves away from zero.
        let value = (weighted + weighted.signum() * to / 2) / to;
        let sample = i16::try_from(value).unwrap_or(if value < 0 { i16::MIN } else { i16::MAX });
        out.extend_from_slice(&sample.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::resample_pcm16;

    fn pcm(samples: &[i16]) -> Vec<u8> {
        samples.iter().flat_map(|s| s.to_le_bytes()).collect()
    }

    #[test]
    fn sixteen_to_twenty_four_makes_three_samples_of_two() {
        let out = resample_pcm16(&pcm(&[0, 300, 600, 900]), 16_000, 24_000);
        assert_eq!(out, pcm(&[0, 200, 400, 600, 800, 900]));
        assert_eq!(resample_pcm16(&vec![0; 640], 16_000, 24_000).len(), 960);
    }

    #[test]
    fn every_third_sample_is_an_input_sample() {
        let out = resample_pcm16(&pcm(&[7, 0, 0, -9]), 16_000, 24_000);
        assert_eq!(out, pcm(&[7, 2, 0, 0, -6, -9]));
    }

    #[test]
    fn equal_rates_and_odd_bytes() {
        assert_eq!(resample_pcm16(&[1, 0, 2], 16_000, 16_000), vec![1, 0]);
        assert_eq!(resample_pcm16(&[], 16_000, 24_000), Vec::<u8>::new());
        assert_eq!(
            resample_pcm16(&pcm(&[i16::MAX, i16::MIN]), 16_000, 24_000).len(),
            6
        );
    }
}
