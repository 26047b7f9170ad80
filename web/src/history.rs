//! Every run in this browser, kept in localStorage (the last [`KEEP`]): its
//! experiment, its results (values and spreads; the tools' text and the
//! counters are left out to stay small) and its link, with what differed
//! from the run before ("B: +WAKE_AFFINE on NUMA"). Any run can be pinned
//! as the baseline that the charts and the table set later runs against.

use schedlab::experiment::{Experiment, Results, Row, Spread};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// How many runs are kept.
pub const KEEP: usize = 20;
const KEY: &str = "schedlab.history";
const PINNED_KEY: &str = "schedlab.baseline";
/// Where kept runs that cannot be read are set aside (a JSON array of their
/// texts), so that no later save overwrites them.
pub const UNREADABLE_KEY: &str = "schedlab.history.unreadable";
/// What the page says when the browser keeps nothing for it.
pub const NO_STORAGE: &str = "This browser keeps no storage for this page (it is disabled or blocked): runs and your last experiment are not kept once the page closes.";

/// One run, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// 1, 2, 3, ... in this browser.
    pub id: u64,
    /// Milliseconds since the epoch.
    pub when: f64,
    pub experiment: Experiment,
    pub link: String,
    /// What differed from the run before it, in words.
    pub changes: Vec<String>,
    pub variants: Vec<String>,
    pub rows: Vec<StoredRow>,
}

/// A kept run as the editor lists it: a [`Record`] without its results,
/// read from the same storage. The editor never reads the results, and
/// leaving them out keeps their deserialiser out of the first load (the
/// runs module reads whole [`Record`]s).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Entry {
    pub id: u64,
    pub when: f64,
    pub experiment: Experiment,
    pub link: String,
    pub changes: Vec<String>,
}

impl Entry {
    /// "run 3"
    pub fn name(&self) -> String {
        format!("run {}", self.id)
    }
}

/// A row of results: the sweep value, and each variant's value and spread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredRow {
    pub x: Option<Value>,
    pub values: BTreeMap<String, f64>,
    pub spread: BTreeMap<String, (f64, f64)>,
}

impl Record {
    /// A run of `exp` with `results`, numbered after `before` (the history so far).
    pub fn of(
        exp: &Experiment,
        results: &Results,
        link: String,
        when: f64,
        before: &[Record],
    ) -> Record {
        let id = before.iter().map(|r| r.id).max().unwrap_or(0) + 1;
        let changes = match before.last() {
            Some(prev) => differences(&prev.experiment, exp),
            None => vec!["the first run kept".to_string()],
        };
        Record {
            id,
            when,
            experiment: exp.clone(),
            link,
            changes,
            variants: results.variants.clone(),
            rows: results
                .rows
                .iter()
                .map(|r| StoredRow {
                    x: r.x.clone(),
                    values: r.values.clone(),
                    spread: r
                        .spread
                        .iter()
                        .map(|(k, s)| (k.clone(), (s.min, s.max)))
                        .collect(),
                })
                .collect(),
        }
    }

    /// The stored results as the charts read them.
    pub fn results(&self) -> Results {
        Results {
            experiment: self.experiment.name.clone(),
            metric: self.experiment.workload.metric(),
            variants: self.variants.clone(),
            repeats: self.experiment.repeats,
            rows: self
                .rows
                .iter()
                .map(|r| Row {
                    x: r.x.clone(),
                    values: r.values.clone(),
                    spread: r
                        .spread
                        .iter()
                        .map(|(k, (min, max))| {
                            (
                                k.clone(),
                                Spread {
                                    min: *min,
                                    max: *max,
                                    stddev: 0.0,
                                },
                            )
                        })
                        .collect(),
                    series: BTreeMap::new(),
                    text: BTreeMap::new(),
                    // The history keeps values and spreads only.
                    wakeup_latency: BTreeMap::new(),
                    cpu: BTreeMap::new(),
                })
                .collect(),
            counters: BTreeMap::new(),
        }
    }

    /// "run 3"
    pub fn name(&self) -> String {
        format!("run {}", self.id)
    }
}

/// `history` with `record` added, the oldest beyond [`KEEP`] dropped.
pub fn push(history: &[Record], record: Record) -> Vec<Record> {
    let mut out: Vec<Record> = history.to_vec();
    out.push(record);
    let extra = out.len().saturating_sub(KEEP);
    out.drain(..extra);
    out
}

