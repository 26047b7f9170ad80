fn main() {
    schedlab_web::panic::install("worker");
    schedlab_web::worker::listen();
}
