//! When a voice session guesses that the user finished speaking, before the final (T17): the
//! provider's eager end of turn (Deepgram Flux's `EagerEndOfTurn`), or the session's own — a
//! partial transcript that stayed the same for `silence_ms`. A guess starts a preemptive attempt;
//! a changed partial, new speech or the provider's `TurnResumed` withdraws it.

use crate::core::time::Millis;
use crate::core::turn::preemptive::normalise;
use alloc::borrow::ToOwned;
use alloc::string::String;

/// What the tracker asks of the ladder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Guess {
    /// Start a preemptive attempt on this text.
    Start(String),
    /// Withdraw the running guess.
    Withdraw,
}

/// The partial transcript and the guess made on it.
#[derive(Debug)]
pub struct EagerTracker {
    /// `None`: only the provider's guesses count.
    silence_ms: Option<u64>,
    /// The latest partial, its normalised text and when that text last changed.
    partial: Option<(String, String, Millis)>,
    /// The normalised text of the guess standing now, if any.
    guessed: Option<String>,
    /// The page's voice detector runs: a guess also needs its silence, since `silent_since`.
    detector: bool,
    silent_since: Option<Millis>,
}

impl EagerTracker {
    /// A tracker that guesses after a partial stays the same for `silence_ms`.
    #[must_use]
    pub fn new(silence_ms: u64) -> Self {
        EagerTracker {
            silence_ms: Some(silence_ms),
            partial: None,
            guessed: None,
            detector: false,
            silent_since: None,
        }
    }

    /// The voice detector heard the user start (`speaking`) or stop at `at`. From then on a
    /// guess needs its silence as well as a still partial; new voice withdraws a guess.
    pub fn on_voice(&mut self, speaking: bool, at: Millis) -> Option<Guess> {
        self.detector = true;
        if speaking {
            self.silent_since = None;
            return self.guessed.take().map(|_| Guess::Withdraw);
        }
        self.silent_since = Some(at);
        None
    }

    /// The provider guesses the end of turn itself (its protocol says so): no guess of our own,
    /// which between its words would only cost requests.
    pub fn follow_provider_only(&mut self) {
        self.silence_ms = None;
    }

    /// A partial transcript: a new text restarts the wait, and withdraws a guess it differs from.
    pub fn on_partial(&mut self, text: &str, now: Millis) -> Option<Guess> {
        let key = normalise(text);
        if key.is_empty() || self.partial.as_ref().is_some_and(|(_, old, _)| *old == key) {
            return None;
        }
        self.partial = Some((text.to_owned(), key.clone(), now));
        self.withdraw_unless(&key)
    }

    /// The provider guessed the end of turn with `text`.
    pub fn on_provider_guess(&mut self, text: &str) -> Option<Guess> {
        let key = normalise(text);
        if key.is_empty() {
            return None;
        }
        self.guessed = Some(key);
        Some(Guess::Start(text.to_owned()))
    }

    /// The user went on (new speech, the provider's `TurnResumed`).
    pub fn on_resumed(&mut self) -> Option<Guess> {
        self.partial = None;
        self.guessed.take().map(|_| Guess::Withdraw)
    }

    /// The final came: what follows belongs to the next turn.
    pub fn on_final(&mut self) {
        self.partial = None;
        self.guessed = None;
    }

    /// When the partial will have been still for `silence_ms`, if a guess is due then.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Millis> {
        let (_, key, since) = self.partial.as_ref()?;
        if self.guessed.as_ref() == Some(key) {
            return None;
        }
        let since = if self.detector {
            (*since).max(self.silent_since?)
        } else {
            *since
        };
        Some(since.after(self.silence_ms?))
    }

    /// A guess when the partial has been still long enough.
    pub fn handle_timeout(&mut self, now: Millis) -> Option<Guess> {
        if self.poll_timeout().map_or(true, |due| now < due) {
            return None;
        }
        let (text, key, _) = self.partial.as_ref()?;
        self.guessed = Some(key.clone());
        Some(Guess::Start(text.clone()))
    }

    fn withdraw_unless(&mut self, key: &str) -> Option<Guess> {
        match &self.guessed {
            Some(guessed) if guessed != key => {
                self.guessed = None;
                Some(Guess::Withdraw)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_still_partial_is_guessed_once_and_a_new_one_withdraws_it() {
        let mut eager = EagerTracker::new(300);
        assert_eq!(eager.on_partial("what is", Millis(0)), None);
        assert_eq!(eager.poll_timeout(), Some(Millis(300)));
        assert_eq!(eager.on_partial("what is the", Millis(100)), None);
        assert_eq!(
            eager.poll_timeout(),
            Some(Millis(400)),
            "a new text restarts the wait"
        );
        assert_eq!(eager.handle_timeout(Millis(399)), None);
        assert_eq!(
            eager.handle_timeout(Millis(400)),
            Some(Guess::Start("what is the".into()))
        );
        assert_eq!(eager.poll_timeout(), None, "guessed once");
        assert_eq!(
            eager.on_partial("What is the?", Millis(500)),
            None,
            "the same words"
        );
        assert_eq!(
            eager.on_partial("what is the time", Millis(600)),
            Some(Guess::Withdraw)
        );
        assert_eq!(eager.poll_timeout(), Some(Millis(900)));
        eager.on_final();
        assert_eq!(eager.poll_timeout(), None);
    }

    #[test]
    fn with_the_voice_detector_a_guess_needs_its_silence_too() {
        let mut eager = EagerTracker::new(300);
        assert_eq!(eager.on_voice(true, Millis(0)), None);
        eager.on_partial("what time", Millis(100));
        assert_eq!(eager.poll_timeout(), None, "still speaking");
        assert_eq!(eager.on_voice(false, Millis(600)), None);
        assert_eq!(eager.poll_timeout(), Some(Millis(900)), "300 ms of silence");
        assert_eq!(
            eager.handle_timeout(Millis(900)),
            Some(Guess::Start("what time".into()))
        );
        assert_eq!(
            eager.on_voice(true, Millis(950)),
            Some(Guess::Withdraw),
            "new speech"
        );
    }

    #[test]
    fn the_providers_guess_and_resumption() {
        let mut eager = EagerTracker::new(300);
        assert_eq!(eager.on_provider_guess(" "), None);
        assert_eq!(
            eager.on_provider_guess("hello there"),
            Some(Guess::Start("hello there".into()))
        );
        assert_eq!(eager.on_partial("hello there", Millis(10)), None);
        assert_eq!(
            eager.poll_timeout(),
            None,
            "already guessed for these words"
        );
        assert_eq!(eager.on_resumed(), Some(Guess::Withdraw));
        assert_eq!(eager.on_resumed(), None);
        eager.follow_provider_only();
        assert_eq!(eager.on_partial("and then", Millis(20)), None);
        assert_eq!(eager.poll_timeout(), None, "no guess of its own");
        assert_eq!(
            eager.on_partial("and then some", Millis(30)),
            None,
            "nothing to withdraw"
        );
        assert_eq!(
            eager.on_provider_guess("and then some"),
            Some(Guess::Start("and then some".into()))
        );
        assert_eq!(
            eager.on_partial("and then some more", Millis(40)),
            Some(Guess::Withdraw)
        );
    }
}
