//! Where things are in a JSON text, both ways: the path open at a line and
//! column (where serde stopped reading), and the line and column of the
//! value at a path (where a check that runs after parsing found a fault).
//! Small scans of the text, so that locating costs no code per type.

/// The fields and indices open at `line`, `column` of JSON `text`
/// ("machine.costs.ipi_ns", "variants[1].label"): where serde stopped. A
/// small scan of the text, so that reading JSON costs no code per type.
pub fn path_at(text: &str, line: usize, column: usize) -> String {
    enum Frame {
        Object { key: Option<String>, want_key: bool },
        Array(usize),
    }
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let end = (start + column).min(text.len());
    let bytes = &text.as_bytes()[..end];
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let from = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Object { key, want_key }) = stack.last_mut() {
                    if *want_key {
                        *key = Some(text[from..i.min(bytes.len())].to_string());
                        *want_key = false;
                    }
                }
            }
            b'{' => stack.push(Frame::Object {
                key: None,
                want_key: true,
            }),
            b'[' => stack.push(Frame::Array(0)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object { want_key, .. }) => *want_key = true,
                Some(Frame::Array(n)) => *n += 1,
                None => {}
            },
            _ => {}
        }
        i += 1;
    }
    let mut path = String::new();
    for f in &stack {
        match f {
            Frame::Object { key: Some(k), .. } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
            }
            Frame::Object { key: None, .. } => {}
            Frame::Array(n) => path.push_str(&format!("[{n}]")),
        }
    }
    path
}

/// One step of a path: an object's field or a list's index.
#[derive(Debug, PartialEq, Eq)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// `tasks[1].program[0].loop` as steps ("" is the document itself); None
/// if it is not such a path.
fn steps(path: &str) -> Option<Vec<Step<'_>>> {
    let mut out = Vec::new();
    if path.is_empty() {
        return Some(out);
    }
    for part in path.split('.') {
        let (key, mut rest) = part.split_once('[').map_or((part, ""), |(k, r)| (k, r));
        let is_name = |k: &str| {
            k.bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
        };
        if (key.is_empty() && out.is_empty()) || !is_name(key) {
            return None;
        }
        if !key.is_empty() {
            out.push(Step::Key(key));
        }
        while !rest.is_empty() {
            let (n, after) = rest.split_once(']')?;
            out.push(Step::Index(n.parse().ok()?));
            rest = after.strip_prefix('[').unwrap_or(after);
            if !after.is_empty() && !after.starts_with('[') {
                return None;
            }
        }
    }
    Some(out)
}

/// The path a message starts with ("workload.tasks[0].program[2] (task
/// \"a\"): ..."), and the rest of the message after it.
pub fn leading_path(msg: &str) -> Option<(&str, &str)> {
    let end = msg
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '[' | ']')))
        .unwrap_or(msg.len());
    let (path, rest) = msg.split_at(end);
    (!path.is_empty() && (rest.starts_with(':') || rest.starts_with(" (")) && steps(path).is_some())
        .then_some((path, rest))
}

/// The 1-based line and column where the value at `path` starts in JSON
/// `text`; if the path leads past what the text holds, where its deepest
/// existing part starts. None if `path` is not a path or the text is not
/// an object or list there.
pub fn position_of(text: &str, path: &str) -> Option<(usize, usize)> {
    let steps = steps(path)?;
    let b = text.as_bytes();
    let mut at = skip_ws(b, 0);
    'step: for step in steps {
        match (b.get(at), step) {
            (Some(b'{'), Step::Key(want)) => {
                let mut i = skip_ws(b, at + 1);
                while b.get(i) == Some(&b'"') {
                    let key_end = string_end(b, i);
                    let key = &text[i + 1..key_end.saturating_sub(1).max(i + 1)];
                    i = skip_ws(b, key_end);
                    if b.get(i) != Some(&b':') {
                        break;
                    }
                    let value = skip_ws(b, i + 1);
                    if key == want {
                        at = value;
                        continue 'step;
                    }
                    i = skip_ws(b, value_end(b, value));
                    if b.get(i) != Some(&b',') {
                        break;
                    }
                    i = skip_ws(b, i + 1);
                }
                break;
            }
            (Some(b'['), Step::Index(want)) => {
                let mut i = skip_ws(b, at + 1);
                for n in 0.. {
                    if i >= b.len() || b[i] == b']' {
                        break;
                    }
                    if n == want {
                        at = i;
                        continue 'step;
                    }
                    i = skip_ws(b, value_end(b, i));
                    if b.get(i) != Some(&b',') {
                        break;
                    }
                    i = skip_ws(b, i + 1);
                }
                break;
            }
            _ => break,
        }
    }
    (at < b.len()).then(|| line_column(text, at))
}

