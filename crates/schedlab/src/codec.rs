//! Experiments as compact, URL-safe strings: "1." + base64url(deflate(JSON)).
//! Every older version keeps decoding through a migration: "0." + base64url
//! of the version-0 JSON (variants as a map of label to policy changes, the
//! benchmark under "benchmark").
//!
//! A link's fragment (after `#`) is `preset=NAME` for an unedited preset or
//! `x=CODE` for anything else, optionally followed by `&run` (run on open).
//! A fragment that is plain JSON (percent-encoded or not) is read too, with
//! version 0 migrated.

use crate::error::Concern;
use crate::error::{Error, Result};
use crate::experiment::{Experiment, VERSION};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{json, Value};

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
        return Err(Error::invalid(
            Concern::Link,
            format!(
                "the encoded experiment is {} bytes; the limit is {MAX_ENCODED_BYTES}",
                text.len()
            ),
        ));
    }
    let (version, body) = text.split_once('.').ok_or_else(|| {
        Error::invalid(
            Concern::Link,
            "the encoded experiment has no version prefix (like \"1.\")",
        )
    })?;
    let bytes = URL_SAFE_NO_PAD.decode(body).map_err(base64_in_words)?;
    let json = match version {
        "1" => {
            let raw = miniz_oxide::inflate::decompress_to_vec_with_limit(&bytes, MAX_DECODED_BYTES)
                .map_err(|e| inflate_in_words(e.status))?;
            String::from_utf8(raw).map_err(|_| {
                Error::invalid(Concern::Link, "the decoded experiment is not UTF-8 text")
            })?
        }
        "0" => {
            let raw = String::from_utf8(bytes).map_err(|_| {
                Error::invalid(Concern::Link, "the decoded experiment is not UTF-8 text")
            })?;
            let v0: Value = serde_json::from_str(&raw).map_err(|e| {
                crate::error::json_error(Concern::Link, "the link's version-0 experiment", ".", &e)
            })?;
            serde_json::to_string(&migrate_v0(v0)?).expect("JSON serialises")
        }
        other => {
            return Err(Error::invalid(
                Concern::Link,
                format!(
            "experiment version {other:?} is not known to this build (it reads versions 0 and 1)"
        ),
            ))
        }
    };
    Experiment::from_json(&json)
}

/// Why the link's code is not base64url, in words.
fn base64_in_words(e: base64::DecodeError) -> Error {
    use base64::DecodeError::*;
    Error::invalid(Concern::Link, match e {
        InvalidLastSymbol(..) => {
            "the link's code (after \"x=1.\") is cut short: it ends in the middle; copy the whole link".to_string()
        }
        InvalidByte(at, b) => format!(
            "the link's code (after \"x=1.\") has {:?} at character {}, which is not one of the letters, digits, - and _ a link's code is made of; was it retyped or cut?",
            char::from(b),
            at + 1
        ),
        InvalidLength(n) => format!(
            "the link's code (after \"x=1.\") is cut short: {n} characters cannot be a whole code; copy the whole link"
        ),
        InvalidPadding => {
            "the link's code (after \"x=1.\") ends in \"=\" padding, which links do not have".to_string()
        }
    })
}

/// Why the link's code does not unpack, in words.
fn inflate_in_words(status: miniz_oxide::inflate::TINFLStatus) -> Error {
    use miniz_oxide::inflate::TINFLStatus::*;
    Error::invalid(Concern::Link, match status {
        FailedCannotMakeProgress | NeedsMoreInput => {
            "the link's code is cut short (its compressed experiment ends early); copy the whole link".to_string()
        }
        HasMoreOutput => format!(
            "the link's experiment is larger than {MAX_DECODED_BYTES} bytes when unpacked; the limit is {MAX_DECODED_BYTES}"
        ),
        Adler32Mismatch => {
            "the link's code is corrupted (its checksum does not match); copy the link again".to_string()
        }
        _ => "the link's code is corrupted (it is not a compressed experiment); copy the link again"
            .to_string(),
    })
}

/// What a link asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub experiment: Experiment,
    /// The preset it named, if it named one.
    pub preset: Option<String>,
    /// Run as soon as it opens.
    pub run: bool,
}

