//! `LiveTranscriber` options and their TypeScript types. Every bad value throws a
//! `TypeError`/`RangeError` naming the field.

use crate::core::stt::reconnect::ReconnectConfig;
use crate::core::stt::transcriber::TranscriberConfig;
use crate::core::text::{decimal, replace_all};
use crate::web::convert::{range_error, type_error, with_message, Fields};
use crate::web::microphone::{self, WorkletSource};
use crate::web::policy::{parse_protocol, parse_reconnect_config};
use alloc::borrow::ToOwned;
use alloc::string::String;
use js_sys::Function;
use wasm_bindgen::prelude::*;

/// The app's callbacks (`onError` and `onEvent` go to the class's `AppCallbacks`).
pub(crate) struct Callbacks {
    pub(crate) provision: Function,
    pub(crate) on_partial: Option<Function>,
    pub(crate) on_final: Option<Function>,
    pub(crate) on_speech_start: Option<Function>,
    pub(crate) on_state_change: Option<Function>,
    pub(crate) on_error: Option<Function>,
    pub(crate) on_event: Option<Function>,
}

const MAX_SAMPLE_RATE: u64 = 96_000;
const MIN_SAMPLE_RATE: u64 = 8_000;

/// What the constructor takes: the core's config, the callbacks, and where `attachMicrophone`
/// loads its worklet from unless told otherwise.
pub(crate) struct ParsedOptions {
    pub(crate) config: TranscriberConfig,
    pub(crate) callbacks: Callbacks,
    pub(crate) worklet: Option<String>,
}

pub(crate) fn parse_options(options: &JsValue) -> Result<ParsedOptions, JsValue> {
    let fields = Fields::of(options, "options")?;
    let callbacks = Callbacks {
        provision: fields.function("provision")?,
        on_partial: fields.optional_function("onPartial")?,
        on_final: fields.optional_function("onFinal")?,
        on_speech_start: fields.optional_function("onSpeechStart")?,
        on_state_change: fields.optional_function("onStateChange")?,
        on_error: fields.optional_function("onError")?,
        on_event: fields.optional_function("onEvent")?,
    };
    let mut config = TranscriberConfig {
        reconnect: parse_policy(&fields.get("policy")?)?,
        ..TranscriberConfig::new(parse_protocol(&fields)?)
    };
    let rate = fields.count("sampleRate", u64::from(config.sample_rate), 0)?;
    if !(MIN_SAMPLE_RATE..=MAX_SAMPLE_RATE).contains(&rate) {
        return Err(range_error(
            &[
                "options.sampleRate must be a whole number from ",
                &decimal(MIN_SAMPLE_RATE),
                " to ",
                &decimal(MAX_SAMPLE_RATE),
            ]
            .concat(),
        ));
    }
    config.sample_rate = u32::try_from(rate).unwrap_or(u32::MAX);
    config.buffer_ms = fields.non_negative_ms("bufferMs", config.buffer_ms)?;
    config.connect_timeout_ms =
        fields.positive_ms("connectTimeoutMs", config.connect_timeout_ms)?;
    config.stop_timeout_ms = fields.positive_ms("stopTimeoutMs", config.stop_timeout_ms)?;
    config.provision_timeout_ms =
        fields.positive_ms("provisionTimeoutMs", config.provision_timeout_ms)?;
    config.max_message_bytes = fields.count("maxMessageBytes", config.max_message_bytes, 1)?;
    config.throttled_delay_ms =
        fields.non_negative_ms("throttledDelayMs", config.throttled_delay_ms)?;
    config.ack_timeout_ms = fields.non_negative_ms("ackTimeoutMs", config.ack_timeout_ms)?;
    let worklet = worklet_url(&fields)?;
    Ok(ParsedOptions {
        config,
        callbacks,
        worklet,
    })
}

/// `options.workletUrl`, not blank.
fn worklet_url(fields: &Fields<'_>) -> Result<Option<String>, JsValue> {
    match fields.optional_string("workletUrl")? {
        Some(url) if url.trim().is_empty() => {
            Err(range_error("options.workletUrl must not be empty"))
        }
        url => Ok(url),
    }
}

/// A `MediaStream` made in another window or frame cannot be captured from this page's.
const FOREIGN_STREAM: &str = "the MediaStream belongs to another window or frame: pass one from this page's navigator.mediaDevices.getUserMedia()";

