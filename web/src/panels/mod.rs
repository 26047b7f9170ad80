//! The editing panels: each reads the editor and sends edits. A panel is a
//! component around a plain `view(&Form, ..) -> Html`, so tests can render
//! it natively and read what it shows (`tests.rs`).

pub mod kernel;
pub mod machine;
#[cfg(test)]
mod tests;
pub mod workload;

use crate::fields::EditorHandle;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub editor: EditorHandle,
}
