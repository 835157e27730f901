//! Live speech-to-text: the transcriber machine and its audio buffer, the reconnect policy and
//! its backoff (R1–R6, L1–L9), and the wire protocols behind one seam ([`protocol`]): one file
//! each in [`protocols`].

pub mod backoff;
pub mod capture_framer;
pub mod protocol;
pub mod protocols;
pub mod reconnect;
pub mod resample;
pub mod transcriber;