/// `attachMicrophone(stream?, options?)` or `attachMicrophone(options)` with `options.stream`:
/// the stream (`undefined` for the default microphone) and where the worklet comes from
/// (`default`, the constructor's `workletUrl`, unless the call names one).
pub(crate) fn parse_microphone_args(
    first: Option<JsValue>,
    second: Option<JsValue>,
    default: Option<&str>,
) -> Result<(JsValue, WorkletSource), JsValue> {
    let default = || {
        default.map_or(WorkletSource::Blob, |url| {
            WorkletSource::Url(url.to_owned())
        })
    };
    let first = first.unwrap_or(JsValue::UNDEFINED);
    let second = second.unwrap_or(JsValue::UNDEFINED);
    if microphone::is_foreign_media_stream(&first) {
        return Err(type_error(FOREIGN_STREAM));
    }
    let (stream, options) = if first.is_undefined() || microphone::is_media_stream(&first) {
        (first, second)
    } else if first.is_object() && second.is_undefined() {
        let stream = Fields::of(&first, "options")?.get("stream")?;
        (stream, first)
    } else {
        return Err(type_error("stream must be a MediaStream"));
    };
    if microphone::is_foreign_media_stream(&stream) {
        return Err(type_error(FOREIGN_STREAM));
    }
    if !stream.is_undefined() && !microphone::is_media_stream(&stream) {
        return Err(type_error("options.stream must be a MediaStream"));
    }
    if options.is_undefined() {
        return Ok((stream, default()));
    }
    let fields = Fields::of(&options, "options")?;
    let worklet = worklet_url(&fields)?.map_or_else(default, WorkletSource::Url);
    Ok((stream, worklet))
}

/// `options.policy` through `parse_reconnect_config`, whose messages say `options.<field>`:
/// renamed to `options.policy.<field>` so the error names the field where the app wrote it.
fn parse_policy(policy: &JsValue) -> Result<ReconnectConfig, JsValue> {
    parse_reconnect_config(policy).map_err(|error| {
        with_message(error, |message| {
            replace_all(message, "options", "options.policy")
        })
    })
}

/// `TranscriberProtocol`, the union of every protocol's name, made by `build.rs` from the list.
#[wasm_bindgen(typescript_custom_section)]
const TRANSCRIBER_PROTOCOL: &str = include_str!(concat!(env!("OUT_DIR"), "/protocol_union.d.ts"));

#[wasm_bindgen(typescript_custom_section)]
const TRANSCRIBER_TYPES: &str = r#"

/**
 * What `provision()` resolves to: the live session's WebSocket URL (it carries the session token
 * or, for AssemblyAI, the single-use token), its id, the socket's subprotocols (Deepgram:
 * `["bearer", jwt]`), and fields merged into the protocol's start message (for protocols that have one).
 */
export interface ProvisionedSession {
  url: string;
  id?: string;
  protocols?: string[];
  config?: Record<string, unknown>;
}

/**
 * Why `provision()` is called: `"start"` (the first session), `"reconnect"` (fresh credentials for a
 * reconnect, for protocols whose credentials serve one connection: Deepgram, AssemblyAI; not a new
 * session), `"session_over"` (the last session is over: create a new one).
 */
export type ProvisionReason = "start" | "reconnect" | "session_over";

/** What the transcriber reports through `onEvent`: each close of the socket while it was wanted (and a `callback_error`: a callback threw). */
export interface TranscriberCloseEvent {
  type: "close";
  /** The close code (1006 for a socket that failed or never opened). */
  code: number;
  /** What the protocol says the code means. */
  class: "retry" | "session_over" | "throttled" | "fatal";
  /** What comes next. */
  next: "reconnect_same_url" | "reprovision" | "stop";
  /** Milliseconds until then (0 for `stop`). */
  delayMs: number;
}

/**
 * The provider guessed that utterance `utterance` ended (`eager_end_of_turn`: its final follows
 * unless a `turn_resumed` comes first), or withdrew the guess. Only protocols that send such
 * guesses (Deepgram Flux with `eager_eot_threshold`) report them.
 */
export interface TranscriberTurnHintEvent {
  type: "eager_end_of_turn" | "turn_resumed";
  utterance: number;
}

