fn main() {
    schedlab_web::panic::install("runs module");
    schedlab_web::runs::mount();
}
