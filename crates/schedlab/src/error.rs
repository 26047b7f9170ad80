//! The core's one error type. Every variant says what was wrong and where, in
//! words a user can act on; nothing in the core panics on bad input.

use serde::Serialize;

/// What an error is about: the part of the input to look at. The page, the
/// CLI's exit codes and the JS API tell errors apart by it; the words say
/// the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Concern {
    /// The machine: topology, costs, `lscpu` text, machine JSON.
    Machine,
    /// The kernel policy: era, domain flags, features, tunables.
    Policy,
    /// The workload: a benchmark's parameters, the task language.
    Workload,
    /// The experiment around them: variants, sweep, repeats, presets.
    Experiment,
    /// A shared link that does not decode.
    Link,
    /// Another tool's file being imported (rt-app).
    Import,
    /// A run that hit a run-time limit or was cancelled.
    Run,
}

impl Concern {
    pub const ALL: [Concern; 7] = [
        Concern::Machine,
        Concern::Policy,
        Concern::Workload,
        Concern::Experiment,
        Concern::Link,
        Concern::Import,
        Concern::Run,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Concern::Machine => "machine",
            Concern::Policy => "policy",
            Concern::Workload => "workload",
            Concern::Experiment => "experiment",
            Concern::Link => "link",
            Concern::Import => "import",
            Concern::Run => "run",
        }
    }

    /// The concern of a place in an experiment's JSON, by its path
    /// (`machine.cpus[3]`, `variants[1].policy.era`): the machine, the
    /// policy or the workload it is in, else the experiment.
    pub fn of_path(path: &str) -> Concern {
        let path = path.trim_start_matches('.');
        let rest = match path.strip_prefix("variants[") {
            Some(r) => r.split_once("].").map_or("", |(_, r)| r),
            None => path,
        };
        let head = rest.split(['.', '[']).next().unwrap_or("");
        match head {
            "machine" => Concern::Machine,
            "policy" | "timeline" => Concern::Policy,
            "workload" => Concern::Workload,
            _ => Concern::Experiment,
        }
    }
}

/// What was wrong, in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ErrorKind {
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

/// The core's error: what it concerns and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}")]
pub struct Error {
    concern: Concern,
    kind: ErrorKind,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(concern: Concern, kind: ErrorKind) -> Self {
        Error { concern, kind }
    }

    pub fn invalid(concern: Concern, msg: impl Into<String>) -> Self {
        Error::new(concern, ErrorKind::Invalid(msg.into()))
    }

    pub fn unknown<S: ToString>(
        concern: Concern,
        kind: &'static str,
        name: &str,
        valid: impl IntoIterator<Item = S>,
    ) -> Self {
        Error::new(
            concern,
            ErrorKind::Unknown {
                kind,
                name: name.to_string(),
                valid: valid.into_iter().map(|s| s.to_string()).collect(),
            },
        )
    }

    pub fn concern(&self) -> Concern {
        self.concern
    }

    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The same error about `concern` instead.
    pub fn about(self, concern: Concern) -> Self {
        Error { concern, ..self }
    }

    /// The same error with its message rewritten (an `Invalid`'s only).
    pub fn map_message(self, f: impl FnOnce(String) -> String) -> Self {
        match self.kind {
            ErrorKind::Invalid(msg) => Error::invalid(self.concern, f(msg)),
            _ => self,
        }
    }
}

/// Input quoted in an error, cut to its first and last characters when it
/// is long (with its length), so that a pasted megabyte does not come back
/// as the error message.
pub fn excerpt(text: &str) -> String {
    const HEAD: usize = 48;
    const TAIL: usize = 16;
    let n = text.chars().count();
    if n <= HEAD + TAIL + 16 {
        return text.to_string();
    }
    let head: String = text.chars().take(HEAD).collect();
    let tail: String = text.chars().skip(n - TAIL).collect();
    format!("{head}…{tail} ({n} characters)")
}

/// A JSON document that does not read as `T`, as an error in words: what
/// is wrong, where (the path of fields and the line and column), and what
/// would be valid. `what` names the document ("experiment JSON"); the error
/// is about `concern`, or for an experiment, about the part its path is in.
pub fn from_json<T: serde::de::DeserializeOwned>(
    concern: Concern,
    what: &str,
    text: &str,
) -> Result<T> {
    serde_json::from_str(text).map_err(|e| {
        if !e.is_data() {
            return json_error(concern, what, "", &e);
        }
        let msg = serde_in_words(&e.to_string());
        // A check inside a value (a custom workload's instruction) names
        // its own, deeper path: point at that rather than where serde
        // finished the value.
        if let Some((path, rest)) = crate::json_path::leading_path(&msg) {
            if let Some((line, column)) = crate::json_path::position_of(text, path) {
                return Error::invalid(
                    in_experiment(concern, path),
                    format!("{what} at {path} (line {line}, column {column}){rest}"),
                );
            }
        }
        let path = crate::json_path::path_at(text, e.line(), e.column());
        json_error(in_experiment(concern, &path), what, &path, &e)
    })
}

