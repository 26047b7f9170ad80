//! `schedlab limits`: the limits every experiment is checked against.

use crate::failure::Failure;
use schedlab::limits;

pub fn command() -> Result<String, Failure> {
    Ok(limits::ALL
        .iter()
        .map(|l| format!("{:<28} {}..={}\n", l.name, l.min, l.max))
        .collect())
}