/// A message that starts with a path, with the line and column of that
/// path in `text` put in front ("line 4, column 12: tasks[0]...");
/// `base` is the part of the message's path that `text` is the value of
/// ("workload" when `text` is the workload object). Unchanged if the
/// message names no path found in the text.
pub fn with_position(text: &str, base: &str, msg: &str) -> String {
    let Some((path, _)) = leading_path(msg) else {
        return msg.to_string();
    };
    // The path within `text`: what follows `base` ("" for `text` itself).
    let inner = match path.strip_prefix(base) {
        Some("") => Some(""),
        Some(p) if base.is_empty() => Some(p),
        Some(p) => p.strip_prefix('.').or(p.starts_with('[').then_some(p)),
        None => None,
    };
    match inner.and_then(|p| position_of(text, p)) {
        Some((line, column)) => format!("line {line}, column {column}: {msg}"),
        None => msg.to_string(),
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// Just past the string starting at `i` (its closing quote).
fn string_end(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < b.len() && b[i] != b'"' {
        i += if b[i] == b'\\' { 2 } else { 1 };
    }
    (i + 1).min(b.len())
}

/// Just past the value starting at `i`.
fn value_end(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(b'"') => string_end(b, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = string_end(b, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            b.len()
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']') && !b[j].is_ascii_whitespace()
            {
                j += 1;
            }
            j
        }
    }
}

/// The 1-based line and column (in characters) of byte `at`.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// `serde_json::to_value(t)`, by way of `t`'s compact text. The same
/// value for every type here (none serialises a float that the text would
/// round), and it reuses the text serialiser that links need anyway, so
/// the page's wasm carries no second, `Value`-building copy of each
/// `Serialize` impl.
pub fn value_of<T: serde::Serialize + ?Sized>(t: &T) -> serde_json::Value {
    let text = serde_json::to_string(t).expect("serialises");
    serde_json::from_str(&text).expect("serde_json reads what it wrote")
}

/// `serde_json::from_value::<T>(v)`, by way of `v`'s compact text, for
/// the same reason as [`value_of`]; an error reads as `from_value`'s
/// (without the text's line and column).
pub fn from_value<T: serde::de::DeserializeOwned>(v: &serde_json::Value) -> Result<T, String> {
    serde_json::from_str(&v.to_string()).map_err(|e| {
        let msg = e.to_string();
        let at = format!(" at line {} column {}", e.line(), e.column());
        msg.strip_suffix(&at).map(str::to_string).unwrap_or(msg)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_of_and_from_value_match_serde_jsons() {
        for name in crate::presets::names() {
            let exp = crate::presets::get(name).unwrap();
            let w = serde_json::to_value(&exp.workload).unwrap();
            assert_eq!(value_of(&exp.workload), w, "{name}");
            let back: crate::workload::bench::Benchmark = from_value(&w).unwrap();
            assert_eq!(back, exp.workload, "{name}");
            let costs = exp.machine.spec().unwrap().costs;
            assert_eq!(
                value_of(&costs),
                serde_json::to_value(&costs).unwrap(),
                "{name}"
            );
        }
        let wrong = serde_json::json!({ "kind": "hackbench", "groups": "many" });
        let theirs = serde_json::from_value::<crate::workload::bench::Benchmark>(wrong.clone())
            .unwrap_err()
            .to_string();
        let ours = from_value::<crate::workload::bench::Benchmark>(&wrong).unwrap_err();
        assert_eq!(ours, theirs);
    }

    const TEXT: &str = r#"{
  "kind": "custom",
  "channels": [{"kind": "pipe"}],
  "tasks": [
    {"name": "a", "program": [{"compute": {"ns": 100}},
                              {"write": {"channel": 3, "bytes": "x]}"}}]},
    {"name": "b", "program": []}
  ]
}"#;

    #[test]
    fn a_path_is_found_where_its_value_starts() {
        assert_eq!(position_of(TEXT, "kind"), Some((2, 11)));
        assert_eq!(position_of(TEXT, "channels[0]"), Some((3, 16)));
        assert_eq!(position_of(TEXT, "tasks[0].program[1]"), Some((6, 31)));
        assert_eq!(
            position_of(TEXT, "tasks[0].program[1].write.bytes"),
            Some((6, 65))
        );
        // Strings holding brackets do not end a value early.
        assert_eq!(position_of(TEXT, "tasks[1].name"), Some((7, 14)));
    }

    #[test]
    fn a_path_past_the_text_stops_at_its_deepest_part() {
        assert_eq!(position_of(TEXT, "tasks[0].program[7]"), Some((5, 30)));
        assert_eq!(position_of(TEXT, "tasks[0].nope"), Some((5, 5)));
        assert_eq!(position_of(TEXT, "not a path"), None);
    }

    #[test]
    fn path_at_and_position_of_agree() {
        for path in [
            "kind",
            "channels[0].kind",
            "tasks[0].program[1].write.channel",
            "tasks[1].name",
        ] {
            let (line, column) = position_of(TEXT, path).unwrap();
            // serde stops just past a scalar; the path open there is the same.
            let value_len = TEXT.lines().nth(line - 1).unwrap()[column - 1..]
                .find([',', '}', ']'])
                .unwrap();
            assert_eq!(path_at(TEXT, line, column - 1 + value_len), path, "{path}");
        }
    }

    #[test]
    fn messages_that_name_a_path_get_its_line_and_column() {
        let msg = "workload.tasks[0].program[1] (task \"a\"): channel 3 does not exist";
        assert_eq!(
            with_position(TEXT, "workload", msg),
            format!("line 6, column 31: {msg}")
        );
        assert_eq!(
            leading_path(msg),
            Some((
                "workload.tasks[0].program[1]",
                " (task \"a\"): channel 3 does not exist"
            ))
        );
        // The base itself is the text's first value.
        assert_eq!(
            with_position(TEXT, "workload", "workload: bad"),
            "line 1, column 1: workload: bad"
        );
        assert_eq!(
            with_position(TEXT, "workload", "workloads.x: bad"),
            "workloads.x: bad"
        );
        // No path, or a path elsewhere: the message as it was.
        assert_eq!(
            with_position(TEXT, "workload", "no path here"),
            "no path here"
        );
        assert_eq!(
            with_position(TEXT, "workload", "machine.costs: bad"),
            "machine.costs: bad"
        );
    }
}
