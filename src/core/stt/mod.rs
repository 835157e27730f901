//! Live speech-to-text: the transcriber machine, its audio buffer, and one file per wire
//! protocol behind one small trait ([`protocol::Protocol`]). A new provider is one file here and
//! one line in [`PROTOCOLS`].

pub mod assemblyai;
pub mod deepgram;
pub mod elevenlabs;
pub mod gladia;
pub mod openai;
pub mod protocol;
pub mod resample;
pub mod soniox;
pub mod speechmatics;
pub mod transcriber;

use protocol::Protocol;

/// Makes a fresh protocol state.
pub type MakeProtocol = fn() -> Box<dyn Protocol>;

/// Every protocol by the name apps give as `protocol`; the first is the default.
pub const PROTOCOLS: &[(&str, MakeProtocol)] = &[
    ("gladia", gladia::protocol),
    ("deepgram", deepgram::protocol),
    ("assemblyai", assemblyai::protocol),
    ("openai", openai::protocol),
    ("speechmatics", speechmatics::protocol),
    ("soniox", soniox::protocol),
    ("elevenlabs", elevenlabs::protocol),
];

/// The protocol called `name`, if there is one.
pub fn protocol_named(name: &str) -> Option<Box<dyn Protocol>> {
    PROTOCOLS
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, make)| make())
}

/// The names of every protocol, for error messages: `"gladia", "deepgram", …`.
pub fn protocol_names() -> String {
    let quoted: Vec<String> = PROTOCOLS
        .iter()
        .map(|(name, _)| format!("\"{name}\""))
        .collect();
    quoted.join(", ")
}
