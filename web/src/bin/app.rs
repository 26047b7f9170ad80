fn main() {
    yew::Renderer::<schedlab_web::app::App>::new().render();
}
