//! Microphone capture (L5): `getUserMedia`, then PCM16 frames of 20 ms (320 samples at 16 kHz),
//! mono, at the transcriber's sample rate. Where the browser hands the page a track's audio
//! directly (`MediaStreamTrackProcessor`: Chromium) the track is read so ([`track_reader`]): the
//! sound reaches the page 40–100 ms sooner than through Web Audio. Elsewhere, and wherever the
//! app names `workletUrl`, an `AudioWorkletNode` mixes, resamples and frames it.
//!
//! The worklet processor is `capture-worklet.js` (it must be JavaScript: it runs on the audio
//! thread), shipped as `pkg/capture-worklet.js`. By default its source becomes a `blob:` URL, so
//! bundlers need no extra file; a page whose CSP `script-src` does not allow `blob:` passes
//! `workletUrl`, a same-origin URL of that file, instead.
//!
//! A running capture is an RAII handle: dropping a [`Capture`] stops its frames at once,
//! disconnects the nodes, closes its `AudioContext`, and stops the tracks of a stream it opened
//! itself (a stream the app passed in stays the app's to stop). Every failure on the way drops
//! what was built so far, and with it releases the microphone.

use crate::web::glue::{promise, settle_quietly};
use crate::web::js_object::JsObject;
use crate::web::track_reader::{self, TrackReader};
use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::RefCell;
use js_sys::{Array, ArrayBuffer, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{
    AudioContext, AudioContextOptions, AudioContextState, AudioWorkletNode,
    AudioWorkletNodeOptions, Blob, BlobPropertyBag, MediaDevices, MediaStream,
    MediaStreamAudioSourceNode, MediaStreamConstraints, MediaStreamTrack, MediaStreamTrackState,
    MessageEvent, Url,
};

#[wasm_bindgen(module = "/src/web/capture-worklet.js")]
extern "C" {
    /// The worklet's source as a JS string (never copied into wasm).
    #[wasm_bindgen(js_name = captureWorkletSource)]
    fn capture_worklet_source() -> JsValue;
}

#[wasm_bindgen]
extern "C" {
    /// `AudioContext` as the global names it when called: web-sys's binding resolves it once, at
    /// module load, so a page (or a test) that wraps or replaces it later would not be seen.
    #[wasm_bindgen(js_name = AudioContext)]
    type CurrentAudioContext;
    #[wasm_bindgen(constructor, catch, js_class = "AudioContext")]
    fn new(options: &AudioContextOptions) -> Result<CurrentAudioContext, JsValue>;
}

/// The processor name `capture-worklet.js` registers.
const PROCESSOR: &str = "turnguard-capture";

/// Whether `value` is a `MediaStream` (false where there is none, as in a worker).
pub(crate) fn is_media_stream(value: &JsValue) -> bool {
    // `instanceof` a global that does not exist throws.
    let defined = Reflect::get(&js_sys::global(), &JsValue::from_str("MediaStream"))
        .is_ok_and(|constructor| constructor.is_function());
    defined && value.is_instance_of::<MediaStream>()
}

/// Whether `value` is a `MediaStream` of another window or frame (`instanceof` fails across
/// realms): it must not pass for an options object.
pub(crate) fn is_foreign_media_stream(value: &JsValue) -> bool {
    value.is_object()
        && !is_media_stream(value)
        && value
            .unchecked_ref::<js_sys::Object>()
            .to_string()
            .as_string()
            .is_some_and(|tag| tag == "[object MediaStream]")
}

/// Where the capture worklet comes from.
#[derive(Clone)]
pub(crate) enum WorkletSource {
    /// The worklet's source as a `blob:` URL (needs `blob:` in the CSP's `script-src`).
    Blob,
    /// This URL, normally a same-origin copy of `capture-worklet.js`.
    Url(String),
}

/// Starts capturing `stream` (the default microphone when `undefined`); `on_frame` gets every
/// frame as little-endian PCM16 bytes. Once it runs, `adopt` gets the [`Capture`]; its error
/// rejects the promise, as does the browser's (e.g. `NotAllowedError` when the user refused the
/// microphone). A worklet that cannot load rejects with turnguard's `worklet_blocked` error,
/// handed to `on_blocked` first. `on_lost` is called once, later, when every audio track of the
/// stream has ended (unplugged, revoked, stopped): no frame comes after it. For the default
/// microphone (`stream` undefined), `on_default_moved` is called once when the browser's default
/// input becomes another device (`devicechange`); this capture goes on until replaced.
pub(crate) fn start(
    stream: JsValue,
    sample_rate: u32,
    worklet: WorkletSource,
    on_frame: impl FnMut(Vec<u8>) + 'static,
    adopt: impl FnOnce(Capture) -> Result<(), JsValue> + 'static,
    on_blocked: impl FnOnce(&JsValue) + 'static,
    lost: LostHandlers,
) -> Promise {
    promise(async move {
        let capture = capture(stream, sample_rate, &worklet, on_frame, on_blocked, lost).await?;
        // Dropping `capture` on the error path releases it.
        adopt(capture)?;
        Ok(JsValue::UNDEFINED)
    })
}

/// What a capture calls when its microphone goes away: `on_lost` when every track ended,
/// `on_default_moved` (a capture of the default microphone only) when the default is another
/// device now.
pub(crate) struct LostHandlers {
    pub(crate) on_lost: Box<dyn FnOnce()>,
    pub(crate) on_default_moved: Box<dyn FnOnce()>,
}

/// A running capture; stopped when dropped.
pub(crate) struct Capture {
    media: MediaStream,
    /// Whether this capture opened `media` (and so stops its tracks).
    owned: bool,
    context: Option<AudioContext>,
    source: Option<MediaStreamAudioSourceNode>,
    node: Option<AudioWorkletNode>,
    /// The track read directly, where the browser can (then there is no context, source or node).
    reader: Option<TrackReader>,
    _on_message: Option<Closure<dyn FnMut(JsValue)>>,
    /// Asks the tracks whether they ended, every [`TRACK_CHECK_MS`]: the interval's id and its
    /// callback.
    track_check: Option<(JsValue, Closure<dyn FnMut()>)>,
    /// Follows the browser's default input, for a capture opened on it.
    default_watch: Option<DefaultWatch>,
}

/// How often a capture asks its tracks whether they ended: a track stopped by the page, or one
/// whose device went away in Firefox, fires no `ended` event, and Firefox stops the frames.
const TRACK_CHECK_MS: i32 = 250;

async fn capture(
    stream: JsValue,
    sample_rate: u32,
    worklet: &WorkletSource,
    mut on_frame: impl FnMut(Vec<u8>) + 'static,
    on_blocked: impl FnOnce(&JsValue),
    lost: LostHandlers,
) -> Result<Capture, JsValue> {
    let LostHandlers {
        on_lost,
        on_default_moved,
    } = lost;
    let owned = stream.is_undefined();
    let media: MediaStream = if owned {
        open_microphone().await?
    } else {
        stream.unchecked_into()
    };
    let tracks = audio_tracks(&media);
    if tracks.is_empty() {
        return Err(crate::web::convert::type_error(
            "the MediaStream has no audio track",
        ));
    }
    if all_ended(&tracks) {
        return Err(crate::web::convert::type_error(
            "the MediaStream's audio track has ended",
        ));
    }
    // From here on, `?` drops `capture`, which releases what it holds.
    let mut capture = Capture {
        media,
        owned,
        context: None,
        source: None,
        node: None,
        reader: None,
        _on_message: None,
        track_check: None,
        default_watch: None,
    };
    // A track the browser hands over directly needs no worklet (Chromium); the worklet where it
    // does not, or where the app named the worklet's URL.
    let direct = matches!(worklet, WorkletSource::Blob) && track_reader::available();
    if let (true, Some(first)) = (direct, tracks.first()) {
        capture.reader = Some(TrackReader::start(first, sample_rate, on_frame)?);
        capture.watch(tracks, on_lost, on_default_moved);
        return Ok(capture);
    }
    let options = AudioContextOptions::new();
    options.set_latency_hint(&JsValue::from_str("interactive"));
    let context: AudioContext = CurrentAudioContext::new(&options)?.unchecked_into();
    capture.context = Some(context.clone());
    let url = match worklet {
        WorkletSource::Blob => blob_url()?,
        WorkletSource::Url(url) => url.clone(),
    };
    let added = add_module(&context, &url).await;
    if matches!(worklet, WorkletSource::Blob) {
        Url::revoke_object_url(&url).ok();
    }
    if let Err(cause) = added {
        let error = worklet_blocked(&url, matches!(worklet, WorkletSource::Blob), &cause);
        on_blocked(&error);
        return Err(error);
    }
    let source = context.create_media_stream_source(&capture.media)?;
    capture.source = Some(source.clone());
    let node = AudioWorkletNode::new_with_options(&context, PROCESSOR, &node_options(sample_rate))?;
    capture.node = Some(node.clone());
    capture.watch(tracks, on_lost, on_default_moved);
    let on_message = Closure::new(move |event: JsValue| {
        // The worklet transfers each frame's buffer: this is its only reference.
        let data = event.dyn_ref::<MessageEvent>().map(MessageEvent::data);
        if let Some(Ok(frame)) = data.map(JsCast::dyn_into::<ArrayBuffer>) {
            on_frame(Uint8Array::new(&frame).to_vec());
        }
    });
    node.port()?
        .set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    capture._on_message = Some(on_message);
    // Connected to the destination (it outputs silence) so every browser keeps pulling it.
    source
        .connect_with_audio_node(&node)?
        .connect_with_audio_node(&context.destination())?;
    if context.state() != AudioContextState::Running {
        // Not awaited: without a user gesture, resume() may wait for one; frames flow once it runs.
        settle_quietly(context.resume());
    }
    Ok(capture)
}

impl Capture {
    /// Watches the microphone go away: `on_lost` once every track ended, `on_default_moved` when
    /// the browser's default input moves (a capture it opened itself).
    fn watch(
        &mut self,
        tracks: Vec<MediaStreamTrack>,
        on_lost: Box<dyn FnOnce()>,
        on_default_moved: Box<dyn FnOnce()>,
    ) {
        if self.owned {
            self.default_watch = DefaultWatch::start(on_default_moved);
        }
        let mut on_lost = Some(on_lost);
        let check = Closure::new(move || {
            if on_lost.is_some() && all_ended(&tracks) {
                if let Some(lost) = on_lost.take() {
                    // Later: the owner drops this capture, and with it this closure.
                    spawn_local(async move { lost() });
                }
            }
        });
        let interval =
            crate::web::glue::set_interval(check.as_ref().unchecked_ref(), TRACK_CHECK_MS);
        self.track_check = Some((interval, check));
    }

    /// What the browser says of the capture's echo canceller (`getSettings().echoCancellation`
    /// of its first audio track); `None` where it says nothing.
    pub(crate) fn echo_cancellation(&self) -> Option<bool> {
        let track = audio_tracks(&self.media).into_iter().next()?;
        let get_settings = Reflect::get(&track, &JsValue::from_str("getSettings")).ok()?;
        let settings = get_settings
            .dyn_ref::<js_sys::Function>()?
            .call0(&track)
            .ok()?;
        Reflect::get(&settings, &JsValue::from_str("echoCancellation"))
            .ok()?
            .as_bool()
    }
}

/// Which device the browser's default audio input is, and a call when that changes.
struct DefaultWatch {
    devices: MediaDevices,
    on_change: Closure<dyn FnMut()>,
}

/// The default input as last read (`None` until read), and the call to make when it moves.
struct DefaultState {
    known: Option<String>,
    on_moved: Option<Box<dyn FnOnce()>>,
}

impl DefaultWatch {
    fn start(on_moved: Box<dyn FnOnce()>) -> Option<DefaultWatch> {
        let devices = web_sys::window()?.navigator().media_devices().ok()?;
        let state = Rc::new(RefCell::new(DefaultState {
            known: None,
            on_moved: Some(on_moved),
        }));
        let read = {
            let devices = devices.clone();
            move || {
                let (devices, state) = (devices.clone(), Rc::clone(&state));
                spawn_local(async move {
                    let Some(now) = default_input(&devices).await else {
                        return;
                    };
                    let mut state = state.borrow_mut();
                    let moved = state.known.as_ref().is_some_and(|known| *known != now);
                    state.known = Some(now);
                    let on_moved = if moved { state.on_moved.take() } else { None };
                    drop(state);
                    if let Some(on_moved) = on_moved {
                        on_moved();
                    }
                });
            }
        };
        read(); // the device the capture opened
        let on_change = Closure::<dyn FnMut()>::new(read);
        devices
            .add_event_listener_with_callback("devicechange", on_change.as_ref().unchecked_ref())
            .ok()?;
        Some(DefaultWatch { devices, on_change })
    }
}

impl Drop for DefaultWatch {
    fn drop(&mut self) {
        let _ = self.devices.remove_event_listener_with_callback(
            "devicechange",
            self.on_change.as_ref().unchecked_ref(),
        );
    }
}

/// Names the browser's default audio input: Chromium lists it as `deviceId` "default" (whose
/// `groupId` and label are the device's), Firefox lists it first. `None` when the list is not
/// readable or has no input.
async fn default_input(devices: &MediaDevices) -> Option<String> {
    let list = JsFuture::from(devices.enumerate_devices().ok()?)
        .await
        .ok()?;
    let text = |device: &JsValue, field: &str| {
        Reflect::get(device, &JsValue::from_str(field))
            .ok()
            .and_then(|value| value.as_string())
            .unwrap_or_default()
    };
    let inputs: Vec<JsValue> = Array::from(&list)
        .iter()
        .filter(|device| text(device, "kind") == "audioinput")
        .collect();
    match inputs
        .iter()
        .find(|device| text(device, "deviceId") == "default")
    {
        Some(default) => Some(text(default, "groupId") + "\n" + &text(default, "label")),
        None => inputs.first().map(|first| text(first, "deviceId")),
    }
}

fn audio_tracks(media: &MediaStream) -> Vec<MediaStreamTrack> {
    media
        .get_audio_tracks()
        .iter()
        .filter_map(|track| track.dyn_into::<MediaStreamTrack>().ok())
        .collect()
}

fn all_ended(tracks: &[MediaStreamTrack]) -> bool {
    tracks
        .iter()
        .all(|track| track.ready_state() == MediaStreamTrackState::Ended)
}

async fn open_microphone() -> Result<MediaStream, JsValue> {
    let window = web_sys::window()
        .ok_or_else(|| JsValue::from(js_sys::TypeError::new("getUserMedia needs a window")))?;
    let constraints = MediaStreamConstraints::new();
    let audio = JsObject::new()
        .set("channelCount", 1)
        .set("echoCancellation", true)
        .set("noiseSuppression", true)
        .set("autoGainControl", true)
        .build();
    constraints.set_audio(&audio);
    let devices = window.navigator().media_devices()?;
    let stream = JsFuture::from(devices.get_user_media_with_constraints(&constraints)?).await?;
    Ok(stream.unchecked_into())
}

async fn add_module(context: &AudioContext, url: &str) -> Result<(), JsValue> {
    JsFuture::from(context.audio_worklet()?.add_module(url)?).await?;
    Ok(())
}

fn node_options(sample_rate: u32) -> AudioWorkletNodeOptions {
    let options = AudioWorkletNodeOptions::new();
    options.set_number_of_inputs(1);
    options.set_number_of_outputs(1);
    options.set_output_channel_count(&Array::of1(&JsValue::from(1)));
    let frame_samples = libm::round(f64::from(sample_rate) / 50.0).max(1.0); // 20 ms
    let processor = JsObject::new()
        .set("targetRate", sample_rate)
        .set("frameSamples", frame_samples)
        .build();
    options.set_processor_options(Some(processor.unchecked_ref()));
    options
}

/// A `blob:` URL of the worklet's source, for one `addModule`: revoked once that settles (the
/// module is loaded by then), so no URL outlives its capture.
fn blob_url() -> Result<String, JsValue> {
    let options = BlobPropertyBag::new();
    options.set_type("text/javascript");
    let parts = Array::of1(&capture_worklet_source());
    Url::create_object_url_with_blob(&Blob::new_with_str_sequence_and_options(&parts, &options)?)
}

/// The error of a worklet that could not load: turnguard's own, naming CSP and the fix.
fn worklet_blocked(url: &str, blob: bool, cause: &JsValue) -> JsValue {
    let message = if blob {
        "the microphone capture worklet could not load from a blob: URL: a Content-Security-Policy whose script-src does not allow blob: blocks it; allow blob: in script-src, or pass attachMicrophone(stream, { workletUrl }) naming a same-origin copy of turnguard's capture-worklet.js".to_owned()
    } else {
        ["the microphone capture worklet could not load from ", url, ": check that the URL serves turnguard's capture-worklet.js as JavaScript and that the page's Content-Security-Policy script-src allows it"].concat()
    };
    let options = JsObject::new().set("cause", cause.clone()).build();
    let error = js_sys::Error::new_with_options(&message, options.unchecked_ref());
    error.set_name("WorkletBlockedError");
    let error = JsValue::from(error);
    let _ = Reflect::set(
        &error,
        &JsValue::from_str("code"),
        &"worklet_blocked".into(),
    );
    let _ = Reflect::set(&error, &JsValue::from_str("terminal"), &JsValue::FALSE);
    error
}

impl Drop for Capture {
    /// Stops frames at once, disconnects, closes the context, and stops the tracks it opened.
    fn drop(&mut self) {
        if let Some((interval, _)) = &self.track_check {
            crate::web::glue::clear_interval(interval);
        }
        self.reader = None;
        if let Some(node) = &self.node {
            if let Ok(port) = node.port() {
                port.set_onmessage(None);
            }
            let _ = node.disconnect();
        }
        if let Some(source) = &self.source {
            let _ = source.disconnect();
        }
        if self.owned {
            for track in self.media.get_tracks().iter() {
                if let Ok(track) = track.dyn_into::<MediaStreamTrack>() {
                    track.stop();
                }
            }
        }
        if let Some(context) = &self.context {
            settle_quietly(context.close());
        }
    }
}
