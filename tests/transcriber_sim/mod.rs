//! A deterministic driver for the live transcriber core in virtual time, shared by the
//! transcriber scenario files: the clock jumps to the next deadline and every action is recorded.

#![allow(dead_code)]

use turnguard::core::backoff::Jitter;
use turnguard::core::gladia::MessageView;
use turnguard::core::reconnect::ReconnectConfig;
use turnguard::core::time::Millis;
use turnguard::core::transcriber::{Action, Transcriber, TranscriberConfig};

/// The compressed policy of the browser tests, with exact delays.
pub fn config() -> TranscriberConfig {
    TranscriberConfig {
        reconnect: ReconnectConfig {
            stable_open_ms: 400,
            initial_delay_ms: 50,
            max_delay_ms: 400,
            jitter: Jitter::None,
            ..ReconnectConfig::default()
        },
        ..TranscriberConfig::default()
    }
}

/// A transcriber, a virtual clock, and every action it asked for, with the time it asked.
pub struct Drive {
    pub t: Transcriber,
    pub now: Millis,
    pub log: Vec<(Millis, Action)>,
}

impl Drive {
    pub fn new(config: TranscriberConfig) -> Self {
        Drive {
            t: Transcriber::new(config),
            now: Millis(0),
            log: Vec::new(),
        }
    }

    /// The actions queued since the last call.
    pub fn take(&mut self) -> Vec<Action> {
        let mut taken = Vec::new();
        while let Some(action) = self.t.poll_action() {
            self.log.push((self.now, action.clone()));
            taken.push(action);
        }
        taken
    }

    /// Moves time forward by `ms`, firing what is due on the way, in order.
    pub fn advance(&mut self, ms: u64) -> Vec<Action> {
        let until = self.now.after(ms);
        let mut taken = self.take();
        while let Some(at) = self.t.poll_timeout().filter(|&at| at <= until) {
            self.now = self.now.max(at);
            self.t.handle_timeout(self.now);
            taken.extend(self.take());
        }
        self.now = until;
        taken
    }

    /// Jumps to the next deadline and fires it.
    pub fn step(&mut self) -> Vec<Action> {
        let at = self.t.poll_timeout().expect("a timer is armed");
        self.now = self.now.max(at);
        self.t.handle_timeout(self.now);
        self.take()
    }

    pub fn start(&mut self) -> Vec<Action> {
        self.t.start(self.now);
        self.take()
    }

    pub fn provisioned(&mut self, url: &str) -> Vec<Action> {
        self.t.on_provisioned(url, self.now);
        self.take()
    }

    pub fn open(&mut self) -> Vec<Action> {
        self.t.on_open(self.now);
        self.take()
    }

    pub fn close(&mut self, code: u16) -> Vec<Action> {
        self.t.on_close(code, self.now);
        self.take()
    }

    pub fn audio(&mut self, number: u32) -> Vec<Action> {
        assert!(self.t.send_audio(frame(number), self.now));
        self.take()
    }

    pub fn message(&mut self, view: MessageView) -> Vec<Action> {
        self.t.on_message(Some(view), self.now);
        self.take()
    }

    /// Started, provisioned and open on `url`.
    pub fn opened(config: TranscriberConfig, url: &str) -> Self {
        let mut drive = Drive::new(config);
        drive.start();
        drive.provisioned(url);
        drive.open();
        drive
    }

    pub fn connects(&self) -> Vec<(Millis, String)> {
        self.log
            .iter()
            .filter_map(|(at, action)| match action {
                Action::Connect(url) => Some((*at, url.clone())),
                _ => None,
            })
            .collect()
    }

    pub fn count(&self, wanted: &Action) -> usize {
        self.log
            .iter()
            .filter(|(_, action)| action == wanted)
            .count()
    }
}

/// A 20 ms frame at 16 kHz whose first four bytes are its number, little-endian.
pub fn frame(number: u32) -> Vec<u8> {
    let mut bytes = vec![0u8; 640];
    bytes[..4].copy_from_slice(&number.to_le_bytes());
    bytes
}

/// The numbers of the frames among `actions`, in order.
pub fn sent(actions: &[Action]) -> Vec<u32> {
    actions
        .iter()
        .filter_map(|action| match action {
            Action::Send(bytes) => Some(u32::from_le_bytes(bytes[..4].try_into().unwrap())),
            _ => None,
        })
        .collect()
}

pub fn transcript(is_final: bool, text: &str) -> MessageView {
    MessageView {
        is_final: Some(is_final),
        text: Some(text.to_owned()),
        ..MessageView::of_kind("transcript")
    }
}

pub fn ack(bytes: u64) -> MessageView {
    MessageView {
        acknowledged_bytes: Some(bytes),
        ..MessageView::of_kind("audio_chunk")
    }
}

pub const URL: &str = "wss://stt.example/v2/live?token=one";
