//! The results of a run: the explanation, the charts (SVG and PNG export),
//! the commit-style table, the per-CPU timeline (Perfetto export; a mark
//! clicked shows the decision behind it, and "Where A and B part" the
//! first divergence), the tools' own output, the counters, and the exact
//! results JSON.

use crate::charts::{self, Chart, XScale};
use crate::export::{copy_to_clipboard, download, download_png};
use crate::run::RunResults;
use crate::timeline::Timeline;
use crate::why::{use_why, WhyPanel};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub results: Rc<RunResults>,
    /// File names start with this (the experiment's name).
    pub name: String,
    /// Earlier results drawn under these: (what to call them, results).
    #[prop_or_default]
    pub baseline: Option<Rc<(String, schedlab::experiment::Results)>>,
}

#[function_component]
pub fn ResultsView(props: &Props) -> Html {
    let r = &props.results;
    let copied = use_state(|| false);
    let copy = {
        let (json, copied) = (r.json.clone(), copied.clone());
        Callback::from(move |_| {
            copy_to_clipboard(&json);
            copied.set(true);
        })
    };
    let save = |ext: &'static str, mime: &'static str, text: String| {
        let file = format!("{}.{ext}", props.name);
        Callback::from(move |_| {
            let _ = download(&file, mime, &text);
        })
    };
    let variants = &r.results.variants;
    let counters: Vec<&String> = {
        let mut names: Vec<&String> = r.results.counters.values().flat_map(|m| m.keys()).collect();
        names.sort_unstable();
        names.dedup();
        names
    };
    let why = use_why();
    let on_mark = {
        let (why, exp) = (why.clone(), r.experiment.clone());
        Callback::from(move |click| why.mark(&exp, click))
    };
    let diverge = {
        let (why, exp) = (why.clone(), r.experiment.clone());
        Callback::from(move |_| why.diverge(&exp))
    };
    let trace_json = {
        let (traces, file) = (r.traces.clone(), format!("{}-trace.json", props.name));
        Callback::from(move |_| {
            let runs: Vec<(&str, &schedlab::experiment::Trace)> =
                traces.iter().map(|(l, t)| (l.as_str(), t)).collect();
            let doc = schedlab::trace_export::chrome_trace(&runs);
            let _ = download(&file, "application/json", &doc.to_string());
        })
    };
    html! {
        <section class="panel results" id="results" aria-labelledby="results-h">
            <h2 id="results-h">{ "Results" }</h2>
            if r.explanations.len() > 1 {
                <ul class="explanation" id="explanation">
                    { for r.explanations.iter().map(|e| html! { <li>{ e.clone() }</li> }) }
                </ul>
            } else {
                <p class="explanation" id="explanation">{ r.explanation.clone() }</p>
            }
            <div class="results-main">
                <Charts results={r.clone()} name={props.name.clone()} baseline={props.baseline.clone()} />
                <div class="tables">
                    <pre id="results-table" tabindex="0">{ r.table.clone() }</pre>
                    if let Some(b) = &props.baseline { { baseline_table(r, b) } }
                    if let Some(chart) = crate::latency_cdf::chart(&r.results) {
                        <ChartFigure {chart} name={props.name.clone()} />
                    }
                </div>
            </div>
            <details open=true>
                <summary>{ "Per-CPU timeline of a short window" }</summary>
                <Timeline traces={r.traces.clone()} on_mark={on_mark.clone()} />
                <div class="actions">
                    <button class="secondary" id="download-trace" onclick={trace_json}>{ "Download trace (Perfetto)" }</button>
                    if variants.len() >= 2 {
                        <button class="secondary" id="diverge" onclick={diverge}
                            title="Run A and B side by side to the first decision they make differently">{ "Where A and B part" }</button>
                    }
                </div>
                <WhyPanel answer={(*why.answer).clone()} {on_mark} />
            </details>
            <details>
                <summary>{ "Tool output" }</summary>
                <pre id="results-text" tabindex="0">{ r.text.clone() }</pre>
            </details>
            <details>
                <summary>{ format!("Counters ({})", counters.len()) }</summary>
                <div class="table-scroll" tabindex="0">
                    <table id="counters" class="counters">
                        <thead><tr><th>{ "counter" }</th>{ for variants.iter().map(|v| html! { <th>{ v }</th> }) }</tr></thead>
                        <tbody>
                            { for counters.iter().map(|c| html! {
                                <tr>
                                    <th scope="row"><code>{ (*c).clone() }</code></th>
                                    { for variants.iter().map(|v| html! {
                                        <td>{ r.results.counters.get(v).and_then(|m| m.get(*c)).copied().unwrap_or(0) }</td>
                                    }) }
                                </tr>
                            }) }
                        </tbody>
                    </table>
                </div>
            </details>
            <details>
                <summary>{ "Results JSON (as schedlab run --format json prints it)" }</summary>
                <div class="actions">
                    <button class="secondary" id="copy-json" onclick={copy}>{ if *copied { "Copied" } else { "Copy JSON" } }</button>
                    <button class="secondary" id="download-json" onclick={save("json", "application/json", r.json.clone())}>{ "Download JSON" }</button>
                    <button class="secondary" id="download-csv" onclick={save("csv", "text/csv", r.csv.clone())}>{ "Download CSV" }</button>
                </div>
                <pre id="results-json" tabindex="0">{ r.json.clone() }</pre>
            </details>
        </section>
    }
}

