#!/usr/bin/env bash
# Builds and runs examples/c_matmul against a kernel from `tuned compile`, once as the default
# schedule (empty log) — what a user gets before tuning. Usage: c_matmul_test.sh TUNED SOURCE_DIR
set -euo pipefail
tuned=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
touch "$work/empty.jsonl"
"$tuned" db import "$work/empty.jsonl" --db "$work/tuned.db" >/dev/null
"$tuned" compile --workload 'matmul(M=64,N=48,K=32)' --db "$work/tuned.db" -o "$work/matmul.so" 2>"$work/warnings"
grep -q "using the default schedule" "$work/warnings"
test -f "$work/matmul.h"
cmake -S "$source_dir/examples/c_matmul" -B "$work/build" -DTUNED_KERNEL="$work/matmul.so" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/c_matmul"
