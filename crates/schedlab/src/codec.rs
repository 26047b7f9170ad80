//! Experiments as compact, URL-safe strings: "1." + base64url(deflate(JSON)).
//! Every older version keeps decoding through a migration: "0." + base64url
//! of the version-0 JSON (variants as a map of label to policy changes, the
//! benchmark under "benchmark").

use crate::error::{Error, Result};
use crate::experiment::{Experiment, VERSION};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{json, Map, Value};

/// The largest decoded experiment accepted (a guard against zip bombs).
pub const MAX_DECODED_BYTES: usize = 1 << 20;
/// The longest encoded string accepted.
pub const MAX_ENCODED_BYTES: usize = 64 * 1024;

pub fn encode(exp: &Experiment) -> String {
    let json = serde_json::to_string(exp).expect("an experiment serialises");
    let packed = miniz_oxide::deflate::compress_to_vec(json.as_bytes(), 9);
    format!("{VERSION}.{}", URL_SAFE_NO_PAD.encode(packed))
}

pub fn decode(text: &str) -> Result<Experiment> {
    let text = text.trim();
    if text.len() > MAX_ENCODED_BYTES {
        return Err(Error::invalid(format!(
            "the encoded experiment is {} bytes; the limit is {MAX_ENCODED_BYTES}",
            text.len()
        )));
    }
    let (version, body) = text.split_once('.').ok_or_else(|| {
        Error::invalid("the encoded experiment has no version prefix (like \"1.\")")
    })?;
    let bytes = URL_SAFE_NO_PAD.decode(body).map_err(|e| {
        Error::invalid(format!(
            "the encoded experiment is not valid base64url: {e}"
        ))
    })?;
    let json = match version {
        "1" => {
            let raw = miniz_oxide::inflate::decompress_to_vec_with_limit(&bytes, MAX_DECODED_BYTES).map_err(|e| {
                Error::invalid(format!("the encoded experiment does not decompress (corrupted or truncated): {e:?}"))
            })?;
            String::from_utf8(raw)
                .map_err(|_| Error::invalid("the decoded experiment is not UTF-8 text"))?
        }
        "0" => {
            let raw = String::from_utf8(bytes)
                .map_err(|_| Error::invalid("the decoded experiment is not UTF-8 text"))?;
            let v0: Value = serde_json::from_str(&raw).map_err(|e| {
                Error::invalid(format!(
                    "version-0 experiment, line {}, column {}: {e}",
                    e.line(),
                    e.column()
                ))
            })?;
            serde_json::to_string(&migrate_v0(v0)?).expect("JSON serialises")
        }
        other => {
            return Err(Error::invalid(format!(
            "experiment version {other:?} is not known to this build (it reads versions 0 and 1)"
        )))
        }
    };
    Experiment::from_json(&json)
}

/// Version 0 to version 1: variants were a map from label to policy
/// changes, and the workload was called "benchmark".
pub fn migrate_v0(v0: Value) -> Result<Value> {
    let Value::Object(mut obj) = v0 else {
        return Err(Error::invalid(
            "a version-0 experiment must be a JSON object",
        ));
    };
    let variants = match obj.remove("variants") {
        Some(Value::Object(map)) => map
            .into_iter()
            .map(|(label, policy)| json!({"label": label, "policy": policy}))
            .collect(),
        Some(other) => {
            return Err(Error::invalid(format!(
                "version-0 \"variants\" must be an object, not {other}"
            )))
        }
        None => Vec::new(),
    };
    obj.insert("variants".into(), Value::Array(variants));
    if let Some(b) = obj.remove("benchmark") {
        obj.insert("workload".into(), b);
    }
    obj.insert("version".into(), json!(VERSION));
    Ok(Value::Object(Map::from_iter(obj)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets;

    #[test]
    fn every_preset_round_trips() {
        for (name, _) in presets::ALL {
            let exp = presets::get(name).unwrap();
            let code = encode(&exp);
            assert!(code.starts_with("1."));
            assert!(code
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.'));
            assert_eq!(decode(&code).unwrap(), exp, "{name}");
        }
    }

    #[test]
    fn version_0_is_migrated() {
        let v0 = r#"{"name":"old link","machine":"kvm-2vcpu","policy":{"era":"6.5"},
            "variants":{"A":{},"B":{"features":{"WA_WEIGHT":false}}},
            "benchmark":{"kind":"pipe_test","loops":1000,"batches":2}}"#;
        let code = format!("0.{}", URL_SAFE_NO_PAD.encode(v0));
        let exp = decode(&code).unwrap();
        assert_eq!(exp.version, 1);
        assert_eq!(exp.variants.len(), 2);
        assert_eq!(exp.variants[1].label, "B");
        assert!(!exp.variants[1].policy.features["WA_WEIGHT"]);
    }

    #[test]
    fn corrupt_input_is_a_clear_error() {
        let good = encode(&presets::get("kvm-pipe-test-pinning").unwrap());
        let msg = |s: &str| decode(s).unwrap_err().to_string();
        assert!(msg("hello").contains("no version prefix"));
        assert!(msg("7.abc").contains("version \"7\" is not known"));
        assert!(msg("1.***").contains("not valid base64url"));
        // Truncated on a base64 boundary, so it is the deflate stream that breaks.
        let cut = 2 + (good.len() - 2) / 2 / 4 * 4;
        assert!(
            msg(&good[..cut]).contains("does not decompress"),
            "{}",
            msg(&good[..cut])
        );
        let mut flipped = good.clone().into_bytes();
        let i = flipped.len() - 5;
        flipped[i] = if flipped[i] == b'A' { b'B' } else { b'A' };
        assert!(decode(std::str::from_utf8(&flipped).unwrap()).is_err());
        assert!(msg(&"1.".repeat(40_000)).contains("the limit is"));
    }
}
