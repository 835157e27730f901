//! The turn a voice session is thinking about or speaking: its sentences on their way through
//! TTS and the player.

use crate::core::time::Millis;
use crate::core::voice::latency::TurnLatency;
use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

/// One sentence of the answer (or the recovery text) on its way to the speaker.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Sentence {
    pub(crate) text: String,
    pub(crate) recovery: bool,
    /// The synthesis job, once requested.
    pub(crate) job: Option<u64>,
    /// Its audio went to the player.
    pub(crate) enqueued: bool,
    /// Played to the end, skipped, or dropped.
    pub(crate) finished: bool,
    /// Its audio is a stream still arriving: its total length is not known yet.
    pub(crate) streaming: bool,
    /// Its first audio was scheduled.
    pub(crate) sounded: bool,
    /// Its stream failed after it sounded: it is longer than what played, and what follows it
    /// was heard after a gap the heard text cannot show (P3).
    pub(crate) broken: bool,
}

impl Sentence {
    pub(crate) fn new(text: &str) -> Self {
        Sentence {
            text: text.to_owned(),
            recovery: false,
            job: None,
            enqueued: false,
            finished: false,
            streaming: false,
            sounded: false,
            broken: false,
        }
    }

    pub(crate) fn recovery(text: &str) -> Self {
        Sentence {
            recovery: true,
            ..Sentence::new(text)
        }
    }
}

/// The current turn of a voice session.
#[derive(Clone, Debug, PartialEq)]
pub struct SpeakingTurn {
    pub turn_id: String,
    pub(crate) sentences: Vec<Sentence>,
    /// The sentence being synthesized, with its timeout.
    pub(crate) in_flight: Option<(usize, Millis)>,
    /// No more sentences come from the controller.
    pub(crate) text_complete: bool,
    pub(crate) wants_recovery: bool,
    pub(crate) recovery_queued: bool,
    pub(crate) succeeded: u32,
    pub(crate) failed: u32,
    /// Where the turn's time went, until it is reported (at the first sound, or the turn's end).
    pub(crate) latency: Option<Box<TurnLatency>>,
}

impl SpeakingTurn {
    pub(crate) fn new(turn_id: &str) -> Self {
        SpeakingTurn {
            turn_id: turn_id.to_owned(),
            sentences: Vec::new(),
            in_flight: None,
            text_complete: false,
            wants_recovery: false,
            recovery_queued: false,
            succeeded: 0,
            failed: 0,
            latency: None,
        }
    }

    pub(crate) fn in_flight_index(&self, job: u64) -> Option<usize> {
        let (index, _) = self.in_flight?;
        let sentence = self.sentences.get(index)?;
        (sentence.job == Some(job)).then_some(index)
    }

    /// Sentences whose audio waits in the player or plays.
    pub(crate) fn unfinished_audio(&self) -> usize {
        self.sentences
            .iter()
            .filter(|sentence| sentence.enqueued && !sentence.finished)
            .count()
    }

    pub(crate) fn next_unrequested(&self) -> Option<usize> {
        self.sentences
            .iter()
            .position(|sentence| sentence.job.is_none())
    }

    /// Every answer sentence failed in TTS (and there was at least one): none is still waiting
    /// for its turn, being synthesized, or playing (a broken stream's audio plays out first).
    pub(crate) fn all_failed(&self) -> bool {
        self.failed > 0
            && self.succeeded == 0
            && self
                .sentences
                .iter()
                .filter(|sentence| !sentence.recovery)
                .all(|sentence| sentence.finished && (!sentence.enqueued || sentence.broken))
    }

    pub(crate) fn any_enqueued(&self) -> bool {
        self.sentences.iter().any(|sentence| sentence.enqueued)
    }

    /// The controller has nothing more for this turn: no need to interrupt it.
    pub(crate) fn settled_text(&self) -> bool {
        self.text_complete
    }

    /// Nothing left to synthesize or play.
    pub(crate) fn is_done(&self) -> bool {
        self.text_complete
            && self.in_flight.is_none()
            && self.sentences.iter().all(|sentence| sentence.finished)
            && (self.recovery_queued || !self.wants_recovery)
    }
}