/// These results against the pinned run's, where they share variants and
/// sweep values: each value now and then, and the change.
fn baseline_table(r: &RunResults, b: &(String, schedlab::experiment::Results)) -> Html {
    let (now, then) = (&r.results, &b.1);
    let same_xs = now.rows.len() == then.rows.len()
        && now.rows.iter().zip(&then.rows).all(|(a, b)| a.x == b.x);
    let shared: Vec<&String> = now
        .variants
        .iter()
        .filter(|v| then.variants.contains(v))
        .collect();
    if !same_xs || shared.is_empty() || now.metric != then.metric {
        return html! {
            <p class="hint" id="baseline-table">{ format!("The baseline ({}) ran other variants or sweep values; it is not compared.", b.0) }</p>
        };
    }
    let param = r
        .experiment
        .sweep
        .as_ref()
        .map(|s| s.param.clone())
        .unwrap_or_default();
    html! {
        <div class="table-scroll">
            <table class="counters" id="baseline-table">
                <caption>{ format!("Against the baseline, {} ({})", b.0, now.metric.name) }</caption>
                <thead><tr>
                    <th scope="col">{ param }</th>
                    { for shared.iter().map(|v| html! { <th scope="col" colspan="3">{ (*v).clone() }</th> }) }
                </tr><tr>
                    <th></th>
                    { for shared.iter().map(|_| html! { <><th scope="col">{ "now" }</th><th scope="col">{ "then" }</th><th scope="col">{ "change" }</th></> }) }
                </tr></thead>
                <tbody>
                    { for now.rows.iter().zip(&then.rows).map(|(a, t)| html! {
                        <tr>
                            <th scope="row">{ a.x.as_ref().map(crate::fields::plain).unwrap_or_default() }</th>
                            { for shared.iter().map(|v| {
                                let (x, y) = (t.values[*v], a.values[*v]);
                                let (pct, verdict) = schedlab::report::change(x, y, now.metric.better);
                                html! { <>
                                    <td>{ schedlab::report::num(y) }</td>
                                    <td>{ schedlab::report::num(x) }</td>
                                    <td>{ format!("{pct} {verdict}").trim().to_string() }</td>
                                </> }
                            }) }
                        </tr>
                    }) }
                </tbody>
            </table>
        </div>
    }
}

#[derive(Properties, PartialEq)]
pub struct ChartsProps {
    pub results: Rc<RunResults>,
    pub name: String,
    #[prop_or_default]
    pub baseline: Option<Rc<(String, schedlab::experiment::Results)>>,
    /// Show at most this many charts (the embed shows two).
    #[prop_or(usize::MAX)]
    pub limit: usize,
}

