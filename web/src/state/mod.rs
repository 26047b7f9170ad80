//! The experiment being edited: one [`Editor`] state changed only through
//! [`Edit`] actions (yew's `Reducible`), so every panel edits the same
//! `schedlab::experiment::Experiment` the CLI runs and the codec encodes.
//!
//! An edit whose text does not parse leaves the experiment alone and keeps
//! the text and the error at its field; an edit that parses is applied and
//! the whole experiment is checked by the core, whose error is shown at the
//! field that caused it. Run is allowed only when neither kind is present.
//!
//! - `edit.rs`: the edits, grouped as the panels are (machine, policy per
//!   variant, workload), and the field each one's error belongs to;
//! - `field.rs`: the fields, typed; the panels render the same ids;
//! - `machine.rs`, `policy.rs`, `workload.rs`: what each edit does;
//! - `parse.rs`: typed text as values.

mod edit;
mod field;
mod machine;
mod parse;
mod policy;
#[cfg(test)]
mod tests;
mod workload;

pub use edit::{Edit, MachineEdit, PolicyEdit, VariantEdit, WorkloadEdit};
pub use field::{FieldId, ShapeField, VariantField};
pub use parse::is_number_list;
use schedlab::domains::Domains;
use schedlab::error::Concern;
use schedlab::experiment::{Experiment, MachineRef};
use schedlab::knobs::PolicyKnobs;
use schedlab::policy::PolicySpec;
use schedlab::sorted_map::SortedMap;
use schedlab::topology::Topology;
use schedlab::{presets, Error};
use std::rc::Rc;
pub use workload::program_text;
pub use workload::starting_value;
use yew::Reducible;

#[derive(Debug, Clone, PartialEq)]
pub struct Editor {
    pub experiment: Experiment,
    /// Fields whose text does not parse: field -> (text, error).
    pub field_errors: SortedMap<FieldId, (String, String)>,
    /// The core's error for the whole experiment, and the field it is shown at.
    pub invalid: Option<(FieldId, String)>,
    /// Something an edit did that the user should know (changes dropped).
    pub notice: Option<String>,
    /// What the panels draw from the machine and the policies, rebuilt only
    /// when those change: a keystroke in the seed field must not rebuild a
    /// 1,024-CPU machine's domains.
    derived: Derived,
}

/// The topology, each variant's knobs and the first variant's domains, with
/// the machine and policies they were computed from.
#[derive(Debug, Clone)]
struct Derived(Rc<DerivedData>);

#[derive(Debug)]
struct DerivedData {
    machine: MachineRef,
    policies: Vec<PolicySpec>,
    topology: Result<Topology, Error>,
    knobs: Vec<Result<PolicyKnobs, Error>>,
    domains: Option<Rc<Domains>>,
}

/// A function of the experiment, which `Editor` already compares.
impl PartialEq for Derived {
    fn eq(&self, _: &Derived) -> bool {
        true
    }
}

impl Derived {
    fn of(exp: &Experiment) -> Derived {
        let policies: Vec<PolicySpec> =
            (0..exp.variants.len()).map(|i| policy_of(exp, i)).collect();
        let topology = topology(exp);
        let knobs = policies
            .iter()
            .map(|p| PolicyKnobs::of(topology.as_ref().map_err(Clone::clone)?, p))
            .collect();
        let domains = topology.as_ref().ok().and_then(|t| {
            let p = policies.first()?.resolve(t.ncpus()).ok()?;
            Domains::build(t, &p).ok().map(Rc::new)
        });
        Derived(Rc::new(DerivedData {
            machine: exp.machine.clone(),
            policies,
            topology,
            knobs,
            domains,
        }))
    }

    /// Itself if `exp` has the same machine and policies, else rebuilt.
    fn refreshed(&self, exp: &Experiment) -> Derived {
        let same = self.0.machine == exp.machine
            && self.0.policies.len() == exp.variants.len()
            && (0..exp.variants.len()).all(|i| self.0.policies[i] == policy_of(exp, i));
        if same {
            self.clone()
        } else {
            Derived::of(exp)
        }
    }
}

/// What an edit did: something to tell the user, or why it was refused.
type Applied = Result<Option<String>, Error>;

impl Editor {
    pub fn new(experiment: Experiment) -> Editor {
        let mut e = Editor {
            derived: Derived::of(&experiment),
            experiment,
            field_errors: SortedMap::new(),
            invalid: None,
            notice: None,
        };
        e.revalidate(&FieldId::Whole);
        e
    }

