#!/usr/bin/env bash
# Builds the GPU baseline programs (bench/gpu/README.md) with nothing but the CUDA toolkit, for a
# GPU machine that has none of tuned's build dependencies:
#   bench/gpu/build_baselines.sh OUTDIR
# writes OUTDIR/tuned_cublas_gemm and, where cuDNN is found, OUTDIR/tuned_cudnn_conv (else one
# line says why it was skipped; the script still succeeds).
# The toolkit: $CUDA_HOME, else /usr/local/cuda, else the folder above nvcc's. cuDNN (cudnn.h and
# libcudnn): $CUDNN_HOME, else the toolkit, else the system folders, else the nvidia-cudnn Python
# wheel (the one PyTorch installs). Compiler: the toolkit's nvcc, else $CXX or g++.
set -euo pipefail
say() { echo "build_baselines: $*"; }
if [ $# -ne 1 ]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
out=$1
mkdir -p "$out"

find_cuda() {
  local nvcc
  for dir in "${CUDA_HOME:-}" /usr/local/cuda; do
    if [ -n "$dir" ] && [ -f "$dir/include/cuda_runtime.h" ]; then echo "$dir"; return; fi
  done
  if nvcc=$(command -v nvcc); then
    dir=$(cd "$(dirname "$(readlink -f "$nvcc")")/.." && pwd)
    if [ -f "$dir/include/cuda_runtime.h" ]; then echo "$dir"; return; fi
  fi
  return 1
}

# The first folder of the arguments that holds a file matching the pattern.
first_with() {
  local pattern=$1
  shift
  for dir in "$@"; do
    if compgen -G "$dir/$pattern" >/dev/null; then echo "$dir"; return; fi
  done
  return 1
}

if ! cuda=$(find_cuda); then
  say "no CUDA toolkit (cuda_runtime.h) under \$CUDA_HOME, /usr/local/cuda or beside nvcc: set CUDA_HOME" >&2
  exit 1
fi
arch=$(uname -m)-linux-gnu
cuda_lib=$(first_with 'libcublas.so*' "$cuda/lib64" "$cuda/lib" "$cuda/targets/$(uname -m)-linux/lib" \
           "/usr/lib/$arch") || { say "no libcublas under $cuda" >&2; exit 1; }

# nvcc drives the host compiler and links the CUDA runtime statically; a plain C++ compiler
# links the shared one. Either way the libraries' folders go into the rpath, so the programs
# run without LD_LIBRARY_PATH.
if [ -x "$cuda/bin/nvcc" ]; then
  compiler=("$cuda/bin/nvcc" -O2 -std=c++17 -Xcompiler -Wall -Xcompiler -Wextra)
  rpath=-Xlinker=-rpath=
  runtime=()
else
  compiler=("${CXX:-g++}" -O2 -std=c++17 -Wall -Wextra)
  rpath=-Wl,-rpath,
  runtime=(-lcudart)
fi

build() {  # build NAME SOURCE FLAGS...
  local name=$1 source=$2
  shift 2
  "${compiler[@]}" -I"$cuda/include" "$here/$source" -o "$out/$name" "$@"
  say "built $out/$name (${compiler[0]})"
}

build tuned_cublas_gemm cublas_gemm.cc -L"$cuda_lib" "$rpath$cuda_lib" -lcublas "${runtime[@]}"

# cuDNN is a separate download: without it the cuBLAS program is still worth having.
cudnn_dirs=()
[ -n "${CUDNN_HOME:-}" ] && cudnn_dirs+=("$CUDNN_HOME")
cudnn_dirs+=("$cuda" /usr /usr/local)
if command -v python3 >/dev/null &&
   wheel=$(python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0])' 2>/dev/null); then
  cudnn_dirs+=("$wheel")
fi
includes=() libs=()
for dir in "${cudnn_dirs[@]}"; do
  includes+=("$dir/include" "$dir/include/$arch")
  libs+=("$dir/lib64" "$dir/lib" "$dir/lib/$arch")
done
if ! cudnn_include=$(first_with cudnn.h "${includes[@]}"); then
  say "skipped tuned_cudnn_conv: no cudnn.h under ${cudnn_dirs[*]} (install cuDNN or set CUDNN_HOME)"
elif ! cudnn_lib=$(first_with 'libcudnn.so*' "${libs[@]}"); then
  say "skipped tuned_cudnn_conv: cudnn.h in $cudnn_include but no libcudnn.so under ${cudnn_dirs[*]} (set CUDNN_HOME)"
else
  # The wheel has only libcudnn.so.9, which -lcudnn does not find: link the file itself.
  cudnn_so=$(compgen -G "$cudnn_lib/libcudnn.so*" | sort | head -n 1)
  build tuned_cudnn_conv cudnn_conv.cc -I"$cudnn_include" "$cudnn_so" "$rpath$cudnn_lib" \
        -L"$cuda_lib" "$rpath$cuda_lib" "${runtime[@]}"
fi
