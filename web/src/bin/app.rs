fn main() {
    schedlab_web::panic::install("editor");
    // The editor is rooted in the frame's top part, never around the
    // results host (see app::frame). Without a document there is no page.
    if let Some(root) = schedlab_web::app::frame::build() {
        yew::Renderer::<schedlab_web::app::App>::with_root(root).render();
    }
}
