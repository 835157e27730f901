//! `cargo run --example vad_corpus [--features earshot] -- CORPUS.raw TRUTH.txt`: the page's voice
//! detector over a recording whose parts are known (bench/vad.mjs makes both), as one JSON line:
//! utterances found, how long each took to report, and the starts it reported on sounds that are
//! not speech. With `--features earshot` the detector is the trial that also asks earshot's
//! network (src/core/voice/vad.rs); the bench runs both on the same corpus.
//!
//! TRUTH.txt has a line per part of the corpus, in order: `speech|noise|gap SECONDS [NAME]`.

use std::process::ExitCode;
use turnguard::core::voice::vad::{VoiceChange, VoiceDetector};

const SAMPLE_RATE: u32 = 16_000;
/// Bytes of PCM16 a push: 20 ms, as the capture sends them.
const FRAME_BYTES: usize = 640;
/// A start this long after a sound ended still belongs to it (the detector's onset and the sound's
/// reverberation in the recording).
const TAIL_MS: f64 = 300.0;

struct Part {
    kind: String,
    name: String,
    start_ms: f64,
    end_ms: f64,
}

fn parts(truth: &str) -> Result<Vec<Part>, String> {
    let mut at_ms = 0.0;
    let mut parts = Vec::new();
    for line in truth.lines().filter(|line| !line.trim().is_empty()) {
        let mut fields = line.split_whitespace();
        let kind = fields.next().unwrap_or_default().to_owned();
        let seconds: f64 = fields
            .next()
            .and_then(|value| value.parse().ok())
            .ok_or_else(|| format!("no duration in {line:?}"))?;
        let name = fields.next().unwrap_or(&kind).to_owned();
        let end_ms = at_ms + seconds * 1000.0;
        parts.push(Part {
            kind,
            name,
            start_ms: at_ms,
            end_ms,
        });
        at_ms = end_ms;
    }
    Ok(parts)
}

/// When each start was reported: the end of the push that reported it, in ms of audio.
fn reported_starts(pcm: &[u8]) -> Vec<f64> {
    let mut detector = VoiceDetector::new(SAMPLE_RATE);
    let mut starts = Vec::new();
    for (index, frame) in pcm.chunks(FRAME_BYTES).enumerate() {
        let pushed_ms = (index + 1) as f64 * 20.0;
        detector.push(frame, |change| {
            if matches!(change, VoiceChange::Started { .. }) {
                starts.push(pushed_ms);
            }
        });
    }
    starts
}

fn percentile(sorted: &[f64], fraction: f64) -> Option<f64> {
    let index = ((sorted.len() as f64 - 1.0) * fraction).round() as usize;
    sorted.get(index).copied()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [corpus, truth] = args.as_slice() else {
        eprintln!("usage: vad_corpus CORPUS.raw TRUTH.txt");
        return ExitCode::FAILURE;
    };
    let read = std::fs::read(corpus).map_err(|e| format!("{corpus}: {e}"));
    let truth = std::fs::read_to_string(truth)
        .map_err(|e| format!("{truth}: {e}"))
        .and_then(|text| parts(&text));
    let (pcm, parts) = match (read, truth) {
        (Ok(pcm), Ok(parts)) => (pcm, parts),
        (Err(error), _) | (_, Err(error)) => {
            eprintln!("vad_corpus: {error}");
            return ExitCode::FAILURE;
        }
    };
    let starts = reported_starts(&pcm);
    let within = |part: &Part, at: f64| at > part.start_ms && at <= part.end_ms + TAIL_MS;
    let mut onsets = Vec::new();
    let mut utterances = 0;
    let mut noise = Vec::new();
    for part in &parts {
        match part.kind.as_str() {
            "speech" => {
                utterances += 1;
                if let Some(at) = starts.iter().find(|at| within(part, **at)) {
                    onsets.push(at - part.start_ms);
                }
            }
            "noise" => {
                let count = starts.iter().filter(|at| within(part, **at)).count();
                noise.push(format!("{{\"sound\":{:?},\"starts\":{count}}}", part.name));
            }
            _ => {}
        }
    }
    // Starts in a gap's quiet, past the previous sound's tail.
    let in_quiet = starts
        .iter()
        .filter(|at| {
            parts.iter().any(|part| {
                part.kind == "gap" && **at > part.start_ms + TAIL_MS && **at <= part.end_ms
            })
        })
        .count();
    onsets.sort_by(f64::total_cmp);
    let ms = |value: Option<f64>| value.map_or("null".to_owned(), |v| format!("{v:.0}"));
    println!(
        "{{\"detector\":{:?},\"utterances\":{utterances},\"found\":{},\"onsetMedianMs\":{},\"onsetP90Ms\":{},\"noise\":[{}],\"inQuiet\":{in_quiet}}}",
        if cfg!(feature = "earshot") { "earshot" } else { "energy" },
        onsets.len(),
        ms(percentile(&onsets, 0.5)),
        ms(percentile(&onsets, 0.9)),
        noise.join(","),
    );
    ExitCode::SUCCESS
}
