# Sourced by the other scripts: where the project's tools live, on PATH.
# shellcheck shell=bash
SCHEDLAB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export SCHEDLAB_ROOT
# npm-installed tools (wasm-opt, playwright-core); deleting .tools/ replays a fresh install.
export SCHEDLAB_TOOLS="$SCHEDLAB_ROOT/.tools"
# cargo-installed tools (trunk, wasm-bindgen) live in cargo's own bin folder.
CARGO_BIN="${CARGO_HOME:-$HOME/.cargo}/bin"
export PATH="$SCHEDLAB_TOOLS/node_modules/.bin:$CARGO_BIN:$PATH"
