//! A trial, built only with `--features earshot` and never published (issue 23, item 1): earshot's
//! network as a second opinion on each block the energy detector takes for voice. It cost 40 KiB
//! gzipped and onset time for what the room did not need; the figures and the choice are in
//! performance.md ("The voice detector: energy or earshot") and decisions.md.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;

/// earshot's frame: 256 samples, 16 ms at 16 kHz (the network knows no other rate; the trial was
/// measured on 16 kHz protocols).
const FRAME: usize = 256;
/// The score that is voice: earshot's own default.
const THRESHOLD: f32 = 0.5;

pub(crate) struct Neural {
    /// Boxed: about 8 KiB of state.
    detector: Box<earshot::Detector>,
    frame: Vec<i16>,
    /// The last whole frame's score; it stands for the blocks until the next frame.
    score: f32,
}

impl Neural {
    pub(crate) fn new() -> Self {
        Neural {
            detector: Box::new(earshot::Detector::default()),
            frame: Vec::with_capacity(FRAME),
            score: 0.0,
        }
    }

    pub(crate) fn push(&mut self, sample: i16) {
        self.frame.push(sample);
        if self.frame.len() == FRAME {
            self.score = self.detector.predict_i16(&self.frame);
            self.frame.clear();
        }
    }

    pub(crate) fn says_voice(&self) -> bool {
        self.score >= THRESHOLD
    }
}

impl fmt::Debug for Neural {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Neural")
            .field("score", &self.score)
            .finish()
    }
}
