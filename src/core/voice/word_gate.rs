//! Which of the provider's words are the user's while the agent sounds (V4, V8): words the
//! agent's echo would pass for with no voice above it, short words no voice came with, and the
//! agent's own words opening an utterance are not, nor a short final of the agent's words where
//! it paused.

use super::echo;
use super::echo_words::{only_words_of, RecentSpeech};
use super::VoiceCore;
use crate::core::time::Millis;
use alloc::borrow::Cow;
use alloc::string::String;

/// What the provider's words are weighed against, set from the echo's measure and the player.
#[derive(Debug, Default)]
pub(super) struct WordGate {
    /// The agent's echo would pass for voice now (V8): the provider's words count only with the
    /// detector's voice heard lately.
    echo_masks_words: bool,
    /// Words shorter than `min_partial_chars` count only with the detector's voice heard lately:
    /// the agent sounds and the detector hears this microphone (V8).
    short_words_need_voice: bool,
    /// The agent's last sentences, and whether the provider's current utterance began while its
    /// words were taken for their echo (`None` until its first words): such an utterance opens
    /// with the agent's words (V8).
    pub(super) recent_speech: RecentSpeech,
    utterance_began_as_echo: Option<bool>,
    /// The agent's words about the place it paused at, once the player said where that was: a
    /// leak of the canceller transcribed (V8). Set anew for each pause.
    pub(super) paused_on: String,
}

impl WordGate {
    /// Whether the current utterance began as the echo, fixed by its first words (`echo_now`).
    pub(super) fn begin_utterance(&mut self, echo_now: bool) -> bool {
        *self.utterance_began_as_echo.get_or_insert(echo_now)
    }

    /// The provider heard nothing yet, or its utterance ended with a final: the next words begin
    /// an utterance. Returns whether the one that ended began as the echo.
    pub(super) fn utterance_ended(&mut self) -> bool {
        self.utterance_began_as_echo.take() == Some(true)
    }
}

impl VoiceCore {
    /// The user's words of the provider's `text`: all of them, or for an utterance that began as
    /// the agent's echo, those after the agent's (V8).
    pub(super) fn users_words<'t>(
        &self,
        text: &'t str,
        began_as_echo: bool,
    ) -> Option<Cow<'t, str>> {
        if began_as_echo {
            self.words.recent_speech.users_words(text).map(Cow::Owned)
        } else {
            Some(Cow::Borrowed(text))
        }
    }

    /// The provider's current utterance began while its words were taken for the agent's echo
    /// (V8): its words guess nothing.
    #[must_use]
    pub fn utterance_began_as_echo(&self) -> bool {
        self.words.utterance_began_as_echo == Some(true)
    }

    /// Whether the agent's echo would pass for voice now (V8, from the echo's measure).
    pub fn set_echo_masks_words(&mut self, masks: bool) {
        self.words.echo_masks_words = masks;
    }

    /// Whether the provider's short words need the detector's voice to count (V8): the agent
    /// sounds (or did within the words' latency) and the detector has heard voice before, so it
    /// hears this microphone. A working canceller still leaks for a moment now and then (after
    /// double talk most), and a recognizer makes a word of it that the detector did not take for
    /// voice.
    pub fn set_short_words_need_voice(&mut self, need: bool) {
        self.words.short_words_need_voice = need;
    }

    /// The provider's words now are taken for the agent's echo (V8): its echo would pass for
    /// voice, and the detector heard no voice above it within the words' latency.
    #[must_use]
    pub fn words_are_echo(&self, now: Millis) -> bool {
        self.words.echo_masks_words && !self.voice_lately(now)
    }

    /// Short words now are a recognizer's guess at the agent's sound: no voice came with them.
    pub(super) fn voiceless(&self, now: Millis) -> bool {
        self.words.short_words_need_voice && !self.voice_lately(now)
    }

    /// The detector hears voice, or heard it within the words' latency.
    fn voice_lately(&self, now: Millis) -> bool {
        self.voice_heard()
            || self
                .voice_ended_at
                .is_some_and(|ended| now < ended.after(echo::WORDS_TAIL_MS))
    }

    /// While paused, `text` is only the agent's words about where it paused: the provider's
    /// word for a leak of the agent's echo, which the detector took for voice (V8).
    pub(super) fn agents_words_where_paused(&self, text: &str) -> bool {
        self.is_paused() && only_words_of(text, &self.words.paused_on)
    }

    /// Shorter than a partial that cuts by itself (`min_partial_chars`).
    pub(super) fn is_short(&self, text: &str) -> bool {
        text.trim().chars().count() < self.config.min_partial_chars
    }
}