/// The fragment (without `#`) that restores `exp`: short for an unedited preset.
pub fn fragment(exp: &Experiment, run: bool) -> String {
    let mut out = match crate::presets::unedited(exp) {
        Some(name) => format!("preset={name}"),
        None => format!("x={}", encode(exp)),
    };
    if run {
        out.push_str("&run");
    }
    out
}

/// Reads a link's fragment (with or without the `#`).
pub fn parse_fragment(fragment: &str) -> Result<Link> {
    let text = fragment.strip_prefix('#').unwrap_or(fragment).trim();
    if text.len() > MAX_ENCODED_BYTES {
        return Err(Error::invalid(
            Concern::Link,
            format!(
                "the link's fragment is {} bytes; the limit is {MAX_ENCODED_BYTES}",
                text.len()
            ),
        ));
    }
    if text.is_empty() {
        return Err(Error::invalid(
            Concern::Link,
            "the link has no experiment in it",
        ));
    }
    let json_text = percent_decode(text)?;
    if json_text.trim_start().starts_with('{') {
        return Ok(Link {
            experiment: from_plain_json(&json_text)?,
            preset: None,
            run: false,
        });
    }
    let mut experiment = None;
    let mut preset = None;
    let mut run = false;
    for part in text.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = part.split_once('=').unwrap_or((part, ""));
        match key {
            "preset" => {
                let name = percent_decode(value)?;
                experiment = Some(crate::presets::get(&name)?);
                preset = Some(name);
            }
            "x" => experiment = Some(decode(value)?),
            "run" => run = matches!(value, "" | "1" | "true"),
            other => {
                return Err(Error::invalid(
                    Concern::Link,
                    format!(
                        "the link has an unknown part {:?} (it knows preset=, x= and run)",
                        truncate(other, 40)
                    ),
                ))
            }
        }
    }
    let experiment = experiment.ok_or_else(|| {
        Error::invalid(
            Concern::Link,
            "the link names no experiment (expected preset=NAME or x=CODE)",
        )
    })?;
    Ok(Link {
        experiment,
        preset,
        run,
    })
}

/// A whole experiment as JSON, of any known version.
fn from_plain_json(text: &str) -> Result<Experiment> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| crate::error::json_error(Concern::Link, "the link's JSON", ".", &e))?;
    let is_v0 = value.get("version").is_none_or(|v| v.as_u64() == Some(0));
    let value = if is_v0 { migrate_v0(value)? } else { value };
    Experiment::from_json(&serde_json::to_string(&value).expect("JSON serialises"))
}

fn truncate(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// %XX escapes decoded; an escape that is not two hex digits, or bytes that
/// are not UTF-8, are errors.
fn percent_decode(s: &str) -> Result<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| {
                    Error::invalid(
                        Concern::Link,
                        format!("the link has a broken %-escape at byte {i}"),
                    )
                })?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out)
        .map_err(|_| Error::invalid(Concern::Link, "the link's text is not UTF-8"))
}

