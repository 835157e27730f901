//! Every wire protocol, one file each: its [`Profile`] (`pub const PROFILE`) and its codec. The
//! list is made from this folder by `build.rs`, so a new protocol is a new file here (and its
//! fixture in `tests/protocols/`), with no line to add anywhere else.

use crate::core::stt::protocol::Profile;
use alloc::string::String;
use alloc::vec::Vec;

include!(concat!(env!("OUT_DIR"), "/protocols.rs"));

/// The protocol called `name`, if there is one.
pub fn named(name: &str) -> Option<&'static Profile> {
    ALL.iter().copied().find(|profile| profile.name == name)
}

/// The names of every protocol, for error messages: `"assemblyai", "deepgram", …`.
pub fn names() -> String {
    let quoted: Vec<String> = ALL
        .iter()
        .map(|profile| ["\"", profile.name, "\""].concat())
        .collect();
    quoted.join(", ")
}