/** The microphone came back after `microphone_lost`: `gapMs` without capture, `attempts` to open it. */
export interface MicrophoneRestoredEvent {
  type: "microphone_restored";
  at: number;
  gapMs: number;
  attempts: number;
}

/**
 * The browser's default microphone became another device (`devicechange`) while the transcriber
 * captured the default: the new one captures now, `switchMs` after the change was seen (the old
 * one captured until then).
 */
export interface MicrophoneChangedEvent {
  type: "microphone_changed";
  at: number;
  switchMs: number;
}

export type TranscriberEvent = TranscriberCloseEvent | TranscriberTurnHintEvent | MicrophoneRestoredEvent | MicrophoneChangedEvent | CallbackErrorEvent;

/**
 * Creates a live session, normally by calling the app's own backend (which does `POST /v2/live`
 * with the provider key). `signal` aborts when the transcriber stops or after `provisionTimeoutMs`.
 * Reject with `{ status }` on an HTTP error: 408, 429 and 5xx are retried after a backoff, errors
 * without a status (and timeouts) too, at most `policy.maxProvisionAttempts` times in a row; other
 * statuses fail the transcriber. `attempt` is 1 for the first call for `reason`, and counts the
 * retries after it (a failure, a timeout, a call cancelled when the page went into the back-forward
 * cache); only the first call for `"session_over"` is a new session in the re-provision window.
 */
export type Provisioner = (request: { signal: AbortSignal; reason: ProvisionReason; attempt: number }) => Promise<ProvisionedSession> | ProvisionedSession;

export type TranscriberState = "idle" | "provisioning" | "connecting" | "open" | "backoff" | "stopped" | "failed";

/** `utterance` counts final transcripts from 1; partials and speech starts carry the number of the utterance under way. */
export interface TranscriptMeta {
  sessionId?: string;
  utterance: number;
}

/**
 * What `onError` receives. `terminal: true` comes once, right before the state becomes `failed`.
 * `dead_session`: sessions died by R5 (a URL whose socket never opens, or `end_session`) more often
 * than the re-provision window allows. `provision_exhausted`: `provision()` failed
 * `maxProvisionAttempts` times in a row (threw, network, timeout, 408, 429, 5xx).
 * `worklet_blocked` (not terminal; also rejects `attachMicrophone`): the capture worklet could not
 * load, usually a CSP whose `script-src` does not allow `blob:` — pass `workletUrl`.
 * `provision_unreachable` (not terminal, once until a `provision()` succeeds): `provision()` rejected
 * with a `TypeError`, as `fetch` does for no network or a CORS refusal; retried meanwhile.
 * `connect_failed`: a socket closed before it opened (a refused handshake: the credential, the
 * `protocols`, the URL); not terminal, but terminal when no socket ever opened and a second URL
 * failed `maxFailedConnects` connects in a row as well. `unexpected_messages` (not terminal, once): the
 * server's messages are not the chosen `protocol`'s; `messageType` says what arrived.
 * `microphone_lost` (not terminal): the capture's tracks ended (unplugged, revoked, stopped); a
 * microphone the transcriber opened itself is opened again (`microphone_restored` on `onEvent`).
 * `microphone_denied` (`terminal: true` for the microphone only: the transcriber goes on): the
 * permission was refused while opening it again.
 */
export interface TranscriberError extends Error {
  code:
    | "audio_dropped" | "reprovision_limit" | "provision_rejected" | "invalid_url" | "callback_error"
    | "dead_session" | "provision_exhausted" | "worklet_blocked" | "fatal_close" | "connect_failed"
    | "unexpected_messages" | "provision_unreachable" | "microphone_lost" | "microphone_denied";
  terminal: boolean;
  /** `provision_rejected`: the HTTP status. */
  status?: number;
  /** `audio_dropped`: frames dropped since the last report, their duration, and all frames dropped so far. */
  frames?: number;
  ms?: number;
  totalFrames?: number;
  /** `callback_error`: which callback threw (the thrown value is the `cause`). */
  callback?: string;
  /** `provision_exhausted`: the failures in a row; `provision_unreachable`: how many end the transcriber; `connect_failed`: how many failed connects in a row make a URL dead. */
  attempts?: number;
  /** `connect_failed`: failed connects in a row on this URL so far. */
  attempt?: number;
  /** `connect_failed`, `unexpected_messages`: the protocol spoken. */
  protocol?: TranscriberProtocol;
  /** `unexpected_messages`: such messages so far, and the last one's type field (never its content). */
  count?: number;
  messageType?: string;
  /** `fatal_close`: the close code the protocol classifies as fatal (a configuration or authorization error). */
  closeCode?: number;
}

