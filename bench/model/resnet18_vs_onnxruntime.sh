#!/usr/bin/env bash
# Tunes the ResNet-18 test model (tests/models/make_models.py) with one trial budget and compares
# it end to end with onnxruntime's CPU provider on the same machine, in one run:
#   bash bench/model/resnet18_vs_onnxruntime.sh [TRIALS] [ROUND_TRIALS]     (defaults 2000, 16)
# Prints the task table (how the scheduler split the trials, each task's best), then tuned's
# estimated latency (Σ weight × best), its measured latency through the compiled library
# (`tuned run-model`, all of it and the part inside the kernels) and onnxruntime's, each the
# median of 20 runs in its own process. Needs a build (scripts/setup.sh) and onnxruntime in
# build/ort-venv (scripts/test.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/../.."
trials=${1:-2000}
round=${2:-16}
build=${BUILD_DIR:-build}
work=$(mktemp -d /tmp/tuned-resnet18-XXXXXX)
model=$build/tests/models/resnet18.onnx
[ -f "$model" ] || ninja -C "$build" tuned_test_models
start=$(date +%s)
"$build/cli/tuned" tune --model "$model" --db "$work/tuned.db" --trials "$trials" --round-trials "$round"
echo "tuning took $(( $(date +%s) - start )) s"
python3 tests/models/compare_onnxruntime.py --tuned "$build/cli/tuned" --model "$model" --work "$work/run" \
  --db "$work/tuned.db" --venv "$build/ort-venv" --repeat 20
echo "log kept in $work/tuned.db"
