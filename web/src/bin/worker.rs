use gloo_worker::Registrable;
use schedlab_web::protocol::Json;
use schedlab_web::worker::CoreWorker;

fn main() {
    CoreWorker::registrar().encoding::<Json>().register();
}