/// What differs between two experiments, in words: the machine, the
/// benchmark and its parameters, the sweep, seed and repeats, the
/// variants, and each variant's policy and own changes
/// ("B: +WAKE_AFFINE on NUMA", "clients 8 -> 16").
pub fn differences(old: &Experiment, new: &Experiment) -> Vec<String> {
    let mut out = Vec::new();
    if old.name != new.name {
        out.push(format!("experiment {}", new.name));
    }
    if old.machine != new.machine {
        let name = |e: &Experiment| match &e.machine {
            schedlab::experiment::MachineRef::Preset(n) => n.clone(),
            schedlab::experiment::MachineRef::Spec(s) => format!("{} (edited)", s.name),
        };
        let (a, b) = (name(old), name(new));
        out.push(if a == b {
            format!("machine {b}")
        } else {
            format!("machine {a} -> {b}")
        });
    }
    let (ow, nw) = (json(&old.workload), json(&new.workload));
    if ow["kind"] != nw["kind"] {
        out.push(format!("benchmark {}", new.workload.kind()));
    } else {
        diff_values("", &ow, &nw, &mut |path, a, b| {
            out.push(format!("{path} {} -> {}", plain(a), plain(b)))
        });
    }
    if old.sweep != new.sweep {
        out.push(match &new.sweep {
            Some(s) => format!(
                "sweep {} over {}",
                s.param,
                s.values.iter().map(plain).collect::<Vec<_>>().join(", ")
            ),
            None => "no sweep".to_string(),
        });
    }
    if old.repeats != new.repeats {
        out.push(format!("repeats {} -> {}", old.repeats, new.repeats));
    }
    if old.seed != new.seed {
        out.push(format!("seed {} -> {}", old.seed, new.seed));
    }
    let labels = |e: &Experiment| {
        e.variants
            .iter()
            .map(|v| v.label.clone())
            .collect::<Vec<_>>()
    };
    if labels(old) != labels(new) {
        out.push(format!("variants {}", labels(new).join(", ")));
    }
    for (i, v) in new.variants.iter().enumerate() {
        let Some(ov) = old.variants.get(i) else {
            continue;
        };
        let mut mine = Vec::new();
        let (op, np) = (
            json(&old.policy.with(&ov.policy)),
            json(&new.policy.with(&v.policy)),
        );
        diff_values("", &op, &np, &mut |path, a, b| {
            mine.push(policy_words(path, a, b))
        });
        let (ow, nw) = (json(&ov.workload), json(&v.workload));
        diff_values("", &ow, &nw, &mut |path, a, b| {
            mine.push(match b {
                Value::Null => format!("{path} as the base"),
                b if a.is_null() => format!("{path} {}", plain(b)),
                b => format!("{path} {} -> {}", plain(a), plain(b)),
            })
        });
        if !mine.is_empty() {
            out.push(format!("{}: {}", v.label, mine.join(", ")));
        }
    }
    if out.is_empty() {
        out.push("the same experiment again".to_string());
    }
    out
}

fn json<T: Serialize>(t: &T) -> Value {
    serde_json::to_value(t).expect("serialises")
}

fn plain(v: &Value) -> String {
    match v {
        Value::Null => "unset".to_string(),
        other => crate::fields::plain(other),
    }
}

/// Calls `each(path, old, new)` for every leaf that differs.
fn diff_values(path: &str, a: &Value, b: &Value, each: &mut dyn FnMut(&str, &Value, &Value)) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                diff_values(
                    &p,
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                    each,
                );
            }
        }
        (Value::Object(_), Value::Null) => {
            diff_values(path, a, &Value::Object(Default::default()), each)
        }
        (Value::Null, Value::Object(_)) => {
            diff_values(path, &Value::Object(Default::default()), b, each)
        }
        _ if a != b => each(path, a, b),
        _ => {}
    }
}

/// A policy difference as the Kernel panel says it.
fn policy_words(path: &str, old: &Value, new: &Value) -> String {
    let parts: Vec<&str> = path.split('.').collect();
    match (parts.as_slice(), new) {
        (["levels", level, "flags", flag], Value::Bool(on)) => {
            format!("{}{flag} on {level}", if *on { "+" } else { "-" })
        }
        (["levels", level, "flags", flag], _) => format!("{flag} on {level} as the era has it"),
        (["levels", level, "params", param], _) => {
            format!("{param} on {level} {} -> {}", plain(old), plain(new))
        }
        (["features", name], Value::Bool(on)) => format!("{}{name}", if *on { "" } else { "NO_" }),
        (["features", name], _) => format!("{name} as the era has it"),
        (["tunables", name], _) => format!("{name} {} -> {}", plain(old), plain(new)),
        (["era"], _) => format!("era {} -> {}", plain(old), plain(new)),
        _ => format!("{path} {} -> {}", plain(old), plain(new)),
    }
}

