//! JS values in, Rust values out: every check names the field it rejects, and throws a real
//! `TypeError` (wrong type) or `RangeError` (right type, value out of range), never a panic.

use crate::core::text::decimal;
use alloc::string::String;
use js_sys::{Array, Function, Reflect};
use wasm_bindgen::{JsCast, JsValue};

/// A finite number with no fractional part (what `fract() == 0.0` said with `std`).
pub(crate) fn is_whole(value: f64) -> bool {
    value.is_finite() && libm::trunc(value) == value
}

pub(crate) fn type_error(message: &str) -> JsValue {
    js_sys::TypeError::new(message).into()
}

pub(crate) fn range_error(message: &str) -> JsValue {
    js_sys::RangeError::new(message).into()
}

/// The same `TypeError` or `RangeError` with its message rewritten (an option parsed by a part
/// renamed to where the app wrote it); any other value as it was.
#[cfg(feature = "transcriber")]
pub(crate) fn with_message(error: JsValue, rewrite: impl FnOnce(&str) -> String) -> JsValue {
    let message = Reflect::get(&error, &JsValue::from_str("message"))
        .ok()
        .and_then(|message| message.as_string());
    let Some(message) = message else {
        return error;
    };
    if error.is_instance_of::<js_sys::RangeError>() {
        range_error(&rewrite(&message))
    } else if error.is_instance_of::<js_sys::TypeError>() {
        type_error(&rewrite(&message))
    } else {
        error
    }
}

/// A real `Error` (with a stack) carrying turnguard's `code` and `terminal`, and `cause` if any:
/// what every class's `onError` receives.
pub(crate) fn coded_error(
    message: &str,
    cause: Option<&JsValue>,
    code: &str,
    terminal: bool,
) -> JsValue {
    let error = match cause {
        Some(cause) => {
            let options = js_sys::Object::new();
            let _ = Reflect::set(&options, &JsValue::from_str("cause"), cause);
            js_sys::Error::new_with_options(message, &options)
        }
        None => js_sys::Error::new(message),
    };
    let error = JsValue::from(error);
    // Setting a property of an object made here cannot fail.
    let _ = Reflect::set(&error, &JsValue::from_str("code"), &code.into());
    let _ = Reflect::set(&error, &JsValue::from_str("terminal"), &terminal.into());
    error
}

/// The fields of one JS object, read with the object's path (`options`, `routes[1]`) in errors.
pub(crate) struct Fields<'a> {
    object: &'a JsValue,
    path: &'a str,
}

impl<'a> Fields<'a> {
    /// Fails with a `TypeError` unless `object` is a non-null object (functions included).
    pub(crate) fn of(object: &'a JsValue, path: &'a str) -> Result<Self, JsValue> {
        if object.is_object() || object.is_function() {
            Ok(Fields { object, path })
        } else {
            Err(type_error(&[path, " must be an object"].concat()))
        }
    }

    /// The value of `key`, `undefined` when absent; a throwing getter's error is passed on.
    pub(crate) fn get(&self, key: &str) -> Result<JsValue, JsValue> {
        Reflect::get(self.object, &JsValue::from_str(key))
    }

    fn name(&self, key: &str) -> String {
        [self.path, ".", key].concat()
    }

    /// An object that is not an array (a request's `headers` or `body`), `undefined` when absent.
    #[cfg_attr(not(feature = "controller"), allow(dead_code))]
    pub(crate) fn optional_object(&self, key: &str) -> Result<JsValue, JsValue> {
        let value = self.get(key)?;
        if value.is_undefined() || (value.is_object() && !Array::is_array(&value)) {
            Ok(value)
        } else {
            Err(type_error(
                &[&self.name(key), " must be an object"].concat(),
            ))
        }
    }

