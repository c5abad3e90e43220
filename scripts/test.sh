#!/usr/bin/env bash
# Sets up (packages, configure, build) and runs the whole test suite with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
TUNED_TEST_PACKAGES=1 bash scripts/setup.sh
# onnxruntime, from PyPI, for the tests that compare whole models with it
# (tests/models/compare_onnxruntime.py; without it they report a skip).
venv="${BUILD_DIR:-build}/ort-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c "import onnxruntime, onnx, numpy" 2>/dev/null ||
  "$venv/bin/pip" install -q onnxruntime==1.32.0 onnx==1.23.2 numpy==2.4.6 ||
  echo "test.sh: could not install onnxruntime from PyPI; the comparisons with it will report a skip" >&2
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)"
# Every fuzz target for a few seconds under ASan + UBSan (docs/testing.md); longer runs are
# `scripts/fuzz.sh run TARGET SECONDS`.
bash scripts/fuzz.sh smoke "${TUNED_FUZZ_SECONDS:-10}"
