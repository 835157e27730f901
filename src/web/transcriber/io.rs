//! The transcriber's I/O: `provision()` calls (guarded, abortable, one current at a time) and the
//! WebSocket (one current socket; events of any other are ignored). Each result goes to the core
//! through the driver.

use super::{call_provision, close_socket, open_socket, Shared};
use crate::web::driver;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

impl Shared {
    pub(super) fn provision(self: &Rc<Self>) {
        let id = {
            let mut io = self.io.borrow_mut();
            io.provision_id = io.provision_id.wrapping_add(1);
            io.provision_id
        };
        let weak = Rc::downgrade(self);
        let done = Closure::once_into_js(move |url: String, session_id: JsValue, status: i32| {
            if let Some(shared) = weak.upgrade() {
                shared.on_provision_settled(id, &url, session_id, status);
            }
        });
        // The app's code runs here: no borrow is held.
        let abort = call_provision(&self.callbacks.provision, &done);
        let current = self.io.borrow().provision_id == id;
        if current {
            self.io.borrow_mut().provision_abort = Some(abort);
        } else {
            abort.abort(); // stopped from inside provision()
        }
    }

    fn on_provision_settled(self: &Rc<Self>, id: u32, url: &str, session_id: JsValue, status: i32) {
        {
            let mut io = self.io.borrow_mut();
            if io.provision_id != id || io.provision_abort.take().is_none() {
                return;
            }
            if status < 0 {
                io.session_id = session_id;
            }
        }
        if status < 0 {
            driver::input(self, |core, now| core.on_provisioned(url, now));
        } else {
            let status = u16::try_from(status).unwrap_or(0);
            driver::input(self, |core, now| core.on_provision_failed(status, now));
        }
    }

    /// Aborts an unfinished `provision()` call; its result will be ignored.
    pub(super) fn abort_provision(&self) {
        let abort = {
            let mut io = self.io.borrow_mut();
            io.provision_id = io.provision_id.wrapping_add(1);
            io.provision_abort.take()
        };
        if let Some(abort) = abort {
            abort.abort();
        }
    }

    pub(super) fn connect(self: &Rc<Self>, url: &str) {
        self.close_socket();
        let id = {
            let mut io = self.io.borrow_mut();
            io.socket_id = io.socket_id.wrapping_add(1);
            io.socket_id
        };
        let socket = open_socket(
            url,
            id,
            self.on_socket_event.as_ref().unchecked_ref(),
            self.max_message_bytes,
        );
        if socket.is_null() {
            // Inside a pump: what this queues is performed by the running pump.
            let _ = self.driver.update(|core, now| core.on_connect_error(now));
        } else {
            self.io.borrow_mut().socket = Some(socket);
        }
    }

    pub(super) fn close_socket(&self) {
        let socket = self.io.borrow_mut().socket.take();
        if let Some(socket) = socket {
            close_socket(&socket);
        }
    }

    pub(super) fn on_socket_event(self: &Rc<Self>, id: u32, kind: u32, value: &JsValue) {
        {
            let mut io = self.io.borrow_mut();
            if io.socket_id != id || io.socket.is_none() {
                return;
            }
            if kind == 1 {
                io.socket = None;
            }
        }
        let text = if kind == 2 { value.as_string() } else { None };
        let code = value
            .as_f64()
            .filter(|code| (0.0..=65_535.0).contains(code))
            .map_or(1006, |code| code as u16);
        driver::input(self, |core, now| match kind {
            0 => core.on_open(now),
            1 => core.on_close(code, now),
            3 => core.on_oversize_message(now),
            _ => match &text {
                Some(text) => core.on_text(text, now),
                None => core.on_binary_message(now),
            },
        });
    }
}
