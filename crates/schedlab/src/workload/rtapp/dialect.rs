//! rt-app's JSON dialect. rt-app reads its file with json-c's default
//! (non-strict) tokener (json_object_from_file, rt-app_parse_config.c),
//! which takes C comments (`/* */`, `//`), trailing commas in objects and
//! arrays, single-quoted strings and any case of true, false and null; and
//! its examples are written for workgen (doc/workgen), which renames a key
//! repeated in one object (a second `run` becomes `run1`) so that each event
//! keeps its place, and once filled a bare `"suspend",` with the task's
//! name. So: keys keep their file order and their repeats, a key without a
//! value is `J::Omitted`, and every key carries its line for errors.

use crate::error::{Concern, Error, Result};

/// A JSON value as rt-app sees it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum J {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<Field>),
    /// A key written without `: value` (workgen's bare `"suspend",`).
    Omitted,
}

/// An object's key, where it is, and its value.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Field {
    pub key: String,
    pub line: u32,
    pub value: J,
}

/// Nesting deeper than this is refused (json-c's default depth is 32).
const MAX_DEPTH: usize = 64;

/// Reads a whole file in rt-app's dialect.
pub(super) fn parse(text: &str) -> Result<J> {
    let mut p = Parser {
        s: text.as_bytes(),
        at: 0,
        line: 1,
        line_start: 0,
    };
    p.skip_blank()?;
    let root = p.value(0)?;
    p.skip_blank()?;
    if p.at < p.s.len() {
        return Err(p.error("text after the end of the JSON value"));
    }
    Ok(root)
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
    line: u32,
    line_start: usize,
}

