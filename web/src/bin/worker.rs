fn main() {
    schedlab_web::worker::listen();
}
