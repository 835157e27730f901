//! A deterministic driver for the live transcriber core in virtual time, shared by the
//! transcriber scenario files: the clock jumps to the next deadline and every action is recorded.

#![allow(dead_code)]

use turnguard::core::stt::backoff::Jitter;
use turnguard::core::stt::protocol::Profile;
use turnguard::core::stt::protocols::gladia;
use turnguard::core::stt::reconnect::ReconnectConfig;
use turnguard::core::stt::transcriber::{Action, Transcriber, TranscriberConfig};
use turnguard::core::time::Millis;

/// Gladia with the compressed policy of the browser tests, with exact delays.
pub fn config() -> TranscriberConfig {
    config_for(&gladia::PROFILE)
}

/// `protocol` with the compressed policy of the browser tests, with exact delays.
pub fn config_for(protocol: &'static Profile) -> TranscriberConfig {
    TranscriberConfig {
        reconnect: ReconnectConfig {
            stable_open_ms: 400,
            initial_delay_ms: 50,
            max_delay_ms: 400,
            jitter: Jitter::None,
            ..ReconnectConfig::default()
        },
        ..TranscriberConfig::new(protocol)
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

    /// Moves time forward by `ms`, firing what is due on the way, in order. A deadline that
    /// stays due after it fired with nothing to do (a busy timer) fails the test.
    pub fn advance(&mut self, ms: u64) -> Vec<Action> {
        let until = self.now.after(ms);
        let mut taken = self.take();
        let mut idle_fires = 0;
        while let Some(at) = self.t.poll_timeout().filter(|&at| at <= until) {
            self.now = self.now.max(at);
            self.t.handle_timeout(self.now);
            let fired = self.take();
            idle_fires = if fired.is_empty() { idle_fires + 1 } else { 0 };
            assert!(
                idle_fires < 100 || self.t.poll_timeout() > Some(self.now),
                "a busy timer: poll_timeout() stays at {at:?} (now {:?}) and firing it does nothing",
                self.now
            );
            taken.extend(fired);
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

    /// A server text message arrives.
    pub fn text(&mut self, message: &str) -> Vec<Action> {
        self.t.on_text(message, self.now);
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

/// Bytes of a 20 ms frame at 16 kHz.
pub const FRAME_BYTES: usize = 640;

/// A 20 ms frame at 16 kHz whose first four bytes are its number, little-endian.
pub fn frame(number: u32) -> Vec<u8> {
    let mut bytes = vec![0u8; FRAME_BYTES];
    bytes[..4].copy_from_slice(&number.to_le_bytes());
    bytes
}

/// The numbers of the frames among `actions`, in order: each 20 ms piece of a binary frame (a
/// protocol may join small frames or split large ones; pieces of silence, such as padding, are
/// skipped), and the base64 audio of each text frame (whose first sample is the number: frames are
/// numbered below 2^15, and a resampler keeps the first sample).
pub fn sent(actions: &[Action]) -> Vec<u32> {
    actions
        .iter()
        .flat_map(|action| match action {
            Action::SendBinary(bytes) => bytes
                .chunks(FRAME_BYTES)
                .filter(|piece| piece.iter().any(|&byte| byte != 0))
                .map(|piece| {
                    let mut number = [0u8; 4];
                    number[..piece.len().min(4)].copy_from_slice(&piece[..piece.len().min(4)]);
                    u32::from_le_bytes(number)
                })
                .collect(),
            Action::SendText(text) => base64_audio(text)
                .map(|pcm| u32::from(u16::from_le_bytes([pcm[0], pcm[1]])))
                .into_iter()
                .collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// The size in bytes of each audio frame among `actions`, on the wire: binary frames, and the
/// decoded base64 audio of text frames.
pub fn audio_sizes(actions: &[Action]) -> Vec<usize> {
    actions
        .iter()
        .filter_map(|action| match action {
            Action::SendBinary(bytes) => Some(bytes.len()),
            Action::SendText(text) => base64_audio(text).map(|pcm| pcm.len()),
            _ => None,
        })
        .collect()
}

/// The PCM of a text frame's base64 audio: the string value of its first key that starts with
/// `audio` (`audio`, `audio_base_64`) and has a string value.
pub fn base64_audio(text: &str) -> Option<Vec<u8>> {
    let key = text.find("\"audio")?;
    let rest = text.get(key + 1..)?;
    let mut parts = rest.split('"');
    let value = match (parts.next(), parts.next(), parts.next()) {
        (Some(_key), Some(":"), Some(value)) => value,
        _ => return None,
    };
    let digit = |b: u8| match b {
        b'A'..=b'Z' => Some(b - b'A'),
        b'a'..=b'z' => Some(b - b'a' + 26),
        b'0'..=b'9' => Some(b - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for b in value.bytes().filter(|&b| b != b'=') {
        acc = acc << 6 | u32::from(digit(b)?);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    (out.len() >= 2).then_some(out)
}

/// The finals among `actions`, in order.
pub fn finals(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|action| match action {
            Action::Final { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// The partials among `actions`, in order.
pub fn partials(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|action| match action {
            Action::Partial { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// The text frames among `actions`, in order, audio included.
pub fn texts(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|action| match action {
            Action::SendText(text) => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// The text frames among `actions` that carry no audio (start, keepalive and finish messages),
/// in order.
pub fn messages(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|action| match action {
            Action::SendText(text) if base64_audio(text).is_none() => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// Whether `action` puts audio on the wire.
pub fn is_audio(action: &Action) -> bool {
    match action {
        Action::SendBinary(_) => true,
        Action::SendText(text) => base64_audio(text).is_some(),
        _ => false,
    }
}

/// A Gladia message of this `type` and nothing else.
pub fn kind(kind: &str) -> String {
    format!(r#"{{"type":"{kind}"}}"#)
}

/// A Gladia `transcript`.
pub fn transcript(is_final: bool, text: &str) -> String {
    format!(
        r#"{{"type":"transcript","data":{{"is_final":{is_final},"utterance":{{"text":"{text}"}}}}}}"#
    )
}

/// A Gladia `audio_chunk` acknowledging `bytes` more bytes.
pub fn ack(bytes: u64) -> String {
    format!(r#"{{"type":"audio_chunk","acknowledged":true,"data":{{"byte_range":[0,{bytes}]}}}}"#)
}

pub const URL: &str = "wss://stt.example/v2/live?token=one";
