//! Live transcription (rules L1–L6): not landed yet.
