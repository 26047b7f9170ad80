//! The editing panels: each reads the editor and sends edits. A panel is a
//! component around a plain `view(&Form, ..) -> Html`.

pub mod kernel;
pub mod machine;
pub mod workload;

use crate::fields::EditorHandle;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub editor: EditorHandle,
}
