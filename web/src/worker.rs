//! The Web Worker: answers [`Request`]s by running the core.

use crate::protocol::{Request, Response};
use gloo_worker::{HandlerId, Worker, WorkerScope};
use schedlab::domains::Domains;
use schedlab::experiment::{self, Experiment};
use schedlab::policy::PolicySpec;
use schedlab::topology::{self, Topology};

pub struct CoreWorker;

impl Worker for CoreWorker {
    type Message = ();
    type Input = Request;
    type Output = Response;

    fn create(_scope: &WorkerScope<Self>) -> Self {
        CoreWorker
    }

    fn update(&mut self, _scope: &WorkerScope<Self>, _msg: Self::Message) {}

    fn received(&mut self, scope: &WorkerScope<Self>, msg: Self::Input, id: HandlerId) {
        let resp = handle(msg, &mut |p| scope.respond(id, p));
        scope.respond(id, resp);
    }
}

/// The worker's work, kept free of web types so it is tested natively.
/// `progress` receives progress messages while a point runs.
pub fn handle(req: Request, progress: &mut dyn FnMut(Response)) -> Response {
    let result = match req {
        Request::Describe { machine, era } => describe(&machine, &era),
        Request::RunPoint { experiment, index } => run_point(&experiment, index, progress),
    };
    result.unwrap_or_else(|e| Response::Failed {
        error: e.to_string(),
    })
}

fn describe(machine: &str, era: &str) -> schedlab::Result<Response> {
    let topo = Topology::from_spec(&topology::preset(machine)?)?;
    let policy = PolicySpec::era(era.parse()?).resolve(topo.ncpus())?;
    let domains = Domains::build(&topo, &policy)?;
    Ok(Response::Described {
        summary: topo.summary(),
        levels: domains
            .level_names()
            .into_iter()
            .map(String::from)
            .collect(),
    })
}

fn run_point(
    json: &str,
    index: usize,
    progress: &mut dyn FnMut(Response),
) -> schedlab::Result<Response> {
    let exp = Experiment::from_json(json)?;
    let points = exp.points()?;
    let point = points
        .get(index)
        .ok_or_else(|| schedlab::Error::invalid(format!("the experiment has no point {index}")))?;
    let outcome = experiment::run_point(point, &mut |p| {
        progress(Response::Progress {
            index,
            now_ns: p.now_ns,
            end_ns: p.end_ns,
        });
        true
    })?;
    Ok(Response::Point { index, outcome })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_answers_from_the_core_and_reports_errors() {
        let ok = handle(
            Request::Describe {
                machine: "ivb-ep-2s".into(),
                era: "4.15".into(),
            },
            &mut |_| {},
        );
        assert_eq!(
            ok,
            Response::Described {
                summary:
                    "ivb-ep-2s: 40 CPUs, 2 nodes, 2 packages, 2 LLCs, 20 cores, 2 threads/core"
                        .into(),
                levels: vec!["SMT".into(), "MC".into(), "NUMA".into()],
            }
        );
        let bad = handle(
            Request::Describe {
                machine: "nope".into(),
                era: "4.15".into(),
            },
            &mut |_| {},
        );
        assert!(
            matches!(bad, Response::Failed { error } if error.contains("unknown machine preset"))
        );
    }

    #[test]
    fn a_point_run_in_the_worker_equals_the_core_run() {
        let exp = schedlab::presets::get("kvm-pipe-test-pinning").unwrap();
        let json = serde_json::to_string(&exp).unwrap();
        let mut progress = 0;
        let resp = handle(
            Request::RunPoint {
                experiment: json.clone(),
                index: 1,
            },
            &mut |_| progress += 1,
        );
        let expected = experiment::run_point(&exp.points().unwrap()[1], &mut |_| true).unwrap();
        assert_eq!(
            resp,
            Response::Point {
                index: 1,
                outcome: expected
            }
        );
        assert!(progress > 0);
        let missing = handle(
            Request::RunPoint {
                experiment: json,
                index: 9,
            },
            &mut |_| {},
        );
        assert!(matches!(missing, Response::Failed { error } if error.contains("no point 9")));
    }
}