/// The charts of a run, with a switch between a linear and a log-2 sweep
/// axis when the sweep values allow both.
#[function_component]
pub fn Charts(props: &ChartsProps) -> Html {
    let chosen = use_state(|| None::<XScale>);
    let r = &props.results;
    let xs = charts::numeric_xs(&r.results)
        .filter(|xs| r.results.rows.len() > 1 && charts::log_possible(xs));
    let scale = xs
        .as_ref()
        .map(|xs| chosen.unwrap_or_else(|| charts::auto_scale(xs)));
    // Drawn smaller on narrow screens, and redrawn when the window crosses over.
    let narrow_now = || {
        web_sys::window()
            .and_then(|w| w.inner_width().ok())
            .and_then(|w| w.as_f64())
            .is_some_and(|w| w < 600.0)
    };
    let narrow_state = use_state(narrow_now);
    {
        let narrow_state = narrow_state.clone();
        let last = use_mut_ref(|| *narrow_state);
        use_effect_with((), move |_| {
            let listener = web_sys::window().map(|w| {
                gloo_events::EventListener::new(&w, "resize", move |_| {
                    let n = narrow_now();
                    if n != *last.borrow() {
                        *last.borrow_mut() = n;
                        narrow_state.set(n);
                    }
                })
            });
            move || drop(listener)
        });
    }
    let narrow = *narrow_state;
    let drawn = use_memo(
        (r.clone(), *chosen, props.baseline.clone(), narrow),
        |(r, chosen, baseline, narrow)| {
            let opts = charts::Options {
                size: if *narrow { charts::NARROW } else { (0, 0) },
                x_scale: *chosen,
                baseline: baseline.as_ref().map(|b| charts::Baseline {
                    name: b.0.clone(),
                    results: &b.1,
                }),
            };
            charts::charts_for(&r.experiment, &r.results, &opts)
        },
    );
    let toggle = scale.map(|s| {
        let chosen = chosen.clone();
        let onchange = Callback::from(move |e: Event| {
            let i: web_sys::HtmlInputElement = e.target_unchecked_into();
            chosen.set(Some(if i.checked() {
                XScale::Log2
            } else {
                XScale::Linear
            }));
        });
        html! {
            <label class="check x-scale">
                <input type="checkbox" id="log-x" checked={s == XScale::Log2} {onchange} />
                { "log₂ sweep axis" }
            </label>
        }
    });
    html! {
        <div class="charts-block">
            { for toggle }
            <div class="charts">
                { for drawn.iter().take(props.limit).map(|c| html! { <ChartFigure chart={c.clone()} name={props.name.clone()} /> }) }
            </div>
        </div>
    }
}

#[derive(Properties, PartialEq)]
pub struct FigureProps {
    pub chart: Chart,
    pub name: String,
}

/// A chart, the exact value of the marker hovered or focused, and its
/// SVG and PNG downloads.
#[function_component]
pub fn ChartFigure(props: &FigureProps) -> Html {
    let readout = use_state(String::new);
    let show = {
        let readout = readout.clone();
        Callback::from(move |e: web_sys::Event| {
            let Some(el) = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            else {
                return;
            };
            if let Ok(Some(m)) = el.closest(".marker") {
                if let Some(t) = m.get_attribute("aria-label") {
                    readout.set(t);
                }
            }
        })
    };
    let c = &props.chart;
    let name = &props.name;
    let svg_file = format!("{name}-{}.svg", c.id);
    let png_file = format!("{name}-{}.png", c.id);
    let (svg, svg2, size) = (c.svg.clone(), c.svg.clone(), c.size);
    let save_svg = Callback::from(move |_| {
        let _ = download(&svg_file, "image/svg+xml", &svg);
    });
    let save_png = Callback::from(move |_| {
        let _ = download_png(&png_file, &svg2, size.0, size.1);
    });
    let (s1, s2) = (show.clone(), show);
    html! {
        <figure class="chart" id={format!("chart-{}", c.id)}
            onmouseover={move |e: MouseEvent| s1.emit(e.into())}
            onfocusin={move |e: FocusEvent| s2.emit(e.into())}>
            { Html::from_html_unchecked(AttrValue::from(c.svg.clone())) }
            <figcaption class="chart-foot">
                <span class="readout" aria-live="polite">{ if readout.is_empty() { "Hover or focus a point for its value".to_string() } else { (*readout).clone() } }</span>
                <span class="actions">
                    <button class="secondary small" data-export="svg" onclick={save_svg}
                        aria-label={format!("Download {} as SVG", c.title)}>{ "SVG" }</button>
                    <button class="secondary small" data-export="png" onclick={save_png}
                        aria-label={format!("Download {} as PNG", c.title)}>{ "PNG" }</button>
                </span>
            </figcaption>
        </figure>
    }
}
