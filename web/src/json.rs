//! JSON as the CLI prints it (`serde_json::to_string_pretty`), made from
//! the compact JSON the link codec already writes. The editor shows and
//! downloads the experiment's JSON on every edit; going through the compact
//! serialiser that `schedlab::codec::encode` needs anyway keeps a second,
//! pretty copy of every `Serialize` impl out of the first-load wasm. The
//! tests hold the output to `to_string_pretty`'s, byte for byte.

use schedlab::experiment::Experiment;
use schedlab::workload::bench::Custom;

/// `exp.to_json()`, byte for byte.
pub fn experiment(exp: &Experiment) -> String {
    pretty(&serde_json::to_string(exp).expect("an experiment serialises"))
}

/// `c.to_json()`, byte for byte.
pub fn custom(c: &Custom) -> String {
    let b = schedlab::workload::bench::Benchmark::Custom(c.clone());
    pretty(&serde_json::to_string(&b).expect("a workload serialises"))
}

/// Re-indents compact JSON (no whitespace outside strings) as serde_json's
/// `PrettyFormatter` writes it: two spaces a level, `": "` after a key,
/// `{}` and `[]` when empty.
pub fn pretty(compact: &str) -> String {
    let mut out = String::with_capacity(compact.len() * 2);
    let mut depth = 0usize;
    let mut chars = compact.chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push('"');
                while let Some(s) = chars.next() {
                    out.push(s);
                    match s {
                        '\\' => {
                            if let Some(e) = chars.next() {
                                out.push(e);
                            }
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '{' | '[' => {
                let close = if c == '{' { '}' } else { ']' };
                out.push(c);
                if chars.peek() == Some(&close) {
                    chars.next();
                    out.push(close);
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(',');
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab::presets;
    use schedlab::workload::bench::Benchmark;

    #[test]
    fn every_preset_prints_as_to_json_does() {
        for name in presets::names() {
            let exp = presets::get(name).unwrap();
            assert_eq!(experiment(&exp), exp.to_json(), "{name}");
            if let Benchmark::Custom(c) = &exp.workload {
                assert_eq!(custom(c), c.to_json(), "{name}");
            }
        }
    }

    #[test]
    fn strings_with_brackets_quotes_and_escapes_and_empty_containers_stay_exact() {
        let v = serde_json::json!({
            "a": "x{y}[z],:\"q\"\\n\u{1}é",
            "e": {}, "l": [], "n": [1, -2.5e-7, null, true, {"k": [[]]}],
            "": {"deep": {"deeper": [{}]}}
        });
        let compact = serde_json::to_string(&v).unwrap();
        assert_eq!(pretty(&compact), serde_json::to_string_pretty(&v).unwrap());
    }
}