    pub fn preset(name: &str) -> Editor {
        Editor::new(presets::get(name).unwrap_or_else(|_| default_experiment()))
    }

    pub fn is_valid(&self) -> bool {
        self.field_errors.is_empty() && self.invalid.is_none()
    }

    /// The error to show at `field`, if any.
    pub fn error_at(&self, field: &FieldId) -> Option<&str> {
        if let Some((_, e)) = self.field_errors.get(field) {
            return Some(e);
        }
        match &self.invalid {
            Some((f, e)) if f == field => Some(e),
            _ => None,
        }
    }

    /// What `field` shows: the unparsed text if it has one, else `value`.
    pub fn text_of(&self, field: &FieldId, value: impl ToString) -> String {
        match self.field_errors.get(field) {
            Some((text, _)) => text.clone(),
            None => value.to_string(),
        }
    }

    /// The name of the preset this experiment equals, if it is unedited.
    pub fn unedited_preset(&self) -> Option<&'static str> {
        presets::unedited(&self.experiment)
    }

    pub fn topology(&self) -> Result<&Topology, Error> {
        self.derived.0.topology.as_ref().map_err(Clone::clone)
    }

    /// The first variant's sched domains on this machine (for the drawing).
    pub fn domains(&self) -> Option<Rc<Domains>> {
        self.derived.0.domains.clone()
    }

    /// Variant `i`'s whole policy.
    pub fn policy_of(&self, i: usize) -> PolicySpec {
        policy_of(&self.experiment, i)
    }

    pub fn knobs_of(&self, i: usize) -> Result<&PolicyKnobs, Error> {
        match self.derived.0.knobs.get(i) {
            Some(k) => k.as_ref().map_err(Clone::clone),
            None => Err(Error::invalid(
                Concern::Experiment,
                format!("there is no variant {i}"),
            )),
        }
    }

    fn revalidate(&mut self, field: &FieldId) {
        self.invalid = match self.experiment.validate() {
            Ok(()) => None,
            Err(e) => {
                let msg = e.to_string();
                // An error that was already there stays at its field.
                match self.invalid.take() {
                    Some((f, old)) if old == msg => Some((f, msg)),
                    _ => Some((field.clone(), msg)),
                }
            }
        };
    }
}

impl Reducible for Editor {
    type Action = Edit;

    fn reduce(self: Rc<Self>, action: Edit) -> Rc<Self> {
        let mut next = (*self).clone();
        let field = action.field();
        let text = action.text().map(str::to_string);
        match apply(&mut next.experiment, action) {
            Ok(notice) => {
                next.notice = notice;
                if field.is_whole() {
                    // A new experiment: the old one's unparsed texts are moot.
                    next.field_errors.clear();
                }
                next.field_errors.remove(&field);
                next.derived = self.derived.refreshed(&next.experiment);
                next.revalidate(&field);
            }
            Err(e) => {
                // A refused edit changes nothing but its field's error.
                next = (*self).clone();
                next.notice = None;
                next.field_errors
                    .insert(field, (text.unwrap_or_default(), e.to_string()));
            }
        }
        Rc::new(next)
    }
}

fn apply(exp: &mut Experiment, action: Edit) -> Applied {
    match action {
        Edit::LoadPreset(name) => {
            *exp = presets::get(&name)?;
            Ok(None)
        }
        Edit::Load(e) => {
            *exp = *e;
            Ok(None)
        }
        Edit::OpenFile(text) => {
            *exp = Experiment::from_json(&text)?;
            Ok(None)
        }
        Edit::Machine(edit) => machine::apply(exp, edit),
        Edit::Policy(edit) => policy::apply(exp, edit),
        Edit::Workload(edit) => workload::apply(exp, edit),
    }
}

pub(super) fn topology(exp: &Experiment) -> Result<Topology, Error> {
    Topology::from_spec(&exp.machine.spec()?)
}

fn policy_of(exp: &Experiment, i: usize) -> PolicySpec {
    exp.policy.with(&exp.variants[i].policy)
}

fn knobs_of(exp: &Experiment, i: usize) -> Result<PolicyKnobs, Error> {
    PolicyKnobs::of(&topology(exp)?, &policy_of(exp, i))
}

/// The experiment a bad link or empty storage falls back to.
pub fn default_experiment() -> Experiment {
    presets::get(presets::DEFAULT).expect("the default preset loads")
}
