#!/usr/bin/env bash
# The test suite under sanitizers, each in its own build folder.
#   scripts/sanitize.sh asan    ASan + UBSan: every unit and fault test      (build-asan, clang 19)
#   scripts/sanitize.sh tsan    TSan: the dispatcher, database, task-manager and connected
#                               worker-client tests, where threads meet       (build-tsan, gcc)
# Extra arguments go to ctest (e.g. -R Dispatcher). Suppressions of reports inside libraries
# that are not instrumented, with the reason for each, are in tests/sanitizers/.
# Why clang 19 for ASan: the worker forks a child per candidate from its multi-threaded process,
# and the child allocates. Only an ASan runtime that holds its allocator's locks across fork (as
# glibc's malloc does) makes that safe; in Debian 12 that is compiler-rt 19's, while GCC 12's
# libasan and clang 14's and 16's runtimes have no fork handler (docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-}
shift || true
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
supp="$PWD/tests/sanitizers"
compilers=()
case "$kind" in
  asan)
    build_dir=${BUILD_DIR:-build-asan}; sanitize="address,undefined"; labels="unit|fault"
    compilers=(clang-19 clang++-19); packages=(clang-19 libclang-rt-19-dev libomp-19-dev)
    targets=() ;;
  tsan)
    build_dir=${BUILD_DIR:-build-tsan}; sanitize="thread"; labels="unit|fault"
    packages=()
    targets=(tuned_dispatch_tests tuned_tuning_db_tests tuned_tuning_db_fault_tests tuned_tasks_tests
             tuned_worker_connected_fault_tests) ;;
  *) sed -n '2,7p' "$0" >&2; exit 2 ;;
esac
# abort_on_error: a report fails the test that caused it; detect_leaks: leaks are findings.
# handle_segv/sigbus/sigfpe=0: a crashing candidate (the fault tests plant them) must die of its
# signal, which the worker reports by name; ASan's handler would turn it into exit code 1. ASan
# finds bad accesses by its shadow checks, not by the signal, so no report is lost.
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:suppressions=$supp/asan.supp"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
# clang 19's runtime looks for its symbolizer in its own llvm-19 folder, which only the large
# llvm-19 package fills: a report names its frames with the newest symbolizer there is.
if [ "$kind" = asan ] && [ -z "${ASAN_SYMBOLIZER_PATH:-}" ]; then
  for symbolizer in llvm-symbolizer-19 llvm-symbolizer-16 llvm-symbolizer; do
    if command -v "$symbolizer" >/dev/null; then export ASAN_SYMBOLIZER_PATH=$(command -v "$symbolizer"); break; fi
  done
fi
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp"
# die_after_fork=0: a candidate runs in a child forked from the multi-threaded worker, and a
# parallel kernel starts threads there (the child's own memory; TSan would refuse them).
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:die_after_fork=0:suppressions=$supp/tsan.supp"
source scripts/lib/packages.sh
install_missing_packages sanitize "${packages[@]}"
compiler_args=()
if ((${#compilers[@]})); then
  compiler_args=(-DCMAKE_C_COMPILER="${compilers[0]}" -DCMAKE_CXX_COMPILER="${compilers[1]}")
  # CMake keeps a build folder's first compiler: a folder configured with another starts afresh.
  cached=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build_dir/CMakeCache.txt" 2>/dev/null || true)
  if [ -n "$cached" ] && [ "$(basename "$cached")" != "${compilers[1]}" ]; then
    echo "sanitize: $build_dir was configured with $cached; reconfiguring with ${compilers[1]}"
    rm -rf "$build_dir/CMakeCache.txt" "$build_dir/CMakeFiles"
  fi
fi
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUNED_SANITIZE="$sanitize" \
  -DTUNED_BUILD_BENCH=OFF "${compiler_args[@]}" >/dev/null
if ((${#targets[@]})); then
  cmake --build "$build_dir" --target "${targets[@]}"
  # Only the tests of those binaries: a regex of their suites (gtest_discover_tests names each
  # test "Suite.Case", parameterised ones "Prefix/Suite.Case/param").
  suites=$(for t in "${targets[@]}"; do "$build_dir/tests/$t" --gtest_list_tests | grep -v '^ ' | sed 's/ *#.*//'; done |
           sed 's/\./\\./g' | paste -sd'|')
  ctest --test-dir "$build_dir" -L "$labels" -R "^($suites)" --output-on-failure -j "$(nproc)" "$@"
else
  cmake --build "$build_dir"
  ctest --test-dir "$build_dir" -L "$labels" --output-on-failure -j "$(nproc)" "$@"
fi
