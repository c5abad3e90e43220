#!/usr/bin/env bash
# The GPU device check (issue 15), for an NVIDIA GPU machine that has the CUDA toolkit (nvcc)
# but none of tuned's Debian packages and no package registry. From the repository root:
#
#   here:        bench/gpu/make_bundle.sh build build/gpu-bundle.tar.xz
#   GPU machine: bench/gpu/device_check.sh [build/gpu-bundle.tar.xz]
#
# It unpacks the bundle (tuned, its runners and their libraries, glibc's loader included) and
# points each program at the bundled libraries; builds the cuBLAS baseline with the machine's
# nvcc; tunes a 4096³ fp32 matmul with embedded `tuned tune --target cuda` for a fixed trial
# budget (builds overlap runs); times cuBLAS SGEMM (TF32 off, and TF32 on as its own row) in
# the same run; compiles the best (`tuned compile --target cuda`) and runs its C launcher from a
# small C program (bench/gpu/launcher_check.c), checking its result; and runs the CUDA engine's
# tests (verified candidates; a planted illegal address and a planted endless loop end the
# runner, the next job runs on a fresh one).
# Figures go to stdout and, with $OUT set, to $OUT/device_check.txt.
#
# Environment: TRIALS (default 64), SIZE (matmul M=N=K, default 4096), TUNE_SECONDS (limit of
# the tuning step, default 200), TARGET (default: cuda with the GPU's arch), and
# DEVICE_CHECK_TARGET=opencl to check the script itself on an OpenCL device (this machine's
# PoCL: 256³, 8 trials, no cuBLAS).
set -uo pipefail

bundle=${1:-build/gpu-bundle.tar.xz}
repo=$(pwd)
root=/tmp/tuned-gpu-bundle  # absolute: the programs' loader path is patched to it
work=$(mktemp -d)
report=${OUT:-$work}/device_check.txt
start=$(date +%s)
say() { echo "device_check: $*" | tee -a "$report"; }
die() { say "FAILED: $*"; exit 1; }
elapsed() { echo "$(( $(date +%s) - start )) s"; }
# The value of "key" in a one-line JSON object (numbers and strings; enough for our rows).
field() { sed -n "s/.*\"$2\":\"\\{0,1\\}\\([^\",}]*\\).*/\\1/p" <<< "$1" | head -1; }

mkdir -p "$(dirname "$report")"; : > "$report"
[[ $(uname -m) == x86_64 ]] || die "the bundle is for x86_64, this machine is $(uname -m)"
[[ -f $bundle ]] || die "no bundle at $bundle (make it with bench/gpu/make_bundle.sh on the build machine)"

