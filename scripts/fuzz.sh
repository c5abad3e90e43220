#!/usr/bin/env bash
# The libFuzzer targets of tests/fuzz/, built with clang, ASan and UBSan in their own build folder.
#   scripts/fuzz.sh build                 configure + build every fuzz target (BUILD_DIR, default build-fuzz)
#   scripts/fuzz.sh smoke [SECONDS]       every target for SECONDS (default 10) from its corpus, after
#                                         replaying every regression input; fails on any finding
#   scripts/fuzz.sh run TARGET SECONDS    one long run; new inputs go to BUILD_DIR/corpus/TARGET, and
#                                         `merge TARGET` folds the interesting ones into the repo corpus
#   scripts/fuzz.sh merge TARGET          minimise BUILD_DIR/corpus/TARGET into tests/fuzz/corpus/TARGET
# A finding leaves its input as BUILD_DIR/findings/TARGET/crash-*; once fixed, copy it into
# tests/fuzz/regressions/TARGET/ so every smoke run replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-fuzz}
fuzz_dir=tests/fuzz
targets=(fuzz_workload_spec fuzz_workload_language fuzz_target_string fuzz_trace fuzz_jsonl_import
         fuzz_rpc_messages)
# Leaks are findings; a single input that runs for seconds (a pathological spec) is one too.
fuzz_flags=(-timeout=10 -rss_limit_mb=2048 -detect_leaks=1 -print_final_stats=1)
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Configures once (cmake reconfigures itself when a CMakeLists.txt changes) and builds under a
# lock, so runs of several targets started together share one build instead of racing.
build() {
  command -v clang++ >/dev/null || { echo "fuzz: clang++ not found (apt install clang)" >&2; exit 1; }
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
  mkdir -p "$build_dir"
  exec 9>"$build_dir/.build.lock"
  flock 9
  if [ ! -f "$build_dir/build.ninja" ]; then
    CC=clang CXX=clang++ cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DTUNED_FUZZ=ON -DTUNED_BUILD_BENCH=OFF -DTUNED_WERROR="$([ "${CI:-}" = true ] && echo ON || echo OFF)" >/dev/null
  fi
  cmake --build "$build_dir" --target tuned_fuzzers
  flock -u 9
}

binary() { echo "$build_dir/tests/fuzz/$1"; }

dict_flag() {
  local dict="$fuzz_dir/dict/${1#fuzz_}.dict"
  [ -f "$dict" ] && echo "-dict=$dict"
  return 0
}

# Replays every regression input of a target (each must now pass), then fuzzes for $2 seconds
# from a scratch copy of its corpus, so the repo corpus only changes through `merge`.
smoke_one() {
  local target=$1 seconds=$2
  local regressions="$fuzz_dir/regressions/$target"
  if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions")" ]; then
    "$(binary "$target")" "${fuzz_flags[@]}" "$regressions"/* >/dev/null 2>&1 ||
      { echo "fuzz: $target fails on a regression input again:" >&2;
        "$(binary "$target")" "${fuzz_flags[@]}" "$regressions"/* 2>&1 | tail -30 >&2; return 1; }
  fi
  local work="$build_dir/smoke/$target" findings="$build_dir/findings/$target"
  rm -rf "$work" && mkdir -p "$work" "$findings"
  cp -r "$fuzz_dir/corpus/$target/." "$work/"
  local log="$build_dir/smoke/$target.log"
  if ! "$(binary "$target")" "${fuzz_flags[@]}" $(dict_flag "$target") -max_total_time="$seconds" \
       -artifact_prefix="$findings/" "$work" >"$log" 2>&1; then
    echo "fuzz: $target found a failure (input in $findings):" >&2
    tail -40 "$log" >&2
    return 1
  fi
  local execs cov
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo "?")
  printf 'fuzz: %-24s %8s runs in %ss, coverage %s edges, corpus %s inputs\n' "$target" "$execs" \
    "$seconds" "$cov" "$(ls "$work" | wc -l)"
}

case "${1:-}" in
  build) build ;;
  smoke)
    build
    seconds=${2:-10}
    status=0
    for target in "${targets[@]}"; do smoke_one "$target" "$seconds" || status=1; done
    exit $status ;;
  run)
    target=${2:?target}; seconds=${3:?seconds}
    build
    corpus="$build_dir/corpus/$target"; findings="$build_dir/findings/$target"
    mkdir -p "$corpus" "$findings"
    "$(binary "$target")" "${fuzz_flags[@]}" $(dict_flag "$target") -max_total_time="$seconds" \
      -artifact_prefix="$findings/" "$corpus" "$fuzz_dir/corpus/$target" ;;
  merge)
    target=${2:?target}
    build
    "$(binary "$target")" -merge=1 "$fuzz_dir/corpus/$target" "$build_dir/corpus/$target" ;;
  *) sed -n '2,11p' "$0" >&2; exit 2 ;;
esac
