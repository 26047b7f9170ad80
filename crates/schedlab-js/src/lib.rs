//! schedlab for JavaScript: run experiments, list presets, and encode and
//! decode links, with plain JS objects in and out (serde-wasm-bindgen).
//! Built into `dist/schedlab-js.js` (an ES module; call its default export
//! once to load the wasm); `dist/schedlab-js-example.html` shows it in use.
//!
//! Runs are synchronous: call `runExperiment` from a Web Worker for long
//! experiments, or keep them short on a docs page.
//!
//! Errors are thrown as JS `Error`s named `SchedlabError`, with the words
//! as their message and a `concern` saying which part of the input was
//! wrong: "machine", "policy", "workload", "experiment", "link", "import"
//! or "run" (absent for a value JavaScript passed that is not JSON-like).

use schedlab::experiment::{run_all, Experiment};
use schedlab::topology::{self, Topology};
use schedlab::{codec, explain, presets, report};
use serde::Serialize;
use wasm_bindgen::prelude::*;

/// An error thrown to JavaScript (see the crate's documentation).
pub struct Failure(JsValue);

impl Failure {
    fn new(msg: &str, concern: Option<&str>) -> Self {
        let err = js_sys::Error::new(msg);
        err.set_name("SchedlabError");
        if let Some(c) = concern {
            // Setting a property on a fresh Error cannot fail.
            let _ = js_sys::Reflect::set(&err, &"concern".into(), &c.into());
        }
        Failure(err.into())
    }
}

impl From<schedlab::Error> for Failure {
    fn from(e: schedlab::Error) -> Self {
        Failure::new(&e.to_string(), Some(e.concern().name()))
    }
}

impl From<serde_wasm_bindgen::Error> for Failure {
    fn from(e: serde_wasm_bindgen::Error) -> Self {
        Failure::new(&e.to_string(), None)
    }
}

impl From<Failure> for JsValue {
    fn from(f: Failure) -> JsValue {
        f.0
    }
}

/// Plain objects for maps, so results read as `r.rows[0].values.A`.
fn to_js<T: Serialize>(value: &T) -> Result<JsValue, Failure> {
    let s = serde_wasm_bindgen::Serializer::new().serialize_maps_as_objects(true);
    Ok(value.serialize(&s)?)
}

/// An experiment from a JS object (any known version), a preset name, or a
/// link fragment (`preset=NAME`, `x=CODE`, with or without `#`).
fn experiment_of(value: JsValue) -> Result<Experiment, Failure> {
    if let Some(text) = value.as_string() {
        if presets::names().any(|n| n == text) {
            return Ok(presets::get(&text)?);
        }
        return Ok(codec::parse_fragment(&text)?.experiment);
    }
    let json: serde_json::Value = serde_wasm_bindgen::from_value(value)?;
    Ok(Experiment::from_json(&json.to_string())?)
}

#[derive(Serialize)]
struct MachineInfo {
    name: String,
    summary: String,
    description: String,
}

/// The machine presets: `[{name, summary, description}]`.
#[wasm_bindgen(js_name = machinePresets)]
pub fn machine_presets() -> Result<JsValue, Failure> {
    let mut out = Vec::new();
    for name in topology::PRESETS {
        let spec = topology::preset(name)?;
        let topo = Topology::from_spec(&spec)?;
        out.push(MachineInfo {
            name: name.to_string(),
            summary: topo.summary(),
            description: spec.description,
        });
    }
    to_js(&out)
}

#[derive(Serialize)]
struct PresetInfo {
    name: &'static str,
    description: String,
    source: String,
    experiment: Experiment,
}

/// The shipped experiments: `[{name, description, source, experiment}]`.
#[wasm_bindgen]
pub fn presets() -> Result<JsValue, Failure> {
    let list: Result<Vec<PresetInfo>, Failure> = presets::names()
        .map(|name| {
            let e = presets::get(name)?;
            Ok(PresetInfo {
                name,
                description: e.description.clone(),
                source: e.source.clone(),
                experiment: e,
            })
        })
        .collect();
    to_js(&list?)
}

#[derive(Serialize)]
struct RunAnswer {
    /// What `schedlab run --format json` prints.
    results: schedlab::experiment::Results,
    /// The commit-style table.
    table: String,
    /// The largest difference between the variants, in words.
    explanation: String,
}

/// Runs an experiment (object, preset name or link) to the end:
/// `{results, table, explanation}`.
#[wasm_bindgen(js_name = runExperiment)]
pub fn run_experiment(experiment: JsValue) -> Result<JsValue, Failure> {
    let exp = experiment_of(experiment)?;
    let results = run_all(&exp, &mut |_, _| true)?;
    let param = exp.sweep.as_ref().map(|s| s.param.as_str());
    to_js(&RunAnswer {
        table: report::table(&results, param, exp.sum_row),
        explanation: explain::explain(&results),
        results,
    })
}

/// The link fragment (without `#`) of an experiment object or preset name.
#[wasm_bindgen(js_name = encodeLink)]
pub fn encode_link(experiment: JsValue) -> Result<String, Failure> {
    Ok(codec::fragment(&experiment_of(experiment)?, false))
}

/// The experiment object a link fragment (or whole URL) opens.
#[wasm_bindgen(js_name = decodeLink)]
pub fn decode_link(link: &str) -> Result<JsValue, Failure> {
    let fragment = link.rsplit_once('#').map_or(link, |(_, f)| f);
    to_js(&codec::parse_fragment(fragment)?.experiment)
}

#[wasm_bindgen]
extern "C" {
    /// performance.now(): in a page and in a Web Worker alike.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// The engine's speed here, on the cases `schedlab bench` runs (or the
/// case or preset names given): `[{case, events, wall_ms, sim_ms}]`
/// (`sim_ms`: simulated time measured). The events match the CLI's; the
/// time is this browser's.
#[wasm_bindgen]
pub fn bench(cases: Option<Vec<String>>) -> Result<JsValue, Failure> {
    let cases = cases.unwrap_or_else(|| {
        schedlab::bench::CASES
            .iter()
            .map(|c| c.name.to_string())
            .collect()
    });
    let mut clock = performance_now;
    let lines = cases
        .iter()
        .map(|c| schedlab::bench::run_case(c, &mut clock))
        .collect::<Result<Vec<_>, _>>()?;
    to_js(&lines)
}
