#!/usr/bin/env bash
# From an installed prefix only (`cmake --install BUILD --prefix P`): tune a matmul, compile its
# best record to .so and .o with P/bin/tuned, build examples/c_matmul against each and
# examples/cpp_compiler against find_package(tuned), and run them. The default schedule (an
# empty log) goes through the same path first. Usage: installed_prefix_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
tuned=$prefix/bin/tuned
spec='matmul(M=64,N=48,K=32)'

build_and_run_c() {  # build_and_run_c KERNEL
  cmake -S "$source_dir/examples/c_matmul" -B "$1.build" -DCMAKE_PREFIX_PATH="$prefix" -DTUNED_KERNEL="$1" >/dev/null
  cmake --build "$1.build" >/dev/null
  "$1.build/c_matmul"
}

# Before tuning: the default schedule, with a warning that says so.
touch "$work/empty.jsonl"
"$tuned" db import "$work/empty.jsonl" --db "$work/empty.db" >/dev/null
"$tuned" compile --workload "$spec" --db "$work/empty.db" -o "$work/default/matmul.so" 2>"$work/warnings" >/dev/null
grep -q "using the default schedule" "$work/warnings"
build_and_run_c "$work/default/matmul.so"

# After tuning: both outputs come from the best record.
"$tuned" tune --workload "$spec" --trials 4 --db "$work/tuned.db" >/dev/null
for kernel in "$work/so/matmul.so" "$work/obj/matmul.o"; do
  "$tuned" compile --workload "$spec" --db "$work/tuned.db" -o "$kernel" >"$work/compiled"
  grep -q "(record [0-9]" "$work/compiled" || { cat "$work/compiled"; exit 1; }
  build_and_run_c "$kernel"
done
grep -q "pkg-config --libs tuned-runtime" "$work/obj/matmul.h"
# The pkg-config file's link line works outside CMake too.
PKG_CONFIG_PATH=$prefix/lib/pkgconfig cc -I"$work/obj" "$source_dir/examples/c_matmul/main.c" "$work/obj/matmul.o" \
  $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --libs tuned-runtime) -lm -o "$work/c_matmul_pc"
"$work/c_matmul_pc"

# The C++ compiler API from the installed package.
cmake -S "$source_dir/examples/cpp_compiler" -B "$work/cpp" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cpp" >/dev/null
"$work/cpp/cpp_compiler" "$work/tuned.db" | tee "$work/cpp.out"
grep -q "kernel from record" "$work/cpp.out"
