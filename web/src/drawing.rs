//! The machine as nested boxes, in the style of hwloc's lstopo: NUMA nodes,
//! packages, LLCs, cores, and SMT threads with their CPU numbers. Hovering
//! (or focusing) a CPU outlines its sched-domain span at every level.

use schedlab::domains::Domains;
use schedlab::sorted_map::SortedMap;
use schedlab::topology::Topology;
use std::rc::Rc;
use yew::prelude::*;

/// CPUs grouped node -> package -> LLC -> core -> threads.
type Tree = SortedMap<usize, SortedMap<usize, SortedMap<usize, SortedMap<usize, Vec<usize>>>>>;

pub fn tree(topo: &Topology) -> Tree {
    let mut t = Tree::new();
    for (cpu, c) in topo.cpus.iter().enumerate() {
        t.entry_or_default(c.node)
            .entry_or_default(c.package)
            .entry_or_default(c.llc)
            .entry_or_default(c.core)
            .push(cpu);
    }
    t
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub topology: Rc<Topology>,
    /// The first variant's domains, for the hover spans.
    pub domains: Option<Rc<Domains>>,
}

#[function_component]
pub fn MachineDrawing(props: &Props) -> Html {
    let hovered = use_state(|| None::<usize>);
    let topo = &props.topology;
    // Per CPU: the lowest level index whose span (of the hovered CPU) holds it.
    let spans: Vec<(&'static str, schedlab::cpuset::CpuSet)> = match (&props.domains, *hovered) {
        (Some(d), Some(cpu)) if cpu < topo.ncpus() => {
            d.of(cpu).map(|dom| (dom.level, dom.span)).collect()
        }
        _ => Vec::new(),
    };
    let level_of = |cpu: usize| spans.iter().position(|(_, s)| s.contains(cpu));
    let cpu_box = |cpu: usize| {
        let (h1, h2, h3, h4) = (
            hovered.clone(),
            hovered.clone(),
            hovered.clone(),
            hovered.clone(),
        );
        let enter = Callback::from(move |_: MouseEvent| h1.set(Some(cpu)));
        let leave = Callback::from(move |_: MouseEvent| h2.set(None));
        let focus = Callback::from(move |_: FocusEvent| h3.set(Some(cpu)));
        let blur = Callback::from(move |_: FocusEvent| h4.set(None));
        let level = level_of(cpu);
        html! {
            <span class={classes!("cpu", (*hovered == Some(cpu)).then_some("hovered"))}
                data-cpu={cpu.to_string()} data-level={level.map(|l| l.to_string())}
                tabindex="0" onmouseenter={enter} onfocus={focus} onmouseleave={leave} onblur={blur}>
                { cpu }
            </span>
        }
    };
    let t = tree(topo);
    let single = |n: usize| n == 1;
    let nodes = t.iter().map(|(node, packages)| {
        let packages = packages.iter().map(|(pkg, llcs)| {
            let llcs = llcs.iter().map(|(llc, cores)| {
                let cores = cores.iter().map(|(core, threads)| html! {
                    <div class="core" title={format!("core {core}")}>{ for threads.iter().map(|&c| cpu_box(c)) }</div>
                });
                html! { <div class="box llc"><span class="box-label">{ format!("LLC {llc}") }</span><div class="row">{ for cores }</div></div> }
            });
            html! { <div class="box package"><span class="box-label">{ format!("Package {pkg}") }</span><div class="row">{ for llcs }</div></div> }
        });
        html! { <div class="box node"><span class="box-label">{ format!("NUMA node {node}") }</span><div class="row">{ for packages }</div></div> }
    });
    let legend = if spans.is_empty() {
        html! { <p class="hint">{ "Hover a CPU to see its sched domains." }</p> }
    } else {
        html! {
            <ul class="spans" id="domain-spans">
                { for spans.iter().enumerate().map(|(i, (level, span))| html! {
                    <li data-level={i.to_string()}><b>{ *level }</b>{ format!(" CPUs {} ({})", span.to_list_string(), span.len()) }</li>
                }) }
            </ul>
        }
    };
    html! {
        <div class="drawing" id="machine-drawing" data-nodes={t.len().to_string()}>
            <div class={classes!("nodes", single(t.len()).then_some("one"))}>{ for nodes }</div>
            { legend }
        </div>
    }
}
