//! The transcriber's I/O: `provision()` calls (guarded, abortable, one current at a time) and the
//! WebSocket (one current socket; events of any other are ignored). Each result goes to the core
//! through the driver.

use super::provision::{self, Provisioned};
use super::socket::{Socket, SocketEvent};
use super::Shared;
use crate::web::driver;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use web_sys::AbortController;

impl Shared {
    pub(super) fn provision(self: &Rc<Self>) {
        let id = {
            let mut io = self.io.borrow_mut();
            io.provision_id = io.provision_id.wrapping_add(1);
            io.provision_id
        };
        // `AbortController` exists wherever `WebSocket` does; without one, provision() gets no signal.
        let abort = AbortController::new().ok();
        let signal = abort
            .as_ref()
            .map_or(JsValue::UNDEFINED, |abort| abort.signal().into());
        let reason = self
            .driver
            .read(|core| core.provision_reason().as_str())
            .unwrap_or("start");
        // The app's code runs here: no borrow is held.
        let settled = provision::call(&self.callbacks.provision, &signal, reason);
        let current = self.io.borrow().provision_id == id;
        if current {
            self.io.borrow_mut().provision_abort = abort;
        } else if let Some(abort) = abort {
            abort.abort(); // stopped from inside provision()
        }
        let weak = Rc::downgrade(self);
        wasm_bindgen_futures::spawn_local(async move {
            let outcome = provision::outcome(settled).await;
            if let Some(shared) = weak.upgrade() {
                shared.on_provision_settled(id, outcome);
            }
        });
    }

    fn on_provision_settled(self: &Rc<Self>, id: u32, outcome: Provisioned) {
        {
            let mut io = self.io.borrow_mut();
            if io.provision_id != id {
                return; // aborted, timed out or superseded: its result no longer counts
            }
            // Settled: a later stop has nothing to abort.
            io.provision_id = io.provision_id.wrapping_add(1);
            io.provision_abort = None;
            if let Provisioned::Session { id, protocols, .. } = &outcome {
                io.session_id = id.clone();
                io.protocols = protocols.clone();
            }
        }
        match outcome {
            Provisioned::Session { url, config, .. } => {
                let config = js_sys::JSON::stringify(&config)
                    .ok()
                    .and_then(|json| json.as_string())
                    .filter(|_| config.is_object());
                driver::input(self, |core, now| {
                    core.set_start_config(config);
                    core.on_provisioned(&url, now)
                });
            }
            Provisioned::Failed { status } => {
                driver::input(self, |core, now| core.on_provision_failed(status, now));
            }
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
        let weak = Rc::downgrade(self);
        let protocols = self.io.borrow().protocols.clone();
        let socket = Socket::open(url, &protocols, self.max_message_bytes, move |event| {
            if let Some(shared) = weak.upgrade() {
                shared.on_socket_event(id, event);
            }
        });
        match socket {
            Some(socket) => self.io.borrow_mut().socket = Some(socket),
            // A URL the browser refuses. Inside a pump: what this queues is performed by the
            // running pump.
            None => {
                let _ = self.driver.update(|core, now| core.on_connect_error(now));
            }
        }
    }

    pub(super) fn close_socket(&self) {
        let socket = self.io.borrow_mut().socket.take();
        drop(socket); // closes it, outside the borrow
    }

    fn on_socket_event(self: &Rc<Self>, id: u32, event: SocketEvent) {
        let closed = {
            let mut io = self.io.borrow_mut();
            if io.socket_id != id || io.socket.is_none() {
                return;
            }
            match event {
                SocketEvent::Close(_) => io.socket.take(),
                _ => None,
            }
        };
        // A closed socket's handlers are cleared now (this one finishes; its closure is freed after).
        drop(closed);
        driver::input(self, |core, now| match &event {
            SocketEvent::Open => core.on_open(now),
            SocketEvent::Close(code) => core.on_close(*code, now),
            SocketEvent::Oversize => core.on_oversize_message(now),
            SocketEvent::Text(text) => core.on_text(text, now),
            SocketEvent::Binary => core.on_binary_message(now),
        });
    }
}