/// The runs kept in this browser, oldest first, and what went wrong
/// reading them, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Kept<T> {
    pub runs: Vec<T>,
    pub trouble: Option<String>,
}

/// The runs kept in this browser, oldest first.
pub fn load() -> Kept<Record> {
    read()
}

/// Every run kept, as the editor lists them ([`Entry`]), oldest first.
pub fn entries() -> Kept<Entry> {
    read()
}

/// Reads the history; runs that cannot be read are set aside under
/// [`UNREADABLE_KEY`] (the rest is rewritten as it was), so a corrupt run
/// costs only itself and the next save cannot overwrite it.
fn read<T: serde::de::DeserializeOwned>() -> Kept<T> {
    let Some(s) = crate::link::storage() else {
        return Kept {
            runs: Vec::new(),
            trouble: Some(NO_STORAGE.into()),
        };
    };
    let text = match s.get_item(KEY) {
        Ok(Some(text)) => text,
        Ok(None) => {
            return Kept {
                runs: Vec::new(),
                trouble: None,
            }
        }
        Err(_) => {
            return Kept {
                runs: Vec::new(),
                trouble: Some(NO_STORAGE.into()),
            }
        }
    };
    let split = split::<T>(&text);
    let Some(why) = split.why else {
        return Kept {
            runs: split.runs,
            trouble: None,
        };
    };
    let set_aside = append_unreadable(&s, &split.unreadable).is_ok()
        && match &split.readable {
            Some(texts) => s.set_item(KEY, &format!("[{}]", texts.join(","))).is_ok(),
            None => s.remove_item(KEY).is_ok(),
        };
    let what = if split.readable.is_some() {
        format!(
            "{} of the {} runs kept in this browser could not be read ({why})",
            split.unreadable.len(),
            split.unreadable.len() + split.runs.len()
        )
    } else {
        format!("The runs kept in this browser could not be read ({why})")
    };
    let trouble = if set_aside {
        format!("{what}; they are set aside in localStorage under \"{UNREADABLE_KEY}\", and new runs are kept beside the others.")
    } else {
        format!("{what}; the browser's storage would not take them aside, so they are left as they were.")
    };
    Kept {
        runs: split.runs,
        trouble: Some(trouble),
    }
}

/// A kept history's text split into the runs that read as `T` and the
/// texts of those that do not.
#[derive(Debug)]
struct Split<T> {
    runs: Vec<T>,
    /// The texts of the readable runs, as stored; None if the whole text
    /// is not a JSON array.
    readable: Option<Vec<String>>,
    unreadable: Vec<String>,
    /// The first reason a run could not be read.
    why: Option<String>,
}

fn split<T: serde::de::DeserializeOwned>(text: &str) -> Split<T> {
    let values: Vec<Box<serde_json::value::RawValue>> = match serde_json::from_str(text) {
        Ok(values) => values,
        Err(e) => {
            return Split {
                runs: Vec::new(),
                readable: None,
                unreadable: vec![text.to_string()],
                why: Some(format!(
                    "not a JSON list of runs: {}",
                    schedlab::error::excerpt(&e.to_string())
                )),
            }
        }
    };
    let mut out = Split {
        runs: Vec::new(),
        readable: Some(Vec::new()),
        unreadable: Vec::new(),
        why: None,
    };
    for (i, v) in values.into_iter().enumerate() {
        let text = v.get().to_string();
        match serde_json::from_str::<T>(&text) {
            Ok(run) => {
                out.runs.push(run);
                out.readable.as_mut().expect("a list").push(text);
            }
            Err(e) => {
                out.why.get_or_insert(format!(
                    "run {} of the list: {}",
                    i + 1,
                    schedlab::error::excerpt(&e.to_string())
                ));
                out.unreadable.push(text);
            }
        }
    }
    out
}

/// Adds `texts` to what is set aside under [`UNREADABLE_KEY`].
fn append_unreadable(s: &web_sys::Storage, texts: &[String]) -> Result<(), ()> {
    let mut all: Vec<String> = match s.get_item(UNREADABLE_KEY).map_err(|_| ())? {
        // Something else under the key is kept too, as one more text.
        Some(old) => serde_json::from_str(&old).unwrap_or_else(|_| vec![old]),
        None => Vec::new(),
    };
    all.extend_from_slice(texts);
    let text = serde_json::to_string(&all).expect("strings serialise");
    s.set_item(UNREADABLE_KEY, &text).map_err(|_| ())
}

