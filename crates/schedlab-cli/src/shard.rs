//! `schedlab run --shard I/N` and `schedlab merge`: a sweep split across
//! machines.
//!
//! The unit is the experiment's point (sweep value x variant x repeat, each
//! with its own seed), the same unit `--jobs` and the page's workers spread:
//! a point's outcome does not depend on which process ran it, so assembling
//! outcomes from parts gives the bytes an unsharded run gives. Shard I of N
//! runs the points whose index is I-1 modulo N (round-robin, so each shard
//! gets a share of every sweep value and variant), and writes them as a part
//! file: JSON carrying the experiment itself (with --seed and --repeats
//! applied), its hash, the shard and the outcomes. Floats are written as
//! Rust prints them (shortest text that reads back to the same bits) because
//! a JSON number need not read back exactly.

use schedlab::experiment::{Experiment, PointOutcome};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The part-file format this build writes and reads.
const FORMAT: u32 = 1;

/// Shard `index` (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;
    /// `I/N` with 1 <= I <= N (1-based, as Slurm array indices and GNU
    /// parallel's job numbers are).
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = |why: &str| format!("--shard {s:?}: {why}");
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| bad("expected I/N, such as 1/4 (shard I of N, counting from 1)"))?;
        let num = |t: &str, what: &str| {
            t.trim()
                .parse::<usize>()
                .map_err(|_| bad(&format!("{what} {t:?} is not a whole number")))
        };
        let (index, count) = (num(i, "I")?, num(n, "N")?);
        if count == 0 {
            return Err(bad("N must be at least 1"));
        }
        if index == 0 || index > count {
            return Err(bad(&format!(
                "I must be between 1 and N (1/{count} to {count}/{count}); shards count from 1"
            )));
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// Indices of the points this shard runs, of `total`.
    pub fn indices(self, total: usize) -> Vec<usize> {
        (self.index - 1..total).step_by(self.count).collect()
    }
}

/// The experiment's identity: 64-bit FNV-1a of its canonical JSON, in hex.
/// Not a defence against forgery, only against merging the wrong files.
pub fn experiment_hash(exp: &Experiment) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in exp.to_json().bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PartFile {
    schedlab_part: u32,
    schedlab_version: String,
    experiment_hash: String,
    shard: String,
    /// Points of the whole experiment.
    points: usize,
    experiment: Value,
    outcomes: Vec<Value>,
}

/// A part file's text (pretty JSON and a newline).
pub fn write_part(
    exp: &Experiment,
    shard: Shard,
    total: usize,
    outcomes: &[(usize, PointOutcome)],
) -> Result<String, String> {
    let outcomes = outcomes
        .iter()
        .map(|(i, o)| {
            let mut v = serde_json::to_value(o).map_err(|e| e.to_string())?;
            v["index"] = Value::from(*i);
            v["value"] = Value::from(o.value.to_string());
            v["series"] = o.series.iter().map(|x| x.to_string()).collect();
            Ok(v)
        })
        .collect::<Result<Vec<_>, String>>()?;
    let part = PartFile {
        schedlab_part: FORMAT,
        schedlab_version: env!("CARGO_PKG_VERSION").to_string(),
        experiment_hash: experiment_hash(exp),
        shard: shard.to_string(),
        points: total,
        experiment: serde_json::to_value(exp).map_err(|e| e.to_string())?,
        outcomes,
    };
    Ok(serde_json::to_string_pretty(&part).map_err(|e| e.to_string())? + "\n")
}

/// One part file, read and checked on its own.
struct Part {
    path: String,
    exp: Experiment,
    hash: String,
    shard: Shard,
    points: usize,
    outcomes: Vec<(usize, PointOutcome)>,
}

