//! The session as the host of the ladder's and the transcriber's I/O: the code `TurnController`
//! and `LiveTranscriber` run on, here lent the ladder and the transcriber inside the session's
//! one machine.

use super::Shared;
use crate::core::stt::transcriber::Transcriber;
use crate::core::time::Millis;
use crate::core::turn::TurnLadder;
use crate::web::controller::{LadderHost, LadderIo};
use crate::web::driver::Host as _;
use crate::web::transcriber::{AnyTranscriberHost, TranscriberHost, TranscriberIo};
use alloc::rc::Weak;
use alloc::vec::Vec;
use core::cell::{Ref, RefMut};
use wasm_bindgen::JsValue;

impl LadderHost for Shared {
    fn ladder_io(&self) -> &LadderIo {
        &self.ladder
    }

    fn ladder_mut(&self) -> Option<(RefMut<'_, TurnLadder>, Millis)> {
        let (core, now) = self.driver.lend()?;
        Some((RefMut::map(core, |core| core.ladder_at(now)), now))
    }

    fn ladder(&self) -> Option<Ref<'_, TurnLadder>> {
        Some(Ref::map(self.driver.view()?, |core| core.ladder()))
    }
}

impl TranscriberHost for Shared {
    fn transcriber_io(&self) -> Option<&TranscriberIo> {
        self.stt.as_ref()
    }

    fn weak_host(&self) -> Weak<AnyTranscriberHost> {
        self.this.clone()
    }

    fn transcriber_mut(&self) -> Option<(RefMut<'_, Transcriber>, Millis)> {
        let (core, now) = self.driver.lend()?;
        let stt = RefMut::filter_map(core, |core| core.transcriber_at(now)).ok()?;
        Some((stt, now))
    }

    fn transcriber(&self) -> Option<Ref<'_, Transcriber>> {
        Ref::filter_map(self.driver.view()?, |core| core.transcriber()).ok()
    }

    fn take_audio(&self, pcm: Vec<u8>) -> Option<Vec<u8>> {
        self.driver.update(|core, now| core.on_audio(pcm, now));
        self.pump();
        None
    }

    fn provision_settled(&self, failure: Option<u16>) {
        self.emit_provisioned(failure);
    }

    fn report_error(&self, error: &JsValue) {
        Shared::report_error(self, error);
    }

    fn capture_echo_cancellation(&self, on: bool) {
        self.driver.update(|core, _| core.set_echo_canceller(on));
    }

    fn report_event(&self, event: crate::web::js_object::JsObject) {
        self.emit(event.set("at", self.driver.now().0 as f64));
    }
}