/// Forgets every run kept.
pub fn forget() {
    if let Some(s) = crate::link::storage() {
        let _ = s.remove_item(KEY);
    }
}

/// Keeps `history`; if the browser's storage is full, the oldest go first.
/// Says what could not be kept, if anything.
pub fn save(history: &[Record]) -> Option<String> {
    let Some(s) = crate::link::storage() else {
        return Some(NO_STORAGE.into());
    };
    let mut keep = history;
    while !keep.is_empty() {
        let text = serde_json::to_string(keep).expect("serialises");
        if s.set_item(KEY, &text).is_ok() {
            let dropped = history.len() - keep.len();
            return (dropped > 0).then(|| {
                format!("The browser's storage is full: the oldest {dropped} of the runs kept were let go to keep this one.")
            });
        }
        keep = &keep[1..];
    }
    Some("The browser's storage is full: this run is not kept (its results stay on the page until it closes).".into())
}

/// The pinned baseline's id, if any.
pub fn load_pinned() -> Option<u64> {
    crate::link::storage()
        .and_then(|s| s.get_item(PINNED_KEY).ok().flatten())
        .and_then(|t| t.parse().ok())
}

pub fn save_pinned(id: Option<u64>) {
    if let Some(s) = crate::link::storage() {
        let _ = match id {
            Some(id) => s.set_item(PINNED_KEY, &id.to_string()),
            None => s.remove_item(PINNED_KEY),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab::presets;

    #[test]
    fn differences_are_told_as_the_panels_name_them() {
        let old = presets::get("waweight-tbench").unwrap();
        let mut new = old.clone();
        let b = new.variants[1].label.clone();
        new.variants[1]
            .policy
            .levels
            .entry_or_default("NUMA".into())
            .flags
            .insert("WAKE_AFFINE".into(), true);
        new.variants[1]
            .workload
            .insert("affinity".into(), "0-3".into());
        new.repeats = 3;
        new.workload = new
            .workload
            .with_param("clients", &Value::from(16))
            .unwrap();
        let d = differences(&old, &new);
        assert!(d.contains(&"repeats 1 -> 3".to_string()), "{d:?}");
        assert!(
            d.iter()
                .any(|s| s.starts_with("clients ") && s.ends_with("-> 16")),
            "{d:?}"
        );
        let mine = d.iter().find(|s| s.starts_with(&format!("{b}: "))).unwrap();
        assert!(
            mine.contains("+WAKE_AFFINE on NUMA") || mine.contains("WAKE_AFFINE"),
            "{mine}"
        );
        assert!(mine.contains("affinity 0-3"), "{mine}");
        assert_eq!(differences(&old, &old), ["the same experiment again"]);
    }

    #[test]
    fn records_keep_the_results_the_charts_need_and_the_history_is_bounded() {
        let exp = presets::get("kvm-pipe-test-pinning").unwrap();
        let r = schedlab::experiment::run_all(&exp, &mut |_, _| true).unwrap();
        let mut h = Vec::new();
        for i in 0..KEEP + 3 {
            let rec = Record::of(&exp, &r, format!("#{i}"), 0.0, &h);
            h = push(&h, rec);
        }
        assert_eq!(h.len(), KEEP);
        assert_eq!(h.last().unwrap().id as usize, KEEP + 3);
        let back = h[0].results();
        assert_eq!(back.variants, r.variants);
        assert_eq!(back.rows[0].values, r.rows[0].values);
        assert_eq!(back.metric, r.metric);
        let text = serde_json::to_string(&h).unwrap();
        let again: Vec<Record> = serde_json::from_str(&text).unwrap();
        assert_eq!(again, h);
        // The editor's list reads the same text without the results.
        let listed: Vec<Entry> = serde_json::from_str(&text).unwrap();
        assert_eq!(listed.len(), h.len());
        for (e, r) in listed.iter().zip(&h) {
            assert_eq!((e.id, e.when, &e.experiment), (r.id, r.when, &r.experiment));
            assert_eq!(
                (&e.link, &e.changes, e.name()),
                (&r.link, &r.changes, r.name())
            );
        }
        assert!(text.len() < 40_000 * KEEP, "{} bytes", text.len());
    }

    #[test]
    fn a_corrupt_history_costs_only_the_runs_that_cannot_be_read() {
        let exp = presets::get("kvm-pipe-test-pinning").unwrap();
        let r = schedlab::experiment::run_all(&exp, &mut |_, _| true).unwrap();
        let mut h = Vec::new();
        for i in 0..3 {
            h = push(&h, Record::of(&exp, &r, format!("#{i}"), 0.0, &h));
        }
        let mut values: Vec<Value> =
            serde_json::from_value(serde_json::to_value(&h).unwrap()).unwrap();
        values[1]["experiment"] = Value::from("not an experiment");
        let text = serde_json::to_string(&values).unwrap();

        let s = split::<Record>(&text);
        assert_eq!(s.runs.iter().map(|r| r.id).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(s.unreadable, [serde_json::to_string(&values[1]).unwrap()]);
        assert!(
            s.why.as_deref().unwrap().starts_with("run 2 of the list: "),
            "{:?}",
            s.why
        );
        // The readable runs are kept as they were stored, byte for byte.
        let again = format!("[{}]", s.readable.unwrap().join(","));
        let back: Vec<Record> = serde_json::from_str(&again).unwrap();
        assert_eq!(back, [h[0].clone(), h[2].clone()]);

        let garbage = split::<Entry>(&text[..text.len() / 2]);
        assert!(garbage.runs.is_empty() && garbage.readable.is_none());
        assert_eq!(garbage.unreadable, [&text[..text.len() / 2]]);
        assert!(garbage
            .why
            .unwrap()
            .starts_with("not a JSON list of runs: "));

        let fine = split::<Entry>(&serde_json::to_string(&h).unwrap());
        assert_eq!(
            (fine.runs.len(), fine.unreadable.len(), fine.why),
            (3, 0, None)
        );
    }
}

/// The list of earlier runs: open one, pin it as the baseline, or follow its link.
#[derive(yew::Properties, PartialEq)]
pub struct ListProps {
    pub kept: std::rc::Rc<Kept<Entry>>,
    pub pinned: Option<u64>,
    pub on_open: yew::Callback<Experiment>,
    pub on_pin: yew::Callback<Option<u64>>,
    pub on_clear: yew::Callback<()>,
}

#[yew::function_component]
pub fn HistoryList(props: &ListProps) -> yew::Html {
    use yew::prelude::*;
    let trouble = props.kept.trouble.as_ref().map(|t| {
        html! { <p class="notice" id="storage-trouble" role="status">{ t.clone() }</p> }
    });
    let history = &props.kept.runs;
    if history.is_empty() {
        return html! { { for trouble } };
    }
    let items = history.iter().rev().map(|r| {
        let pinned = props.pinned == Some(r.id);
        let open = {
            let (cb, exp) = (props.on_open.clone(), r.experiment.clone());
            Callback::from(move |_| cb.emit(exp.clone()))
        };
        let id = r.id;
        let pin_text = if pinned { "Baseline (unpin)" } else { "Pin as baseline" };
        let pin = props
            .on_pin
            .reform(move |_| if pinned { None } else { Some(id) });
        let when = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(r.when));
        let time = if cfg!(target_arch = "wasm32") {
            String::from(when.to_locale_time_string("en-GB"))
        } else {
            String::new()
        };
        html! {
            <li data-run={r.id.to_string()} class={classes!(pinned.then_some("pinned"))}>
                <div class="run-head">
                    <strong>{ r.name() }</strong>
                    <span class="hint">{ format!(" {time} {}", r.experiment.name) }</span>
                    if pinned { <span class="badge">{ "baseline" }</span> }
                </div>
                <p class="run-changes">{ r.changes.join("; ") }</p>
                <div class="actions">
                    <button class="secondary small" onclick={open}
                        aria-label={format!("Open {} in the editor", r.name())}>{ "Open" }</button>
                    <button class="secondary small" onclick={pin} aria-pressed={pinned.to_string()}
                        aria-label={format!("{pin_text}: {}", r.name())}>{ pin_text }</button>
                    <a href={r.link.clone()} aria-label={format!("Link to {}", r.name())}>{ "link" }</a>
                </div>
            </li>
        }
    });
    html! {
        <details class="history panel" id="history" open=true>
            <summary>{ format!("Earlier runs in this browser ({})", history.len()) }</summary>
            { for trouble }
            <p class="hint">{ "Each run is kept here (the last 20) with what changed from the one before. Pin one as the baseline to see later runs against it in the charts and the table." }</p>
            <ol class="runs">{ for items }</ol>
            <button class="secondary small" id="clear-history" onclick={props.on_clear.reform(|_| ())}>{ "Forget these runs" }</button>
        </details>
    }
}
