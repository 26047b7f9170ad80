//! The gallery: every shipped experiment one click away, with what it shows
//! and what it replays, from the preset's own description and source.

use crate::state::Edit;
use schedlab::presets;
use yew::prelude::*;

/// "sched: re-tune balancing (Linux 2.6.28-rc3, 2008); shared/..." -> the commit part.
pub fn replays(source: &str) -> String {
    let first = source.split(';').next().unwrap_or("").trim();
    if first.is_empty() {
        "a what-if on today's kernel".to_string()
    } else {
        first.to_string()
    }
}

/// The first sentence of a description: what the experiment shows.
pub fn first_sentence(text: &str) -> &str {
    match text.find(". ") {
        Some(i) => &text[..=i],
        None => text,
    }
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub on_pick: Callback<Edit>,
    /// The preset now open, unedited.
    pub current: Option<&'static str>,
    /// Open at first: when the page came without an experiment in its link.
    pub open: bool,
}

#[function_component]
pub fn Gallery(props: &Props) -> Html {
    // Read once: loading a preset checks (builds) its workload, which the
    // editor must not redo for every card on every keystroke.
    let texts = use_memo((), |_| {
        presets::names()
            .filter_map(|name| {
                let exp = presets::get(name).ok()?;
                Some((name, replays(&exp.source), exp.description))
            })
            .collect::<Vec<_>>()
    });
    let cards = texts.iter().map(|(name, replays, description)| {
        let name = *name;
        let pick = props.on_pick.reform(move |_| Edit::LoadPreset(name.to_string()));
        let current = props.current == Some(name);
        html! {
            <li>
                <button class={classes!("card", current.then_some("current"))} data-preset={name} onclick={pick}
                    aria-pressed={current.to_string()} title={description.clone()}>
                    <span class="card-title">{ name }</span>
                    <span class="card-replays">{ replays.clone() }</span>
                    <span class="card-text">{ first_sentence(description).to_string() }</span>
                </button>
            </li>
        }
    });
    html! {
        <details class="gallery" id="gallery" open={props.open}>
            <summary>{ format!("Gallery: {} experiments", presets::ALL.len()) }</summary>
            <ul class="cards">{ for cards }</ul>
        </details>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_says_what_it_replays() {
        for name in presets::names() {
            let r = replays(&presets::get(name).unwrap().source);
            assert!(!r.is_empty() && !r.contains("shared/"), "{name}: {r}");
        }
        assert_eq!(
            replays("sched: re-tune balancing (Linux 2.6.28-rc3, 2008)"),
            "sched: re-tune balancing (Linux 2.6.28-rc3, 2008)"
        );
    }
}