    /// A required, non-empty string.
    // The transcriber alone reads one only for Gladia's development provisioner.
    #[cfg_attr(
        all(not(feature = "controller"), not(turnguard_gladia)),
        allow(dead_code)
    )]
    pub(crate) fn string(&self, key: &str) -> Result<String, JsValue> {
        match self.get(key)?.as_string() {
            Some(value) if !value.is_empty() => Ok(value),
            Some(_) => Err(range_error(
                &[&self.name(key), " must not be empty"].concat(),
            )),
            None => Err(type_error(&[&self.name(key), " must be a string"].concat())),
        }
    }

    /// An optional string (absent → `None`).
    pub(crate) fn optional_string(&self, key: &str) -> Result<Option<String>, JsValue> {
        self.optional(key, "a string", JsValue::as_string)
    }

    /// The value of `key` converted by `convert`; absent → `None`, and a value `convert`
    /// rejects → a `TypeError` saying the field must be `what`.
    fn optional<T>(
        &self,
        key: &str,
        what: &str,
        convert: impl FnOnce(&JsValue) -> Option<T>,
    ) -> Result<Option<T>, JsValue> {
        let value = self.get(key)?;
        if value.is_undefined() {
            return Ok(None);
        }
        convert(&value)
            .map(Some)
            .ok_or_else(|| type_error(&[&self.name(key), " must be ", what].concat()))
    }

    /// An optional boolean.
    #[cfg_attr(not(feature = "controller"), allow(dead_code))]
    pub(crate) fn bool(&self, key: &str, default: bool) -> Result<bool, JsValue> {
        Ok(self
            .optional(key, "a boolean", JsValue::as_bool)?
            .unwrap_or(default))
    }

    /// A required function.
    pub(crate) fn function(&self, key: &str) -> Result<Function, JsValue> {
        self.get(key)?
            .dyn_into::<Function>()
            .map_err(|_| type_error(&[&self.name(key), " must be a function"].concat()))
    }

    /// An optional function (absent → `None`).
    pub(crate) fn optional_function(&self, key: &str) -> Result<Option<Function>, JsValue> {
        let value = self.get(key)?;
        if value.is_undefined() {
            return Ok(None);
        }
        self.function(key).map(Some)
    }

    /// An optional number of milliseconds, finite and above zero.
    pub(crate) fn positive_ms(&self, key: &str, default: u64) -> Result<u64, JsValue> {
        let Some(value) = self.optional_number(key)? else {
            return Ok(default);
        };
        if !value.is_finite() || value <= 0.0 {
            return Err(range_error(
                &[
                    &self.name(key),
                    " must be a finite number of milliseconds above 0",
                ]
                .concat(),
            ));
        }
        Ok(libm::ceil(value) as u64)
    }

    #[cfg(feature = "transcriber")]
    /// An optional number of milliseconds, finite and not negative.
    pub(crate) fn non_negative_ms(&self, key: &str, default: u64) -> Result<u64, JsValue> {
        let Some(value) = self.optional_number(key)? else {
            return Ok(default);
        };
        if !value.is_finite() || value < 0.0 {
            return Err(range_error(
                &[
                    &self.name(key),
                    " must be a finite, non-negative number of milliseconds",
                ]
                .concat(),
            ));
        }
        Ok(libm::ceil(value) as u64)
    }

    /// An optional whole number, at least `min`.
    pub(crate) fn count(&self, key: &str, default: u64, min: u64) -> Result<u64, JsValue> {
        let Some(value) = self.optional_number(key)? else {
            return Ok(default);
        };
        if !is_whole(value) || value < min as f64 {
            return Err(range_error(
                &[
                    &self.name(key),
                    " must be a whole number of at least ",
                    &decimal(min),
                ]
                .concat(),
            ));
        }
        Ok(value as u64)
    }

    /// An optional finite, non-negative number.
    #[cfg_attr(not(feature = "controller"), allow(dead_code))]
    pub(crate) fn non_negative(&self, key: &str, default: f64) -> Result<f64, JsValue> {
        let Some(value) = self.optional_number(key)? else {
            return Ok(default);
        };
        if !value.is_finite() || value < 0.0 {
            return Err(range_error(
                &[&self.name(key), " must be a finite number of at least 0"].concat(),
            ));
        }
        Ok(value)
    }

    fn optional_number(&self, key: &str) -> Result<Option<f64>, JsValue> {
        self.optional(key, "a number", JsValue::as_f64)
    }
}

/// A required non-empty string argument.
#[cfg_attr(not(feature = "controller"), allow(dead_code))]
pub(crate) fn string_arg(value: &JsValue, name: &str) -> Result<String, JsValue> {
    match value.as_string() {
        Some(text) if !text.is_empty() => Ok(text),
        Some(_) => Err(range_error(&[name, " must not be empty"].concat())),
        None => Err(type_error(&[name, " must be a string"].concat())),
    }
}

#[cfg(feature = "transcriber")]
/// A required whole-number argument within `[min, max]`.
pub(crate) fn whole_arg(value: &JsValue, name: &str, min: u32, max: u32) -> Result<u32, JsValue> {
    let number = value
        .as_f64()
        .ok_or_else(|| type_error(&[name, " must be a number"].concat()))?;
    if !is_whole(number) || number < f64::from(min) || number > f64::from(max) {
        return Err(range_error(
            &[
                name,
                " must be a whole number from ",
                &decimal(min.into()),
                " to ",
                &decimal(max.into()),
            ]
            .concat(),
        ));
    }
    Ok(number as u32)
}

#[cfg(feature = "transcriber")]
/// A required time argument: a finite, non-negative number of milliseconds.
pub(crate) fn time_arg(value: &JsValue, name: &str) -> Result<u64, JsValue> {
    let number = value
        .as_f64()
        .ok_or_else(|| type_error(&[name, " must be a number"].concat()))?;
    if !number.is_finite() || number < 0.0 {
        return Err(range_error(
            &[
                name,
                " must be a finite, non-negative number of milliseconds",
            ]
            .concat(),
        ));
    }
    Ok(libm::floor(number) as u64)
}
