//! Before Run, about how long the run will take. A second worker runs the
//! start of a few of the experiment's points (half a second after the last
//! edit, for about a third of a second) and reports each point's expected
//! events; the rate is the events per second a worker of this browser
//! reached on its last finished run (kept in localStorage), else the
//! probe's own. [`schedlab::estimate`] does the arithmetic.

use crate::pool::Pool;
use crate::protocol::{Request, Response};
use crate::state::Editor;
use gloo_timers::callback::Timeout;
use schedlab::estimate;
use serde::de::IgnoredAny;
use std::cell::RefCell;
use std::rc::Rc;
use yew::prelude::*;

const RATE_KEY: &str = "schedlab-events-per-sec";
const QUIET_MS: u32 = 500;
const PROBE_MS: f64 = 300.0;

/// The events per second one worker reached on this browser's last run.
pub fn saved_rate() -> Option<f64> {
    crate::link::storage()
        .and_then(|s| s.get_item(RATE_KEY).ok().flatten())
        .and_then(|t| t.parse::<f64>().ok())
        .filter(|r| r.is_finite() && *r > 0.0)
}

/// Keeps a finished run's rate: its events over its wall time and workers.
pub fn save_rate(events: u64, wall_secs: f64, workers: usize) {
    if wall_secs <= 0.0 || events == 0 {
        return;
    }
    let rate = events as f64 / wall_secs / workers.max(1) as f64;
    if let Some(s) = crate::link::storage() {
        let _ = s.set_item(RATE_KEY, &format!("{rate:.0}"));
    }
}

/// "about 8 s on 2 workers", once measured; None while measuring, while a
/// run goes, or for an experiment that cannot run.
#[hook]
pub fn use_estimate(editor: &Editor, running: bool, workers: usize) -> Option<String> {
    let words = use_state(|| None::<String>);
    let json = (editor.is_valid() && !running)
        .then(|| serde_json::to_string(&editor.experiment).expect("an experiment serialises"));
    {
        let words = words.clone();
        use_effect_with(json, move |json| {
            words.set(None);
            let slot: Rc<RefCell<Option<Pool>>> = Rc::new(RefCell::new(None));
            let timer = json.clone().map(|json| {
                let slot = slot.clone();
                Timeout::new(QUIET_MS, move || {
                    let reply = {
                        let slot = slot.clone();
                        Rc::new(move |_, resp: Response<IgnoredAny>| {
                            if let Response::Probed {
                                events,
                                events_per_sec,
                            } = resp
                            {
                                words.set(Some(say(&events, events_per_sec, workers)));
                            }
                            // Its worker goes once this message is handled.
                            let slot = slot.clone();
                            Timeout::new(0, move || drop(slot.borrow_mut().take())).forget();
                        }) as Rc<dyn Fn(usize, Response<IgnoredAny>)>
                    };
                    if let Ok(pool) = Pool::start(1, reply) {
                        let probe = Request::Probe {
                            experiment: json,
                            budget_ms: PROBE_MS,
                        };
                        pool.send(0, &probe);
                        *slot.borrow_mut() = Some(pool);
                    }
                })
            });
            // The next edit (or a run) cancels the wait and the probe.
            move || {
                drop(timer);
                drop(slot.borrow_mut().take());
            }
        });
    }
    (*words).clone()
}

/// The estimate in words, from the probe's events per point.
fn say(events: &[(f64, bool)], probe_rate: f64, workers: usize) -> String {
    let rate = saved_rate().unwrap_or(probe_rate);
    let workers = workers.min(events.len()).max(1);
    let secs: Vec<(f64, bool)> = events
        .iter()
        .map(|&(events, at_least)| estimate::Events { events, at_least }.at(rate))
        .collect();
    format!(
        "{} on {workers} worker{}",
        estimate::estimate(&secs, workers).words(),
        if workers == 1 { "" } else { "s" }
    )
}