fn read_part(path: &str) -> Result<Part, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let not_part =
        |why: String| format!("{path}: not a part file of `schedlab run --shard` ({why})");
    let file: PartFile = serde_json::from_str(&text).map_err(|e| not_part(e.to_string()))?;
    if file.schedlab_part != FORMAT {
        return Err(format!(
            "{path}: part-file format {} is not known to this build (it reads {FORMAT})",
            file.schedlab_part
        ));
    }
    let version = env!("CARGO_PKG_VERSION");
    if file.schedlab_version != version {
        return Err(format!(
            "{path}: written by schedlab {}, this is {version} (results may differ; run every shard with one build)",
            file.schedlab_version
        ));
    }
    let shard: Shard = file
        .shard
        .parse()
        .map_err(|e: String| format!("{path}: {}", e.replace("--shard", "shard")))?;
    let exp_json = serde_json::to_string(&file.experiment).map_err(|e| e.to_string())?;
    let exp = Experiment::from_json(&exp_json).map_err(|e| format!("{path}: experiment: {e}"))?;
    let hash = experiment_hash(&exp);
    if hash != file.experiment_hash {
        return Err(format!(
            "{path}: its experiment does not match its experiment_hash (was the file edited?)"
        ));
    }
    let mut outcomes = Vec::with_capacity(file.outcomes.len());
    for (n, mut v) in file.outcomes.into_iter().enumerate() {
        let at = |why: String| format!("{path}: outcomes[{n}]: {why}");
        let index = v
            .as_object_mut()
            .and_then(|o| o.remove("index"))
            .and_then(|i| i.as_u64())
            .ok_or_else(|| at("no point index".into()))? as usize;
        let exact = |v: &Value| -> Result<f64, String> {
            let text = v.as_str().ok_or("expected a number written as a string")?;
            text.parse()
                .map_err(|_| format!("{text:?} is not a number"))
        };
        let value = exact(&v["value"]).map_err(|e| at(format!("value: {e}")))?;
        let series = v["series"]
            .as_array()
            .ok_or_else(|| at("series: expected a list".into()))?
            .iter()
            .map(exact)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| at(format!("series: {e}")))?;
        // Read the rest as JSON, then put the exact floats back.
        v["value"] = Value::from(0.0);
        v["series"] = Value::Array(Vec::new());
        let mut o: PointOutcome = serde_json::from_value(v).map_err(|e| at(e.to_string()))?;
        o.value = value;
        o.series = series;
        outcomes.push((index, o));
    }
    let expected = shard.indices(file.points);
    let got: Vec<usize> = outcomes.iter().map(|(i, _)| *i).collect();
    if got != expected {
        return Err(format!(
            "{path}: shard {shard} of {} points should hold points {expected:?}, it holds {got:?}",
            file.points
        ));
    }
    Ok(Part {
        path: path.to_string(),
        exp,
        hash,
        shard,
        points: file.points,
        outcomes,
    })
}

/// The parts' experiment and every point's outcome in point order, or what
/// is wrong with the set of parts.
pub fn merge(paths: &[String]) -> Result<(Experiment, Vec<PointOutcome>), String> {
    let parts = paths
        .iter()
        .map(|p| read_part(p))
        .collect::<Result<Vec<_>, _>>()?;
    let first = parts.first().ok_or("merge needs the part files to merge")?;
    let mut slots: Vec<Option<&Part>> = vec![None; first.shard.count];
    for p in &parts {
        if p.hash != first.hash {
            return Err(format!(
                "{} is a part of another experiment than {} (\"{}\" {} vs \"{}\" {}; was --seed or --repeats different?)",
                p.path, first.path, p.exp.name, p.hash, first.exp.name, first.hash
            ));
        }
        if p.shard.count != first.shard.count || p.points != first.points {
            return Err(format!(
                "{} is shard {} but {} is shard {}: every part must come from the same number of shards",
                p.path, p.shard, first.path, first.shard
            ));
        }
        let slot = &mut slots[p.shard.index - 1];
        if let Some(other) = slot {
            return Err(format!(
                "shard {} is given twice: {} and {}",
                p.shard, other.path, p.path
            ));
        }
        *slot = Some(p);
    }
    let missing: Vec<String> = (1..=first.shard.count)
        .filter(|i| slots[i - 1].is_none())
        .map(|i| format!("{i}/{}", first.shard.count))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "shard{} {} missing (given {} of {} parts)",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", ") + if missing.len() == 1 { " is" } else { " are" },
            parts.len(),
            first.shard.count
        ));
    }
    let mut outcomes: Vec<Option<PointOutcome>> = vec![None; first.points];
    for p in parts.iter() {
        for (i, o) in &p.outcomes {
            outcomes[*i] = Some(o.clone());
        }
    }
    // Every shard's indices were checked against its share, so every slot is full.
    let outcomes = outcomes.into_iter().flatten().collect::<Vec<_>>();
    debug_assert_eq!(outcomes.len(), first.points);
    Ok((parts[0].exp.clone(), outcomes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_syntax() {
        assert_eq!("2/3".parse(), Ok(Shard { index: 2, count: 3 }));
        assert_eq!("1/1".parse(), Ok(Shard { index: 1, count: 1 }));
        let err = |s: &str| s.parse::<Shard>().unwrap_err();
        assert!(err("0/3").contains("I must be between 1 and N (1/3 to 3/3)"));
        assert!(err("4/3").contains("I must be between 1 and N"));
        assert!(err("1/0").contains("N must be at least 1"));
        assert!(err("3").contains("expected I/N"));
        assert!(err("a/3").contains("I \"a\" is not a whole number"));
        assert!(err("1/-2").contains("N \"-2\" is not a whole number"));
    }

    #[test]
    fn shards_deal_every_point_once() {
        let total = 10;
        let mut seen: Vec<usize> = (1..=3)
            .flat_map(|i| Shard { index: i, count: 3 }.indices(total))
            .collect();
        assert_eq!(Shard { index: 2, count: 3 }.indices(total), [1, 4, 7]);
        seen.sort_unstable();
        assert_eq!(seen, (0..total).collect::<Vec<_>>());
        assert!(Shard { index: 5, count: 5 }.indices(3).is_empty());
    }
}
