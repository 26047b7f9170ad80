//! The core's one error type. Every variant says what was wrong and where, in
//! words a user can act on; nothing in the core panics on bad input.

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Error {
    /// A value outside one of the limits in [`crate::limits`].
    #[error("{what} is {value}, but the limit is {min}..={max} ({limit})")]
    Limit {
        what: String,
        value: u64,
        min: u64,
        max: u64,
        limit: &'static str,
    },
    /// A name that is not one of the valid ones (preset, era, flag, feature, level, ...).
    #[error("unknown {kind} {name:?}; valid: {}", valid.join(", "))]
    Unknown {
        kind: &'static str,
        name: String,
        valid: Vec<String>,
    },
    /// Anything else that is invalid, with its location in the message.
    #[error("{0}")]
    Invalid(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::Invalid(msg.into())
    }

    pub fn unknown<S: ToString>(
        kind: &'static str,
        name: &str,
        valid: impl IntoIterator<Item = S>,
    ) -> Self {
        Error::Unknown {
            kind,
            name: name.to_string(),
            valid: valid.into_iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// A JSON document that does not read as `T`, as an error in words: what
/// is wrong, where (the path of fields and the line and column), and what
/// would be valid. `what` names the document ("experiment JSON").
pub fn from_json<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| {
        if !e.is_data() {
            return json_error(what, "", &e);
        }
        let msg = serde_in_words(&e.to_string());
        // A check inside a value (a custom workload's instruction) names
        // its own, deeper path: point at that rather than where serde
        // finished the value.
        if let Some((path, rest)) = crate::json_path::leading_path(&msg) {
            if let Some((line, column)) = crate::json_path::position_of(text, path) {
                return Error::Invalid(format!(
                    "{what} at {path} (line {line}, column {column}){rest}"
                ));
            }
        }
        json_error(
            what,
            &crate::json_path::path_at(text, e.line(), e.column()),
            &e,
        )
    })
}

/// A serde_json error at `path` ("." for the whole document) in words.
pub fn json_error(what: &str, path: &str, e: &serde_json::Error) -> Error {
    let at = if path.is_empty() || path == "." || path == "?" {
        String::new()
    } else {
        format!(" at {path}")
    };
    let place = if e.line() > 0 {
        format!(" (line {}, column {})", e.line(), e.column())
    } else {
        String::new()
    };
    Error::Invalid(format!(
        "{what}{at}{place}: {}",
        serde_in_words(&e.to_string())
    ))
}

/// serde's and serde_json's messages in words: no type or enum names, no
/// backticks; names quoted, and the valid ones listed.
pub fn serde_in_words(msg: &str) -> String {
    // serde_json appends " at line L column C"; the caller says where.
    let msg = match msg.rfind(" at line ") {
        Some(i) => &msg[..i],
        None => msg,
    };
    let quoted = |s: &str| s.replace('`', "\"");
    let list = |s: &str| -> String {
        s.replace("` or `", "`, `")
            .split(", ")
            .map(|n| n.trim_matches('`').to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let expectation = |s: &str| -> String {
        let s = s.trim();
        let known = [
            ("u8", "a whole number"),
            ("u16", "a whole number"),
            ("u32", "a whole number"),
            ("u64", "a whole number"),
            ("usize", "a whole number"),
            ("i32", "a whole number"),
            ("i64", "a whole number"),
            ("f32", "a number"),
            ("f64", "a number"),
            ("a sequence", "a list [...]"),
            ("a map", "an object {...}"),
            ("a borrowed string", "a string"),
            ("a string", "a \"string\""),
            ("a boolean", "true or false"),
            ("unit", "null"),
        ];
        if let Some((_, w)) = known.iter().find(|(k, _)| *k == s) {
            return w.to_string();
        }
        if s.starts_with("struct ") || s.starts_with("struct variant") || s.starts_with("a map") {
            return "an object {...}".into();
        }
        if s.starts_with("internally tagged enum") {
            return "an object with a \"kind\"".into();
        }
        if s.starts_with("tuple") || s.contains("sequence") {
            return "a list [...]".into();
        }
        if s.starts_with("enum ") || s.starts_with("variant identifier") {
            return "one of the names this field takes".into();
        }
        if s.starts_with("field identifier") {
            return "a field name".into();
        }
        quoted(s)
    };
    let found = |s: &str| -> String {
        let s = s.trim();
        for (k, w) in [
            ("integer ", "the number "),
            ("floating point ", "the number "),
            ("boolean ", ""),
            ("string ", "the string "),
        ] {
            if let Some(rest) = s.strip_prefix(k) {
                return format!("{w}{}", rest.trim_matches('`'));
            }
        }
        match s {
            "map" => "an object".into(),
            "sequence" => "a list".into(),
            "unit value" | "unit" => "null".into(),
            other => quoted(other),
        }
    };
    if let Some(rest) = msg.strip_prefix("invalid type: ") {
        if let Some((got, want)) = rest.split_once(", expected ") {
            return format!("expected {}, found {}", expectation(want), found(got));
        }
    }
    if let Some(rest) = msg.strip_prefix("invalid value: ") {
        if let Some((got, want)) = rest.split_once(", expected ") {
            return format!(
                "{} is not valid; expected {}",
                found(got),
                expectation(want)
            );
        }
    }
    if let Some(rest) = msg.strip_prefix("invalid length ") {
        if let Some((len, want)) = rest.split_once(", expected ") {
            return format!("a list of {len} items, where {} is expected", quoted(want));
        }
    }
    for (prefix, kind, names) in [
        ("unknown field ", "field", "fields"),
        ("unknown variant ", "name", "names"),
    ] {
        if let Some(rest) = msg.strip_prefix(prefix) {
            let (name, tail) = rest.split_once(", ").unwrap_or((rest, ""));
            let name = name.trim_matches('`');
            let valid = if let Some(l) = tail.strip_prefix("expected one of ") {
                format!("; valid {names}: {}", list(l))
            } else if let Some(l) = tail.strip_prefix("expected ") {
                if l.contains(" or ") {
                    format!("; valid {names}: {}", list(l))
                } else {
                    format!("; the only valid {kind} is {}", list(l))
                }
            } else if tail.starts_with("there are no") {
                format!(" (there are no {names} here)")
            } else {
                String::new()
            };
            return format!("unknown {kind} \"{name}\"{valid}");
        }
    }
    if let Some(name) = msg.strip_prefix("missing field ") {
        return format!("the field \"{}\" is missing", name.trim_matches('`'));
    }
    if let Some(name) = msg.strip_prefix("duplicate field ") {
        return format!("the field \"{}\" is given twice", name.trim_matches('`'));
    }
    if msg.starts_with("data did not match any variant") {
        return "the value fits none of the forms this field takes".into();
    }
    let syntax = [
        ("EOF while parsing a list", "the text ends before a list is closed with ]"),
        ("EOF while parsing an object", "the text ends before an object is closed with }"),
        ("EOF while parsing a string", "the text ends inside a \"string\""),
        ("EOF while parsing a value", "the text ends where a value should be"),
        ("expected value", "expected a value: a number, a \"string\", true, false, null, a list [...] or an object {...}"),
        ("trailing characters", "there is more text after the end of the JSON"),
        ("trailing comma", "there is a comma before a closing bracket"),
        ("key must be a string", "object keys must be \"quoted\""),
        ("invalid number", "a number is malformed"),
        ("expected ident", "a word that is not true, false or null (text needs \"quotes\")"),
    ];
    if let Some((_, w)) = syntax.iter().find(|(k, _)| msg.starts_with(k)) {
        return w.to_string();
    }
    quoted(msg)
}
