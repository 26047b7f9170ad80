//! What a failed command says, and the exit code that tells the kinds of
//! failure apart: 2 for the command line, files and anything else the CLI
//! itself finds wrong; 3 to 9 for an error the core found in the machine,
//! the policy, the workload, the experiment, a link, an imported file or a
//! run (`schedlab::error::Concern`).

use schedlab::error::Concern;
use std::fmt;

#[derive(Debug)]
pub struct Failure {
    concern: Option<Concern>,
    msg: String,
}

impl Failure {
    /// The same failure, its message after `prefix: ` (a file's name).
    pub fn context(self, prefix: impl fmt::Display) -> Self {
        Failure {
            msg: format!("{prefix}: {}", self.msg),
            ..self
        }
    }

    /// The same failure, `more` after its message (a hint).
    pub fn hint(self, more: &str) -> Self {
        Failure {
            msg: format!("{} {more}", self.msg),
            ..self
        }
    }

    pub fn exit_code(&self) -> u8 {
        exit_code(self.concern)
    }
}

/// The exit code of a failure about `concern` (none: the CLI's own).
pub fn exit_code(concern: Option<Concern>) -> u8 {
    match concern {
        None => 2,
        Some(Concern::Machine) => 3,
        Some(Concern::Policy) => 4,
        Some(Concern::Workload) => 5,
        Some(Concern::Experiment) => 6,
        Some(Concern::Link) => 7,
        Some(Concern::Import) => 8,
        Some(Concern::Run) => 9,
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl From<String> for Failure {
    fn from(msg: String) -> Self {
        Failure { concern: None, msg }
    }
}

impl From<&str> for Failure {
    fn from(msg: &str) -> Self {
        Failure::from(msg.to_string())
    }
}

impl From<schedlab::Error> for Failure {
    fn from(e: schedlab::Error) -> Self {
        Failure {
            concern: Some(e.concern()),
            msg: e.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_concern_has_its_own_exit_code_and_none_is_2() {
        let mut codes: Vec<u8> = Concern::ALL.iter().map(|&c| exit_code(Some(c))).collect();
        codes.push(exit_code(None));
        assert_eq!(exit_code(None), 2);
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), Concern::ALL.len() + 1);
        assert!(
            codes.iter().all(|&c| c >= 2),
            "0 and 1 mean success and a panic"
        );
    }
}
