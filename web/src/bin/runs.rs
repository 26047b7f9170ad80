fn main() {
    schedlab_web::runs::mount();
}
