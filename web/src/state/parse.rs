//! The text a user types, as the values an experiment holds.

use schedlab::error::Concern;
use schedlab::workload::bench::Benchmark;
use schedlab::Error;

pub(super) fn invalid(concern: Concern, msg: impl Into<String>) -> Error {
    Error::invalid(concern, msg.into())
}

pub(super) fn parse_u64(text: &str) -> Result<u64, Error> {
    let t = text.trim().replace('_', "");
    t.parse().map_err(|_| {
        invalid(
            Concern::Experiment,
            format!(
                "\"{}\" is not a whole number",
                schedlab::error::excerpt(text.trim())
            ),
        )
    })
}

pub(super) fn parse_u32(text: &str) -> Result<u32, Error> {
    let v = parse_u64(text)?;
    u32::try_from(v).map_err(|_| {
        invalid(
            Concern::Experiment,
            format!("{v} is too large (at most {})", u32::MAX),
        )
    })
}

/// A JSON array of numbers only, shown and typed as "5, 15, 85".
pub fn is_number_list(v: &serde_json::Value) -> bool {
    v.as_array()
        .is_some_and(|a| a.iter().all(serde_json::Value::is_number))
}

/// SLIT rows, one per line, numbers separated by spaces or commas; none for
/// empty text.
pub(super) fn parse_distances(text: &str) -> Result<Option<Vec<Vec<u32>>>, Error> {
    let rows: Vec<Vec<u32>> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            line.split(|c: char| c.is_whitespace() || c == ',')
                .filter(|s| !s.is_empty())
                .map(|s| {
                    parse_u32(s).map_err(|e| {
                        invalid(Concern::Machine, format!("distances line {}: {e}", i + 1))
                    })
                })
                .collect()
        })
        .collect::<Result<_, Error>>()?;
    Ok((!rows.is_empty()).then_some(rows))
}

/// A typed parameter value as JSON of the parameter's type: numbers for
/// numbers, true/false for switches, strings otherwise; empty clears an
/// optional parameter (null).
pub(super) fn param_value(
    bench: &Benchmark,
    name: &str,
    text: &str,
) -> Result<serde_json::Value, Error> {
    let info = bench
        .params()
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| {
            Error::unknown(
                Concern::Workload,
                "parameter of this workload",
                name,
                bench.params().iter().map(|p| p.name),
            )
        })?;
    let current = schedlab::json_path::value_of(bench)[name].clone();
    let t = text.trim();
    Ok(match current {
        _ if info.optional && t.is_empty() => serde_json::Value::Null,
        serde_json::Value::Number(_) => parse_u64(t)?.into(),
        serde_json::Value::Bool(_) => match t {
            "true" | "on" | "1" => true.into(),
            "false" | "off" | "0" => false.into(),
            _ => {
                return Err(invalid(
                    Concern::Workload,
                    format!(
                        "{name} is on or off, not \"{}\"",
                        schedlab::error::excerpt(t)
                    ),
                ))
            }
        },
        // An unset optional parameter has no value to take the type from:
        // a number if the workload takes one (exit_us, a custom run's
        // duration_ms), else text (an affinity such as "3").
        serde_json::Value::Null => match parse_u64(t) {
            Ok(n) if bench.with_param(name, &n.into()).is_ok() => n.into(),
            _ => t.into(),
        },
        _ => t.into(),
    })
}