/// In an experiment's JSON, the part `path` is in; else `concern` itself.
fn in_experiment(concern: Concern, path: &str) -> Concern {
    if concern == Concern::Experiment {
        Concern::of_path(path)
    } else {
        concern
    }
}

/// A serde_json error at `path` ("." for the whole document) in words.
pub fn json_error(concern: Concern, what: &str, path: &str, e: &serde_json::Error) -> Error {
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
    Error::invalid(
        concern,
        format!("{what}{at}{place}: {}", serde_in_words(&e.to_string())),
    )
}

/// serde's and serde_json's messages in words: no type or enum names, no
/// backticks; names quoted, and the valid ones listed.
pub fn serde_in_words(msg: &str) -> String {
    // serde_json appends " at line L column C"; the caller says where.
    let msg = match msg.rfind(" at line ") {
        Some(i) => &msg[..i],
        None => msg,
    };
    let quoted = |s: &str| excerpt(&s.replace('`', "\""));
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
                return format!("{w}{}", excerpt(rest.trim_matches('`')));
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
            return format!("unknown {kind} \"{}\"{valid}", excerpt(name));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::Experiment;

    #[test]
    fn long_input_is_quoted_as_an_excerpt_that_says_its_length() {
        assert_eq!(excerpt("short"), "short");
        let exact = "y".repeat(80);
        assert_eq!(excerpt(&exact), exact);
        let long = format!("{}{}", "a".repeat(50), "é".repeat(50));
        let e = excerpt(&long);
        assert_eq!(
            e,
            format!("{}…{} (100 characters)", "a".repeat(48), "é".repeat(16))
        );
    }

    #[test]
    fn a_path_in_an_experiment_names_its_part() {
        assert_eq!(Concern::of_path("machine.cpus[3].core"), Concern::Machine);
        assert_eq!(Concern::of_path(".policy.era"), Concern::Policy);
        assert_eq!(
            Concern::of_path("variants[1].policy.flags"),
            Concern::Policy
        );
        assert_eq!(
            Concern::of_path("variants[0].workload.groups"),
            Concern::Workload
        );
        assert_eq!(Concern::of_path("workload"), Concern::Workload);
        assert_eq!(Concern::of_path("sweep.values"), Concern::Experiment);
        assert_eq!(Concern::of_path("variants[2].label"), Concern::Experiment);
    }

    /// Each part of a bad experiment gives an error about that part, in
    /// the same words as before.
    #[test]
    fn errors_say_which_part_of_the_input_they_concern() {
        let exp = crate::presets::get("retune-lat-ctx").unwrap();
        let with = |edit: &dyn Fn(&mut serde_json::Value)| {
            let mut v: serde_json::Value = serde_json::from_str(&exp.to_json()).unwrap();
            edit(&mut v);
            Experiment::from_json(&serde_json::to_string_pretty(&v).unwrap()).unwrap_err()
        };
        let machine = with(&|v| v["machine"] = "no-such-machine".into());
        assert_eq!(machine.concern(), Concern::Machine, "{machine}");
        let era = with(&|v| v["policy"]["era"] = "1.0".into());
        assert_eq!(era.concern(), Concern::Policy, "{era}");
        let workload = with(&|v| v["workload"]["rounds"] = "many".into());
        assert_eq!(workload.concern(), Concern::Workload, "{workload}");
        assert!(workload.to_string().contains("\"many\""), "{workload}");
        let variants = with(&|v| v["variants"] = serde_json::json!([]));
        assert_eq!(variants.concern(), Concern::Experiment, "{variants}");
        let link = crate::codec::decode("x=not-a-link").unwrap_err();
        assert_eq!(link.concern(), Concern::Link, "{link}");
        let limit = crate::limits::CPUS
            .check(Concern::Machine, "machine.cpus", 5000)
            .unwrap_err();
        assert!(matches!(limit.kind(), ErrorKind::Limit { value: 5000, .. }));
        assert_eq!(limit.about(Concern::Import).concern(), Concern::Import);
    }
}
