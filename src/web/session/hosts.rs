//! The session as the host of the ladder's and the transcriber's I/O: the code `TurnController`
//! and `LiveTranscriber` run on, here feeding the ladder and the transcriber inside the session's
//! one machine.

use super::Shared;
use crate::core::stt::transcriber::Transcriber;
use crate::core::time::Millis;
use crate::core::turn::TurnLadder;
use crate::web::controller::{LadderHost, LadderIo};
use crate::web::driver;
use crate::web::transcriber::{TranscriberHost, TranscriberIo};
use std::rc::Weak;
use wasm_bindgen::JsValue;

impl LadderHost for Shared {
    fn ladder_io(&self) -> &LadderIo {
        &self.ladder
    }

    fn ladder_input(&self, input: &mut dyn FnMut(&mut TurnLadder, Millis)) {
        if let Some(this) = self.this.upgrade() {
            driver::input(&this, |core, now| input(core.ladder_at(now), now));
        }
    }

    fn read_ladder(&self, read: &mut dyn FnMut(&TurnLadder)) {
        self.driver.read(|core| read(core.ladder()));
    }

    fn is_disposed(&self) -> bool {
        self.driver.is_disposed()
    }
}

impl TranscriberHost for Shared {
    fn transcriber_io(&self) -> Option<&TranscriberIo> {
        self.stt.as_ref()
    }

    fn weak_host(&self) -> Weak<dyn TranscriberHost> {
        self.this.clone()
    }

    fn transcriber_input(&self, pump: bool, input: &mut dyn FnMut(&mut Transcriber, Millis)) {
        let mut feed = |core: &mut crate::core::voice::session::SessionCore, now: Millis| {
            if let Some(stt) = core.transcriber_at(now) {
                input(stt, now);
            }
        };
        match (pump, self.this.upgrade()) {
            (true, Some(this)) => {
                driver::input(&this, |core, now| feed(core, now));
            }
            _ => {
                self.driver.update(|core, now| feed(core, now));
            }
        }
    }

    fn read_transcriber(&self, read: &mut dyn FnMut(&Transcriber)) {
        self.driver.read(|core| {
            if let Some(stt) = core.transcriber() {
                read(stt);
            }
        });
    }

    fn is_disposed(&self) -> bool {
        self.driver.is_disposed()
    }

    fn provision_settled(&self, failure: Option<u16>) {
        self.emit_provisioned(failure);
    }

    fn report_error(&self, error: &JsValue) {
        Shared::report_error(self, error);
    }
}
