//! List and watch bodies serialized straight from the store's objects: a list of thousands of
//! pods would otherwise be deep-copied into a new document before being written out.

use axum::response::Response;
use http::{HeaderValue, StatusCode};
use serde_json::Value;

use crate::kube::store::Obj;

/// Stored objects as a JSON array, serialized in place.
pub struct Items<'a>(pub &'a [Obj]);

impl serde::Serialize for Items<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|o| o.as_ref()))
    }
}

/// A JSON object with one field's value taken from elsewhere by reference, in the field order
/// the object itself has: the bytes are those of the object with that value in place.
struct WithField<'a, T: ?Sized> {
    envelope: &'a Value,
    key: &'a str,
    value: &'a T,
}

impl<T: serde::Serialize + ?Sized> serde::Serialize for WithField<'_, T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let Some(fields) = self.envelope.as_object() else {
            return self.envelope.serialize(s);
        };
        let mut map = s.serialize_map(Some(fields.len()))?;
        for (k, v) in fields {
            if k == self.key {
                map.serialize_entry(k, self.value)?;
            } else {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

/// Compact JSON of `envelope` with its field `key` set to `value`, without copying `value`.
pub fn to_json_with<T: serde::Serialize + ?Sized>(
    envelope: &Value,
    key: &str,
    value: &T,
) -> Vec<u8> {
    let mut out = Vec::new();
    write_json_with(&mut out, envelope, key, value);
    out
}

/// `to_json_with`, appended to `out`.
pub fn write_json_with<T: serde::Serialize + ?Sized>(
    out: &mut Vec<u8>,
    envelope: &Value,
    key: &str,
    value: &T,
) {
    let _ = serde_json::to_writer(
        out,
        &WithField {
            envelope,
            key,
            value,
        },
    );
}

/// What `json_response` answers, for a body already serialized.
pub fn json_bytes_response(status: StatusCode, body: Vec<u8>) -> Response {
    use axum::response::IntoResponse;
    let mut response = (status, axum::body::Body::from(body)).into_response();
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