/// Version 0 to version 1: variants were a map from label to policy
/// changes, and the workload was called "benchmark".
pub fn migrate_v0(v0: Value) -> Result<Value> {
    let Value::Object(mut obj) = v0 else {
        return Err(Error::invalid(
            Concern::Link,
            "a version-0 experiment must be a JSON object",
        ));
    };
    let variants = match obj.remove("variants") {
        Some(Value::Object(map)) => map
            .into_iter()
            .map(|(label, policy)| json!({"label": label, "policy": policy}))
            .collect(),
        Some(other) => {
            return Err(Error::invalid(
                Concern::Link,
                format!("version-0 \"variants\" must be an object, not {other}"),
            ))
        }
        None => Vec::new(),
    };
    obj.insert("variants".into(), Value::Array(variants));
    if let Some(b) = obj.remove("benchmark") {
        obj.insert("workload".into(), b);
    }
    obj.insert("version".into(), json!(VERSION));
    Ok(Value::Object(obj))
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

    /// A calibrated machine travels in a link whole: its SLUB caches too.
    #[test]
    fn a_machine_with_skb_slabs_round_trips() {
        let mut exp = presets::get("kvm-pipe-test-pinning").unwrap();
        let mut spec = crate::topology::preset("kvm-2vcpu").unwrap();
        let cache = |name: &str, object_size| crate::topology::SlabCache {
            name: name.into(),
            object_size,
            objs_per_slab: 16,
            cpu_partial: 52,
            min_partial: 5,
        };
        spec.costs.skb_slabs = Some(crate::topology::SkbSlabs {
            head: cache("skbuff_head_cache", 224),
            data: vec![cache("kmalloc-512", 512)],
        });
        exp.machine = crate::experiment::MachineRef::Spec(Box::new(spec));
        exp.validate().unwrap();
        assert_eq!(decode(&encode(&exp)).unwrap(), exp);
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
    fn fragments_name_presets_encode_edits_and_carry_run() {
        for name in presets::names() {
            let exp = presets::get(name).unwrap();
            assert_eq!(fragment(&exp, false), format!("preset={name}"));
            let link = parse_fragment(&format!("#preset={name}&run")).unwrap();
            assert_eq!(link.experiment, exp);
            assert_eq!(link.preset.as_deref(), Some(name));
            assert!(link.run);
        }
        let mut edited = presets::get("kvm-pipe-test-pinning").unwrap();
        edited.seed = 99;
        let frag = fragment(&edited, true);
        assert!(frag.starts_with("x=1.") && frag.ends_with("&run"), "{frag}");
        let link = parse_fragment(&frag).unwrap();
        assert_eq!(link.experiment, edited);
        assert_eq!(link.preset, None);
        assert!(link.run);
        assert!(!parse_fragment(&fragment(&edited, false)).unwrap().run);
    }

    #[test]
    fn a_plain_json_v0_fragment_is_migrated() {
        let v0 = r#"{"name":"old","machine":"kvm-2vcpu","policy":{"era":"6.5"},"variants":{"A":{}},"benchmark":{"kind":"pipe_test","loops":100,"batches":1}}"#;
        let encoded: String = v0
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        for frag in [v0.to_string(), format!("#{encoded}")] {
            let exp = parse_fragment(&frag).unwrap().experiment;
            assert_eq!(exp.name, "old");
            assert_eq!(exp.variants[0].label, "A");
        }
    }

    #[test]
    fn bad_fragments_say_what_is_wrong() {
        let msg = |s: &str| parse_fragment(s).unwrap_err().to_string();
        assert!(msg("").contains("no experiment"));
        assert!(msg("#run").contains("names no experiment"));
        assert!(
            msg("#preset=nope").contains("unknown preset \"nope\""),
            "{}",
            msg("#preset=nope")
        );
        assert!(msg("#y=1").contains("unknown part \"y\""));
        assert!(msg("#x=9.abc").contains("version \"9\""));
        assert!(
            msg("#%7Bbroken").contains("line 1"),
            "{}",
            msg("#%7Bbroken")
        );
        assert!(msg("#%zz").contains("broken %-escape"));
        assert!(msg(&format!("#x=1.{}", "A".repeat(100_000))).contains("the limit is"));
        let huge = r#"{"version":1,"name":"big","machine":"kvm-2vcpu","policy":{"era":"6.5"},"variants":[{"label":"A"}],"workload":{"kind":"pipe_test"},"repeats":100000}"#;
        assert!(msg(huge).contains("repeats"), "{}", msg(huge));
    }

    #[test]
    fn corrupt_input_is_a_clear_error() {
        let good = encode(&presets::get("kvm-pipe-test-pinning").unwrap());
        let msg = |s: &str| decode(s).unwrap_err().to_string();
        assert!(msg("hello").contains("no version prefix"));
        assert!(msg("7.abc").contains("version \"7\" is not known"));
        assert!(msg("1.***").contains("'*' at character 1"));
        // Truncated on a base64 boundary, so it is the deflate stream that breaks.
        let cut = 2 + (good.len() - 2) / 2 / 4 * 4;
        assert!(
            msg(&good[..cut]).contains("cut short"),
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
