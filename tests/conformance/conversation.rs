//! A transcriber talking to one protocol's scripted server in virtual time: the [`Drive`] of the
//! core, with the fixture's messages, numbered frames and fresh URLs.

use super::{Fixture, Said};
use crate::transcriber_sim::{config_for, frame, Drive};
use turnguard::core::stt::transcriber::{Action, State};

/// One transcriber on one protocol, and what was said and captured so far.
pub struct Conversation {
    pub d: Drive,
    pub fixture: &'static Fixture,
    /// Utterances said so far, and on the current connection.
    said: u64,
    turn: u64,
    /// Frames captured so far: the next is numbered one more (frames are numbered from 1).
    frames: u32,
    /// URLs `provision()` gave so far.
    urls: u32,
}

impl Conversation {
    /// A transcriber on `fixture`'s protocol, not started.
    pub fn new(fixture: &'static Fixture) -> Self {
        Conversation {
            d: Drive::new(config_for(fixture.profile)),
            fixture,
            said: 0,
            turn: 0,
            frames: 0,
            urls: 0,
        }
    }

    /// Started, provisioned, open, and audio flowing.
    pub fn opened(fixture: &'static Fixture) -> Self {
        let mut c = Conversation::new(fixture);
        c.connect();
        c
    }

    /// From `Idle`: started, provisioned and open (and started, where audio waits for it).
    pub fn connect(&mut self) -> Vec<Action> {
        let mut actions = self.d.start();
        actions.extend(self.provisioned());
        actions.extend(self.open());
        actions
    }

    /// `provision()` answers with the fixture's URL, then a fresh one each time.
    pub fn provisioned(&mut self) -> Vec<Action> {
        self.urls += 1;
        let url = self.url();
        self.d.provisioned(&url)
    }

    /// The URL `provision()` gave last.
    pub fn url(&self) -> String {
        let url = self.fixture.url;
        match self.urls {
            0 | 1 => url.to_owned(),
            n => {
                let join = if url.contains('?') { '&' } else { '?' };
                format!("{url}{join}n={n}")
            }
        }
    }

    /// The socket opens; where audio waits for the server's answer to the start, it comes.
    pub fn open(&mut self) -> Vec<Action> {
        self.turn = 0;
        let mut actions = self.d.open();
        if let Some(started) = self.fixture.started {
            actions.extend(self.d.text(started));
        }
        actions
    }

    /// After a close: the backoff, `provision()` where it is called, and the socket open again.
    pub fn reconnect(&mut self) -> Vec<Action> {
        let mut actions = Vec::new();
        while self.d.t.state() != State::Connecting {
            let step = self.d.step();
            let provision = step.contains(&Action::Provision);
            actions.extend(step);
            if provision {
                actions.extend(self.provisioned());
            }
        }
        actions.extend(self.open());
        actions
    }

    /// `count` frames handed over at once.
    pub fn capture(&mut self, count: u32) -> Vec<Action> {
        (0..count).flat_map(|_| self.next_frame()).collect()
    }

    /// `count` frames, one every 20 ms, as a microphone gives them.
    pub fn speak(&mut self, count: u32) -> Vec<Action> {
        let mut actions = Vec::new();
        for _ in 0..count {
            actions.extend(self.next_frame());
            actions.extend(self.d.advance(20));
        }
        actions
    }

    fn next_frame(&mut self) -> Vec<Action> {
        self.frames += 1;
        assert!(self.d.t.send_audio(frame(self.frames), self.d.now));
        self.d.take()
    }

    /// Frames captured so far.
    pub fn frames(&self) -> u32 {
        self.frames
    }

    /// The next utterance, with its words at `start_ms..end_ms` of this connection's audio.
    pub fn next(&self, text: &'static str, start_ms: u64, end_ms: u64) -> Said {
        Said {
            id: self.said,
            turn: self.turn,
            text,
            start_ms,
            end_ms,
        }
    }

    /// The server sends the whole script of the next utterance.
    pub fn say(&mut self, text: &'static str) -> Vec<Action> {
        self.say_over(text, 0, 500)
    }

    /// The server sends the whole script of the next utterance, its words at
    /// `start_ms..end_ms`.
    pub fn say_over(&mut self, text: &'static str, start_ms: u64, end_ms: u64) -> Vec<Action> {
        let said = self.next(text, start_ms, end_ms);
        self.said += 1;
        self.turn += 1;
        self.hear_all((self.fixture.utterance)(&said))
    }

    /// A server message arrives.
    pub fn hear(&mut self, message: &str) -> Vec<Action> {
        self.d.text(message)
    }

    /// Server messages arrive, in order.
    pub fn hear_all<S: AsRef<str>>(
        &mut self,
        messages: impl IntoIterator<Item = S>,
    ) -> Vec<Action> {
        messages
            .into_iter()
            .flat_map(|message| self.hear(message.as_ref()))
            .collect()
    }
}