# --- unpack and point the programs at the bundled libraries ----------------------------------
rm -rf "$root"; mkdir -p "$(dirname "$root")"
# xz, or Python's lzma where the machine has no xz (a minimal Debian root has neither xz nor Python).
unxz() {
  if command -v xz >/dev/null; then xz -dc "$1"
  elif command -v python3 >/dev/null; then python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' "$1"
  else return 1; fi
}
unxz "$bundle" | tar -C "$(dirname "$root")" -xf - || die "cannot unpack $bundle (it needs xz or python3)"
loader=$(ls "$root"/lib/ld-linux-x86-64.so.* 2>/dev/null | head -1)
[[ -n $loader ]] || die "the bundle has no loader"
# DT_RPATH (--force-rpath), not DT_RUNPATH: only the former also serves the libraries' own
# dependencies (libxgboost's libdmlc), which a machine without our packages lacks.
for program in "$root"/bin/*; do
  [[ $(basename "$program") == patchelf ]] && continue
  "$loader" --library-path "$root/lib" "$root/bin/patchelf" \
    --set-interpreter "$loader" --force-rpath --set-rpath "$root/lib" "$program" || die "patchelf $program"
done
bin=$root/bin
say "bundle unpacked to $root ($(elapsed))"

# --- the target and the machine's CUDA ----------------------------------------------------------
mode=${DEVICE_CHECK_TARGET:-cuda}
if [[ $mode == cuda ]]; then
  command -v nvidia-smi >/dev/null || die "no nvidia-smi: not an NVIDIA GPU machine"
  gpu=$(nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv,noheader -i 0)
  say "GPU 0: $gpu"
  cc=$(cut -d, -f2 <<< "$gpu" | tr -d ' .')
  target=${TARGET:-"cuda -arch=sm_$cc"}
  size=${SIZE:-4096}; trials=${TRIALS:-64}
  cuda=${CUDA_HOME:-}
  [[ -n $cuda ]] || cuda=$( [[ -d /usr/local/cuda ]] && echo /usr/local/cuda || dirname "$(dirname "$(command -v nvcc)")")
  # NVRTC is the toolkit's: the major version this build links (libnvrtc.so.13).
  needed=$(LD_LIBRARY_PATH= "$loader" --list "$bin/tuned" 2>/dev/null | awk '/libnvrtc/ {print $1; exit}')
  nvrtc_dir=$(dirname "$(find "$cuda"/ -name "${needed:-libnvrtc.so.13}" 2>/dev/null | head -1)")
  [[ -n $nvrtc_dir && $nvrtc_dir != . ]] || die "no ${needed:-libnvrtc.so.13} under $cuda: this bundle needs that CUDA toolkit's NVRTC"
  export LD_LIBRARY_PATH=$nvrtc_dir
else
  target=${TARGET:-opencl}; size=${SIZE:-256}; trials=${TRIALS:-8}
fi
workload="matmul(M=$size,N=$size,K=$size)"
flops=$(( 2 * size * size * size ))
say "target '$target', workload $workload, $trials trials"

# --- the baseline, built here with the machine's nvcc --------------------------------------------
cublas_us=""
if [[ $mode == cuda ]]; then
  bash "$repo/bench/gpu/build_baselines.sh" "$work/baselines" >> "$report" 2>&1 || die "building the baselines (see $report)"
  rows=$("$work/baselines/tuned_cublas_gemm" "$size" "$size" "$size" 2>&1) || die "cuBLAS: $rows"
  echo "$rows" >> "$report"
  fp32=$(grep '"math":"fp32"' <<< "$rows"); tf32=$(grep '"math":"tf32"' <<< "$rows")
  cublas_us=$(field "$fp32" median_us)
  say "cuBLAS SGEMM, TF32 off: $cublas_us us ($(field "$fp32" gflops) GFLOP/s); TF32 on: $(field "$tf32" median_us) us ($(field "$tf32" gflops) GFLOP/s) ($(elapsed))"
fi

# --- tuning -------------------------------------------------------------------------------------
db=$work/device_check.db
tune_start=$(date +%s)
timeout "${TUNE_SECONDS:-200}" "$bin/tuned" tune --workload "$workload" --target "$target" --trials "$trials" \
  --db "$db" --json > "$work/tune.json" 2> "$work/tune.log"
tune_rc=$?
tune_wall=$(( $(date +%s) - tune_start ))
summary=$(tr -d '\n ' < "$work/tune.json")
best_s=$(field "$summary" median_seconds)
if [[ -z $best_s ]]; then
  # Cut off by the limit: the log has every result so far.
  best=$("$bin/tuned" db best --db "$db" --target "$target" -k 1 --json "$workload" 2>> "$work/tune.log" | tr -d '\n ')
  best_s=$(field "$best" median_seconds)
fi
tail -5 "$work/tune.log" >> "$report"
[[ -n $best_s ]] || die "tuning gave no verified result (exit $tune_rc; $(tail -1 "$work/tune.log"))"
best_us=$(awk -v s="$best_s" 'BEGIN { printf "%.1f", s * 1e6 }')
gflops=$(awk -v s="$best_s" -v f="$flops" 'BEGIN { printf "%.0f", f / s * 1e-9 }')
say "tuned: best $best_us us ($gflops GFLOP/s) after $(field "$summary" trials_done) trials in $tune_wall s (exit $tune_rc)"
if [[ -n $summary ]]; then
  say "tuning time: wall $(field "$summary" wall_seconds) s, runs $(field "$summary" run_seconds) s (device busy share), builds $(field "$summary" build_seconds) s (overlapping runs), search $(field "$summary" search_seconds) s"
fi
if [[ -n $cublas_us ]]; then
  say "tuned / cuBLAS (TF32 off): $(awk -v t="$best_us" -v c="$cublas_us" 'BEGIN { printf "%.3f", c / t }')x (above 1: tuned is faster; the goal after 1000 trials is 0.7)"
fi

# --- the best compiled, its launcher run as a user's program would -------------------------------
if [[ $mode == cuda ]]; then
  mkdir -p "$work/launcher"
  "$bin/tuned" compile -w "$workload" --target "$target" --db "$db" -o "$work/launcher/tuned_mm" --name tuned_mm \
    >> "$report" 2>&1 || die "tuned compile --target '$target' (see $report)"
  # Linked against the toolkit's stub; at run time the driver's libcuda.so.1 serves it.
  cc -std=c11 -O2 -I "$work/launcher" -I "$cuda/include" "$repo/bench/gpu/launcher_check.c" \
    "$work/launcher/tuned_mm.c" -L "$cuda/lib64/stubs" -L "$cuda/lib64" -lcuda -lm -o "$work/launcher_check" \
    >> "$report" 2>&1 || die "building the launcher check (see $report)"
  row=$("$work/launcher_check" "$size" "$size" "$size" 2>&1) || die "the compiled launcher: $row"
  echo "$row" >> "$report"
  say "compiled launcher (tuned compile --target cuda, run from C on a stream): $(field "$row" mean_us) us, max relative error $(field "$row" max_rel_error)"
fi

# --- faults: sticky errors and hangs -------------------------------------------------------------
if [[ $mode == cuda ]]; then
  filter='CudaEngineTest.*:CudaCandidate*'
  arch="sm_$cc"
else
  filter='GpuEngineTest.*'
  arch=""
fi
if TUNED_TEST_CUDA_ARCH=$arch TUNED_TEST_CUDA_RUNNER=$bin/tuned-cuda-runner \
   "$bin/tuned_gpu_worker_tests" --gtest_filter="$filter" > "$work/faults.log" 2>&1 &&
   ! grep -q 'SKIPPED \] .*Measures' "$work/faults.log"; then  # a skip here means no device: a failure
  say "engine and fault tests ($filter): $(grep -E '^\[  PASSED|SKIPPED \]' "$work/faults.log" | tr '\n' ' ')"
else
  grep -E 'Failure|FAILED|rror' "$work/faults.log" | head -20 >> "$report"
  die "engine and fault tests ($filter) failed (see $report)"
fi
say "done in $(elapsed)"
