#!/usr/bin/env bash
# CTest test (label unit) of one GPU baseline program (bench/gpu/README.md) on a small shape:
#   run_or_refuse_test.sh PROGRAM ARGS...
# Where it runs (exit 0), its stdout must be the two JSON rows, fp32 then tf32, each with a
# positive time and rate and a small error. Where it does not, it must be because there is no
# usable GPU: exit code 1, nothing on stdout, and the one line "<program>: no CUDA device: <why>"
# on stderr (no crash, no usage text); a failure while nvidia-smi lists a GPU fails the test.
set -uo pipefail
program=$1
shift
name=$(basename "$program")
args="$*"
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

"$program" "$@" --repeats 3 >"$out" 2>"$err"
rc=$?

fail() {
  echo "FAIL: $name $args: $1 (exit code $rc)"
  echo "--- stdout"; cat "$out"
  echo "--- stderr"; cat "$err"
  exit 1
}

gpu_listed() { command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; }

# Each row must parse as JSON with the fields the README names. Python where there is one (the
# GPU machines need not have it); else the shape of the line.
check_rows() {
  [ "$(wc -l <"$out")" -eq 2 ] || fail "want 2 JSON rows on stdout"
  if command -v python3 >/dev/null; then
    python3 - "$out" <<'EOF' || fail "the rows are not the JSON the README describes"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
assert [r["math"] for r in rows] == ["fp32", "tf32"], rows
for r in rows:
    assert r["library"] in ("cublas", "cudnn"), r
    assert r["median_us"] > 0 and r["gflops"] > 0 and r["max_rel_error"] < 1e-2, r
    assert r["device"] and r["cc"], r
EOF
  else
    grep -vqE '^\{"library":"(cublas|cudnn)","math":"(fp32|tf32)",.*"median_us":[0-9.e+-]+,.*"device":".*\}$' "$out" &&
      fail "a row is not the JSON the README describes"
  fi
  echo "$name ran on the GPU:"
  cat "$out"
}

check_refusal() {
  grep -qE "^$name: no CUDA device: .+" "$err" ||
    fail "failed, and not for want of a GPU (want the line '$name: no CUDA device: <why>')"
  gpu_listed && fail "says there is no CUDA device, but nvidia-smi lists one"
  [ "$rc" -eq 1 ] || fail "want exit code 1 without a GPU"
  [ -s "$out" ] && fail "want nothing on stdout without a GPU"
  [ "$(wc -l <"$err")" -eq 1 ] || fail "want one line on stderr without a GPU"
  echo "no GPU here, and $name says so: $(cat "$err")"
}

if [ "$rc" -eq 0 ]; then check_rows; else check_refusal; fi
