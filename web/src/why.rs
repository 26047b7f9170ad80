//! Why, in the page: the decision tree of a wakeup or migration clicked in
//! the timeline, and where two variants part. A worker of its own answers
//! each question by running the experiment again with decision records
//! kept: runs are deterministic, so the replay makes the same decisions
//! the results came from.

use crate::pool::Pool;
use crate::protocol::{Request, Response};
use crate::timeline::{MarkClick, Timeline};
use schedlab::experiment::{Experiment, Trace};
use serde::de::IgnoredAny;
use std::cell::RefCell;
use std::rc::Rc;
use yew::prelude::*;

/// What the Why panel shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Answer {
    #[default]
    Nothing,
    /// A question is being answered: what was asked, in words.
    Asking(String),
    /// A decision tree, as `schedlab why` prints it.
    Tree(String),
    /// `schedlab diverge`'s report and both variants' timelines from a
    /// little before the parting.
    Diverged {
        text: String,
        at_ns: Option<u64>,
        origin_ns: u64,
        traces: Vec<(String, Trace)>,
    },
    Failed(String),
}

/// Asks questions of a worker started on the first one, and holds the answer.
#[derive(Clone)]
pub struct Why {
    pub answer: UseStateHandle<Answer>,
    pool: Rc<RefCell<Option<Pool>>>,
}

#[hook]
pub fn use_why() -> Why {
    Why {
        answer: use_state(Answer::default),
        pool: use_mut_ref(|| None::<Pool>),
    }
}

impl Why {
    fn ask(&self, request: Request, what: String) {
        self.answer.set(Answer::Asking(what));
        let answer = self.answer.clone();
        let mut pool = self.pool.borrow_mut();
        if pool.is_none() {
            let on_response = Rc::new(move |_, resp: Response<IgnoredAny>| match resp {
                Response::Why { text } => answer.set(Answer::Tree(text)),
                Response::Diverged {
                    text,
                    at_ns,
                    origin_ns,
                    traces,
                } => answer.set(match serde_json::from_str(&traces) {
                    Ok(traces) => Answer::Diverged {
                        text,
                        at_ns,
                        origin_ns,
                        traces,
                    },
                    Err(e) => Answer::Failed(format!("unreadable timelines from the worker: {e}")),
                }),
                Response::Failed { error } => answer.set(Answer::Failed(error)),
                _ => {}
            });
            match Pool::start(1, on_response) {
                Ok(p) => *pool = Some(p),
                Err(e) => {
                    self.answer.set(Answer::Failed(e));
                    return;
                }
            }
        }
        if let Some(p) = pool.as_ref() {
            p.send(0, &request);
        }
    }

    /// The decision behind a mark clicked in a timeline.
    pub fn mark(&self, exp: &Experiment, click: MarkClick) {
        let Some(variant) = exp.variants.iter().position(|v| v.label == click.label) else {
            self.answer.set(Answer::Failed(format!(
                "no variant {} in the experiment",
                click.label
            )));
            return;
        };
        let what = format!(
            "replaying {} to the {} of task #{} at {:.6} ms",
            click.label,
            click.kind,
            click.task,
            click.t_ns as f64 / 1e6
        );
        self.ask(
            Request::Why {
                experiment: serde_json::to_string(exp).expect("an experiment serialises"),
                variant,
                task: click.task,
                t_ns: click.t_ns,
            },
            what,
        );
    }

    /// Where the first two variants part.
    pub fn diverge(&self, exp: &Experiment) {
        self.ask(
            Request::Diverge {
                experiment: serde_json::to_string(exp).expect("an experiment serialises"),
            },
            "running A and B side by side to where they part".into(),
        );
    }
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub answer: Answer,
    /// For marks clicked in the divergence's own timeline.
    pub on_mark: Callback<MarkClick>,
}

/// The answer, below the timeline.
#[function_component]
pub fn WhyPanel(props: &Props) -> Html {
    let body = match &props.answer {
        Answer::Nothing => return html! {},
        Answer::Asking(what) => {
            html! { <p class="hint" id="why-asking">{ format!("Asking: {what}…") }</p> }
        }
        Answer::Tree(text) => html! { <pre id="why-tree" tabindex="0">{ text.clone() }</pre> },
        Answer::Diverged {
            text,
            at_ns,
            origin_ns,
            traces,
        } => html! {
            <>
                <pre id="divergence" tabindex="0">{ text.clone() }</pre>
                if !traces.is_empty() {
                    <Timeline traces={traces.clone()} on_mark={props.on_mark.clone()} at_ns={*at_ns} origin_ns={*origin_ns} id="divergence-timeline" />
                }
            </>
        },
        Answer::Failed(error) => html! { <p class="error" id="why-error">{ error.clone() }</p> },
    };
    html! {
        <section class="why" id="why-panel" aria-live="polite">
            <h3>{ "Why" }</h3>
            { body }
        </section>
    }
}
