//! A build id compiled into the app and the worker: a hash of every source
//! they are built from, so an app and a worker from different builds (a
//! static host's cache pairing a new page with an old worker) can tell.

use std::path::Path;

fn main() {
    // Read when the script runs, not baked in when it is compiled: a build
    // script compiled in another checkout (a copied target/) would hash
    // that checkout's sources.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let root = Path::new(&manifest).join("..");
    let mut files = Vec::new();
    for dir in ["web/src", "crates/schedlab/src", "presets"] {
        collect(&root.join(dir), &mut files);
        println!("cargo:rerun-if-changed=../{dir}");
    }
    files.push(root.join("Cargo.lock"));
    println!("cargo:rerun-if-changed=../Cargo.lock");
    files.sort();
    // FNV-1a over each file's path (from the root) and bytes.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .unwrap_or(f)
            .to_string_lossy()
            .into_owned();
        let bytes = std::fs::read(f).unwrap_or_default();
        for b in rel.bytes().chain([0]).chain(bytes) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    println!("cargo:rustc-env=SCHEDLAB_BUILD_ID={h:016x}");
}

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else {
            out.push(p);
        }
    }
}