impl Parser<'_> {
    fn error(&self, msg: impl std::fmt::Display) -> Error {
        // Columns count characters, not bytes.
        let col = String::from_utf8_lossy(&self.s[self.line_start..self.at.min(self.s.len())])
            .chars()
            .count()
            + 1;
        Error::invalid(
            Concern::Import,
            format!("line {}, column {col}: {msg}", self.line),
        )
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn bump(&mut self) {
        if self.s[self.at] == b'\n' {
            self.line += 1;
            self.line_start = self.at + 1;
        }
        self.at += 1;
    }

    /// Skips white space and comments.
    fn skip_blank(&mut self) -> Result<()> {
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' | b'\n' | b'\r' => self.bump(),
                b'/' if self.s.get(self.at + 1) == Some(&b'/') => {
                    while self.peek().is_some_and(|c| c != b'\n') {
                        self.bump();
                    }
                }
                b'/' if self.s.get(self.at + 1) == Some(&b'*') => {
                    let open = self.error("a comment opened here is never closed");
                    self.bump();
                    self.bump();
                    loop {
                        match self.peek() {
                            None => return Err(open),
                            Some(b'*') if self.s.get(self.at + 1) == Some(&b'/') => {
                                self.bump();
                                self.bump();
                                break;
                            }
                            Some(_) => self.bump(),
                        }
                    }
                }
                _ => break,
            }
        }
        Ok(())
    }

    fn value(&mut self, depth: usize) -> Result<J> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!("nested deeper than {MAX_DEPTH} levels")));
        }
        match self.peek() {
            None => Err(self.error("the file ends where a value should be")),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(q @ (b'"' | b'\'')) => Ok(J::Str(self.string(q)?)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(c) if c.is_ascii_alphabetic() => self.word(),
            Some(_) => Err(self.error(format!("unexpected {:?}", self.char_here()))),
        }
    }

    fn char_here(&self) -> char {
        std::str::from_utf8(&self.s[self.at..])
            .ok()
            .and_then(|s| s.chars().next())
            .unwrap_or(char::REPLACEMENT_CHARACTER)
    }

    fn object(&mut self, depth: usize) -> Result<J> {
        self.bump();
        let mut fields = Vec::new();
        loop {
            self.skip_blank()?;
            match self.peek() {
                Some(b'}') => {
                    self.bump();
                    return Ok(J::Obj(fields));
                }
                Some(q @ (b'"' | b'\'')) => {
                    let line = self.line;
                    let key = self.string(q)?;
                    self.skip_blank()?;
                    let value = match self.peek() {
                        Some(b':') => {
                            self.bump();
                            self.skip_blank()?;
                            self.value(depth + 1)?
                        }
                        Some(b',' | b'}') => J::Omitted,
                        _ => return Err(self.error(format!("expected ':' after the key {key:?}"))),
                    };
                    fields.push(Field { key, line, value });
                    self.skip_blank()?;
                    match self.peek() {
                        Some(b',') => self.bump(),
                        Some(b'}') => {}
                        _ => return Err(self.error("expected ',' or '}' after a value")),
                    }
                }
                _ => return Err(self.error("expected a key in double quotes or '}'")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<J> {
        self.bump();
        let mut items = Vec::new();
        loop {
            self.skip_blank()?;
            if self.peek() == Some(b']') {
                self.bump();
                return Ok(J::Arr(items));
            }
            items.push(self.value(depth + 1)?);
            self.skip_blank()?;
            match self.peek() {
                Some(b',') => self.bump(),
                Some(b']') => {}
                _ => return Err(self.error("expected ',' or ']' after a value")),
            }
        }
    }

    fn string(&mut self, quote: u8) -> Result<String> {
        let open = self.error("a string opened here is never closed");
        self.bump();
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return Err(open),
                Some(c) if c == quote => {
                    self.bump();
                    return String::from_utf8(out).map_err(|_| self.error("a string is not UTF-8"));
                }
                Some(b'\\') => {
                    self.bump();
                    let Some(e) = self.peek() else {
                        return Err(open);
                    };
                    self.bump();
                    let c = match e {
                        b'"' | b'\'' | b'\\' | b'/' => e as char,
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return Err(self.error(format!("unknown escape \\{}", e as char))),
                    };
                    let mut buf = [0; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                Some(c) => {
                    out.push(c);
                    self.bump();
                }
            }
        }
    }

    /// The character of a `\uXXXX` escape (a surrogate pair takes two).
    fn unicode_escape(&mut self) -> Result<char> {
        let hi = self.hex4()?;
        let code = if (0xd800..0xdc00).contains(&hi) && self.s[self.at..].starts_with(b"\\u") {
            self.bump();
            self.bump();
            let lo = self.hex4()?;
            0x10000 + ((hi - 0xd800) << 10) + (lo.wrapping_sub(0xdc00) & 0x3ff)
        } else {
            hi
        };
        char::from_u32(code).ok_or_else(|| self.error(format!("\\u{code:04x} is not a character")))
    }

    fn hex4(&mut self) -> Result<u32> {
        let digits = self
            .s
            .get(self.at..self.at + 4)
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| self.error("\\u needs four hex digits"))?;
        for _ in 0..4 {
            self.bump();
        }
        Ok(digits)
    }

    fn number(&mut self) -> Result<J> {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E'))
        {
            self.bump();
        }
        let text = std::str::from_utf8(&self.s[start..self.at]).expect("ASCII");
        text.parse::<f64>()
            .ok()
            .filter(|n| n.is_finite())
            .map(J::Num)
            .ok_or_else(|| self.error(format!("{text:?} is not a number")))
    }

    fn word(&mut self) -> Result<J> {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            self.bump();
        }
        let word = std::str::from_utf8(&self.s[start..self.at]).expect("ASCII");
        match word.to_ascii_lowercase().as_str() {
            "true" => Ok(J::Bool(true)),
            "false" => Ok(J::Bool(false)),
            "null" => Ok(J::Null),
            _ => Err(self.error(format!(
                "{word:?} is not a value (keys and strings need quotes)"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(j: &J) -> Vec<&str> {
        let J::Obj(o) = j else { panic!("{j:?}") };
        o.iter().map(|f| f.key.as_str()).collect()
    }

    #[test]
    fn keys_keep_file_order_and_repeats() {
        let j = parse(r#"{"sleep":1,"run":2,"a":{"z":1,"b":2},"run":3}"#).unwrap();
        assert_eq!(keys(&j), ["sleep", "run", "a", "run"]);
    }

    #[test]
    fn comments_trailing_commas_quotes_and_bare_keys_as_json_c_and_workgen_take_them() {
        let text = "/* a tutorial */\n{\n  // one task\n  'tasks' : {\n    \"t\" : {\n      \"suspend\",\n      \"run\" : 10, /* us */\n      \"cpus\": [0, 1,],\n      \"x\": TRUE,\n    },\n  },\n}\n";
        let j = parse(text).unwrap();
        let J::Obj(root) = &j else { panic!() };
        let J::Obj(tasks) = &root[0].value else {
            panic!()
        };
        let J::Obj(t) = &tasks[0].value else { panic!() };
        assert_eq!(
            t.iter()
                .map(|f| (f.key.as_str(), f.line))
                .collect::<Vec<_>>(),
            [("suspend", 6), ("run", 7), ("cpus", 8), ("x", 9)]
        );
        assert_eq!(t[0].value, J::Omitted);
        assert_eq!(t[2].value, J::Arr(vec![J::Num(0.0), J::Num(1.0)]));
        assert_eq!(t[3].value, J::Bool(true));
    }

    #[test]
    fn a_wrong_file_is_refused_with_its_line_and_column() {
        for (text, want) in [
            ("{\"tasks\": {", "line 1, column 12: expected a key"),
            (
                "{\n  \"a\" 1\n}",
                "line 2, column 7: expected ':' after the key \"a\"",
            ),
            ("{\"a\": 1} x", "line 1, column 10: text after the end"),
            (
                "/* open",
                "line 1, column 1: a comment opened here is never closed",
            ),
            (
                "{\"a\": \"open}",
                "line 1, column 7: a string opened here is never closed",
            ),
            (
                "{\"a\": 1.2.3}",
                "line 1, column 12: \"1.2.3\" is not a number",
            ),
            ("{\"a\": yes}", "line 1, column 10: \"yes\" is not a value"),
            ("[1 2]", "line 1, column 4: expected ',' or ']'"),
            ("", "line 1, column 1: the file ends"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
        let deep = "[".repeat(100);
        assert!(parse(&deep)
            .unwrap_err()
            .to_string()
            .contains("nested deeper"));
    }

    #[test]
    fn escapes_read_as_json_has_them() {
        let j = parse(r#"["a\"b\\c\/\n\u00e9\ud83d\ude00", 'it''s']"#);
        // A single-quoted string ends at its quote: 'it' then 's' is an error.
        assert!(j.is_err());
        let j = parse(r#"["a\"b\\c\/\n\u00e9\ud83d\ude00", 'it\'s']"#).unwrap();
        assert_eq!(
            j,
            J::Arr(vec![
                J::Str("a\"b\\c/\n\u{e9}\u{1f600}".into()),
                J::Str("it's".into())
            ])
        );
    }
}
