//! The Web Worker: answers [`Request`]s by running the core.

use crate::protocol::{Request, Response};
use gloo_worker::{HandlerId, Worker, WorkerScope};
use schedlab::domains::Domains;
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
        scope.respond(id, handle(msg));
    }
}

/// The worker's work, kept free of web types so it is tested natively.
pub fn handle(req: Request) -> Response {
    match req {
        Request::Describe { machine, era } => {
            describe(&machine, &era).unwrap_or_else(|e| Response::Failed {
                error: e.to_string(),
            })
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_answers_from_the_core_and_reports_errors() {
        let ok = handle(Request::Describe {
            machine: "ivb-ep-2s".into(),
            era: "4.15".into(),
        });
        assert_eq!(
            ok,
            Response::Described {
                summary:
                    "ivb-ep-2s: 40 CPUs, 2 nodes, 2 packages, 2 LLCs, 20 cores, 2 threads/core"
                        .into(),
                levels: vec!["SMT".into(), "MC".into(), "NUMA".into()],
            }
        );
        let bad = handle(Request::Describe {
            machine: "nope".into(),
            era: "4.15".into(),
        });
        assert!(
            matches!(bad, Response::Failed { error } if error.contains("unknown machine preset"))
        );
    }
}