/** Options of `attachMicrophone`. */
export interface AttachMicrophoneOptions {
  /** The stream to capture, when the options come first; the default microphone when absent. */
  stream?: MediaStream;
  /**
   * URL of turnguard's capture worklet (`turnguard/capture-worklet.js`, shipped as
   * `pkg/capture-worklet.js`) served by the app, normally same-origin: then a page needs no `blob:`
   * in its CSP `script-src`. Naming it asks for the worklet in every browser. Default: where the
   * browser hands a track's audio to the page (`MediaStreamTrackProcessor`: Chromium) the track is
   * read directly, with no worklet and 40–100 ms sooner; elsewhere the worklet's code as a
   * `blob:` URL.
   */
  workletUrl?: string;
}

export interface LiveTranscriberOptions {
  provision: Provisioner;
  /** The provider's wire protocol. Default "gladia". */
  protocol?: TranscriberProtocol;
  /** The reconnect rules (R1–R4); defaults as `new ReconnectPolicy()`. */
  policy?: ReconnectPolicyOptions;
  /** Sample rate of the PCM16 mono audio given to `sendAudio` and produced by `attachMicrophone`. Default 16000. */
  sampleRate?: number;
  /** Most audio kept while disconnected, in milliseconds; beyond it the oldest is dropped and reported. Default 10000. */
  bufferMs?: number;
  /** A socket that has not opened after this long counts as a failed connection. Default 10000. */
  connectTimeoutMs?: number;
  /** How long `stop()` waits for the last transcripts after `stop_recording`. Default 5000. */
  stopTimeoutMs?: number;
  /** A `provision()` not settled after this long is aborted (its signal fires) and retried as a failure without a status. Default 10000. */
  provisionTimeoutMs?: number;
  /** Server text messages longer than this (UTF-8 bytes) are counted as malformed and skipped, never copied into wasm. Default 1048576. */
  maxMessageBytes?: number;
  /** Least delay before reconnecting after a close the protocol classifies as throttled (e.g. too many concurrent sessions). Default 10000. */
  throttledDelayMs?: number;
  /** Where the session acknowledges audio (Gladia): a socket that acknowledged nothing this long while audio waited is half-open, and is closed and reconnected. 0 turns it off. Default 10000. */
  ackTimeoutMs?: number;
  /** Where `attachMicrophone` loads the capture worklet from unless its own options say: see `AttachMicrophoneOptions.workletUrl`. */
  workletUrl?: string;
  /** Partial transcripts: for captions only, never for starting a turn. */
  onPartial?(text: string, meta: TranscriptMeta): void;
  onFinal?(text: string, meta: TranscriptMeta): void;
  /** The user started talking (barge-in). */
  onSpeechStart?(meta: TranscriptMeta): void;
  onStateChange?(state: TranscriberState): void;
  onError?(error: TranscriberError): void;
  /** Each close of the socket while it was wanted: its code, class and what follows (for logs and timelines). */
  onEvent?(event: TranscriberEvent): void;
}

/** Counters since the transcriber was created. */
export interface TranscriberStats {
  /** Frames handed to an open socket, resends included. */
  framesSent: number;
  /** Of those, frames sent again because their socket closed before they were confirmed. */
  framesResent: number;
  /** Frames waiting for a socket right now. */
  framesBuffered: number;
  /** Frames dropped over `bufferMs` before they were ever sent. */
  framesDropped: number;
  /** Frames still waiting when the transcriber stopped or failed. */
  framesDiscarded: number;
  /** Sockets created. */
  connections: number;
  /** `provision()` calls. */
  provisions: number;
  /** Server messages that were not JSON objects with a `type`, incomplete transcripts, or text over `maxMessageBytes`. */
  malformedMessages: number;
  /** Server messages of an unknown `type`. */
  unknownMessages: number;
}
"#;
