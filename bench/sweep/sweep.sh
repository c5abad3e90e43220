#!/usr/bin/env bash
# tuned against onnxruntime and oneDNN on single DL ops (bench/sweep/shapes.py), each op tuned
# with its own trial budget into a fresh log:
#   bash bench/sweep/sweep.sh [TRIALS] [SHAPE...]     (default 128 trials, every shape)
# Prints the table (tuned's kernel time and GFLOP/s, onnxruntime's, oneDNN's, the ratio to the
# faster library, their geometric mean) and where its JSON and the work folder are. Needs a build
# (scripts/setup.sh) and onnxruntime in build/ort-venv (scripts/test.sh installs it); oneDNN's
# column needs tuned_onednn_op (libdnnl-dev), built here if it is missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD_DIR:-build}
trials=${1:-128}
shift $(( $# > 0 ? 1 : 0 ))
[ -x "$build/bench/tuned_machine_peak" ] || ninja -C "$build" tuned_machine_peak
[ -x "$build/bench/tuned_onednn_op" ] || ninja -C "$build" tuned_onednn_op ||
  echo "sweep.sh: tuned_onednn_op could not be built; the oneDNN column will say n/a" >&2
exec python3 bench/sweep/sweep.py --build "$build" --trials "$trials" "$@"
