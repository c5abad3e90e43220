#!/usr/bin/env bash
# Sets up (packages, configure, build) and runs the whole test suite with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
TUNED_TEST_PACKAGES=1 bash scripts/setup.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)"
# Every fuzz target for a few seconds under ASan + UBSan (docs/testing.md); longer runs are
# `scripts/fuzz.sh run TARGET SECONDS`.
bash scripts/fuzz.sh smoke "${TUNED_FUZZ_SECONDS:-10}"
