//! The results of a run: the explanation, the charts (SVG and PNG export),
//! the commit-style table, the per-CPU timeline (Perfetto export), the tools'
//! own output, the counters, and the exact results JSON.

use crate::charts::{self, Chart};
use crate::export::{copy_to_clipboard, download, download_png};
use crate::run::RunResults;
use crate::timeline::Timeline;
use std::rc::Rc;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub results: Rc<RunResults>,
    /// File names start with this (the experiment's name).
    pub name: String,
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
            <p class="explanation" id="explanation">{ r.explanation.clone() }</p>
            <div class="results-main">
                <div class="charts">
                    { for r.charts.iter().map(|c| chart_figure(c, &props.name)) }
                    if let Some(svg) = crate::latency_cdf::svg(&r.results) {
                        <figure class="chart" id="chart-latency-cdf">
                            { Html::from_html_unchecked(AttrValue::from(svg)) }
                            <figcaption>{ "Wakeup latency CDF per variant (first sweep value)" }</figcaption>
                        </figure>
                    }
                </div>
                <pre id="results-table">{ r.table.clone() }</pre>
            </div>
            <details open=true>
                <summary>{ "Per-CPU timeline of a short window" }</summary>
                <Timeline traces={r.traces.clone()} />
                <div class="actions">
                    <button class="secondary" id="download-trace" onclick={trace_json}>{ "Download trace (Perfetto)" }</button>
                </div>
            </details>
            <details>
                <summary>{ "Tool output" }</summary>
                <pre id="results-text">{ r.text.clone() }</pre>
            </details>
            <details>
                <summary>{ format!("Counters ({})", counters.len()) }</summary>
                <div class="table-scroll">
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
                <pre id="results-json">{ r.json.clone() }</pre>
            </details>
        </section>
    }
}

/// A chart with its SVG and PNG downloads.
pub fn chart_figure(c: &Chart, name: &str) -> Html {
    let svg_file = format!("{name}-{}.svg", c.id);
    let png_file = format!("{name}-{}.png", c.id);
    let (svg, svg2) = (c.svg.clone(), c.svg.clone());
    let save_svg = Callback::from(move |_| {
        let _ = download(&svg_file, "image/svg+xml", &svg);
    });
    let save_png = Callback::from(move |_| {
        let _ = download_png(&png_file, &svg2, charts::WIDTH, charts::HEIGHT);
    });
    html! {
        <figure class="chart" id={format!("chart-{}", c.id)}>
            { Html::from_html_unchecked(AttrValue::from(c.svg.clone())) }
            <figcaption class="actions">
                <button class="secondary small" data-export="svg" onclick={save_svg}>{ "SVG" }</button>
                <button class="secondary small" data-export="png" onclick={save_png}>{ "PNG" }</button>
            </figcaption>
        </figure>
    }
}
