//! Building plain JS objects field by field.

use js_sys::{Object, Reflect};
use wasm_bindgen::{intern, JsValue};

/// A fresh plain object under construction. Setting a property on a fresh plain object cannot
/// fail, so the builder has no error path.
pub(crate) struct JsObject(Object);

impl JsObject {
    pub(crate) fn new() -> Self {
        JsObject(Object::new())
    }

    pub(crate) fn set(self, key: &str, value: impl Into<JsValue>) -> Self {
        let _ = Reflect::set(&self.0, &JsValue::from_str(intern(key)), &value.into());
        self
    }

    pub(crate) fn build(self) -> JsValue {
        self.0.into()
    }
}
