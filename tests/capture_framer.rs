//! The framer that makes the transcriber's PCM16 frames from a capture the page reads directly
//! (src/core/stt/capture_framer.rs): the worklet's arithmetic, frame sizes and duration kept.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use turnguard::core::stt::capture_framer::{mix_into, CaptureFramer};

fn frames(framer: &mut CaptureFramer, samples: &[f32]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    framer.push(samples, &mut |frame| out.push(frame));
    out
}

fn pcm(frame: &[u8]) -> Vec<i16> {
    frame
        .chunks_exact(2)
        .map(|pair| i16::from_le_bytes([pair[0], pair[1]]))
        .collect()
}

#[test]
fn a_second_at_48_khz_is_fifty_frames_of_20_ms_at_16_khz() {
    let mut framer = CaptureFramer::new(48_000.0, 16_000);
    let mut all = Vec::new();
    // In the track processor's 10 ms pieces.
    for _ in 0..100 {
        all.extend(frames(&mut framer, &[0.25; 480]));
    }
    assert_eq!(all.len(), 50);
    assert!(all.iter().all(|frame| frame.len() == 640));
    assert!(all
        .iter()
        .all(|frame| pcm(frame).iter().all(|&s| s == 8192)));
}

#[test]
fn a_frame_comes_as_soon_as_it_is_full_not_later() {
    let mut framer = CaptureFramer::new(48_000.0, 16_000);
    assert!(frames(&mut framer, &[0.0; 959]).is_empty());
    assert_eq!(frames(&mut framer, &[0.0; 1]).len(), 1);
}

#[test]
fn downsampling_takes_the_mean_of_each_output_period() {
    let mut framer = CaptureFramer::new(48_000.0, 16_000);
    // Periods of three inputs: (0.3, 0.6, 0.9) → 0.6, (-0.3, 0, 0) → -0.1.
    let pattern = [0.3, 0.6, 0.9, -0.3, 0.0, 0.0];
    let input: Vec<f32> = pattern.iter().copied().cycle().take(960).collect();
    let out = frames(&mut framer, &input);
    assert_eq!(out.len(), 1);
    let samples = pcm(&out[0]);
    assert_eq!(&samples[..4], &[19660, -3277, 19660, -3277]);
}

#[test]
fn upsampling_interpolates_and_keeps_the_duration() {
    let mut framer = CaptureFramer::new(16_000.0, 24_000);
    let ramp: Vec<f32> = (0..16_000).map(|i| (i % 4) as f32 * 0.1).collect();
    let out = frames(&mut framer, &ramp);
    assert_eq!(out.len(), 50, "a second in, a second out");
    assert!(out.iter().all(|frame| frame.len() == 960));
    let samples = pcm(&out[0]);
    // Each output is a step of 2/3 input further along the line from the previous input to the
    // current one (0 held before the first): 0, 0 (both at input 0), 0.1 / 3, 0.1, 0.1 + 0.1 · 2/3,
    // 0.2 + 0.1 / 3.
    let expected: Vec<i16> = [
        0.0,
        0.0,
        0.1 / 3.0,
        0.1,
        0.1 + 0.1 * 2.0 / 3.0,
        0.2 + 0.1 / 3.0,
    ]
    .iter()
    .map(|v: &f64| (v * 32767.0).round() as i16)
    .collect();
    assert_eq!(&samples[..6], &expected[..]);
}

#[test]
fn clipping_saturates_as_the_worklet_does() {
    let mut framer = CaptureFramer::new(16_000.0, 16_000);
    let mut input = vec![0.0f32; 320];
    input[0] = 2.0;
    input[1] = -2.0;
    input[2] = 1.0;
    input[3] = -1.0;
    input[4] = f32::NAN;
    let out = frames(&mut framer, &input);
    assert_eq!(&pcm(&out[0])[..5], &[32767, -32768, 32767, -32768, 0]);
}

#[test]
fn a_rate_that_is_no_rate_is_taken_as_the_target() {
    for rate in [0.0, -48_000.0, f64::NAN, f64::INFINITY] {
        let mut framer = CaptureFramer::new(rate, 16_000);
        assert_eq!(framer.input_rate(), 16_000.0);
        assert_eq!(frames(&mut framer, &[0.5; 320]).len(), 1);
    }
}

#[test]
fn channels_mix_to_their_mean() {
    let mut mono = vec![0.0f32; 3];
    mix_into(&mut mono, &[0.5, -1.0, 0.25], 2);
    mix_into(&mut mono, &[0.5, 1.0, 0.75], 2);
    assert_eq!(mono, vec![0.5, 0.0, 0.5]);
}

#[test]
fn pieces_of_a_44_1_khz_capture_make_fifty_frames_a_second() {
    let mut framer = CaptureFramer::new(44_100.0, 16_000);
    let mut all = Vec::new();
    for _ in 0..100 {
        all.extend(frames(&mut framer, &[0.1; 441]));
    }
    // 16 000 output samples to a second, the last of them done by the next input's first sample.
    assert_eq!(all.len(), 49);
    all.extend(frames(&mut framer, &[0.1; 441]));
    assert_eq!(all.len(), 50);
    assert!(all.iter().all(|frame| frame.len() == 640));
}
