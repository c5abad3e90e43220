#!/usr/bin/env bash
# Packs what the GPU device check needs from this build into one archive, for a GPU machine
# that has the CUDA toolkit but none of our Debian packages:
#   bin/  tuned, tuned-cuda-runner, tuned-opencl-runner, tuned_gpu_worker_tests, patchelf
#   lib/  every shared library they load (from ldd), glibc's loader included, except the
#         CUDA driver (libcuda: the machine's own) and NVRTC (the machine's CUDA toolkit's,
#         which must be the major version this build links: libnvrtc.so.13 here)
# device_check.sh unpacks it and points each program at lib/ (patchelf), so the programs run
# on this glibc whatever the machine has.
#
# Usage: bench/gpu/make_bundle.sh [BUILD_DIR] [ARCHIVE]   (default: build build/gpu-bundle.tar.xz)
set -euo pipefail

build=${1:-build}
archive=${2:-$build/gpu-bundle.tar.xz}
die() { echo "make_bundle: $*" >&2; exit 1; }

command -v patchelf >/dev/null || apt-get install -y -q patchelf >/dev/null || die "patchelf is missing (apt-get install patchelf)"
programs=("$build/cli/tuned" "$build/cli/tuned-cuda-runner" "$build/cli/tuned-opencl-runner"
          "$build/tests/tuned_gpu_worker_tests" "$(command -v patchelf)")
for program in "${programs[@]}"; do
  [[ -x $program ]] || die "$program is not built (cmake --build $build first; CUDA and OpenCL enabled)"
done

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/tuned-gpu-bundle
mkdir -p "$root/bin" "$root/lib"

for program in "${programs[@]}"; do
  # Debug info is most of the size; symbols stay for backtraces.
  strip --strip-debug -o "$root/bin/$(basename "$program")" "$program"
done

# The libraries, as ldd resolves them here; the loader is the line without "=>".
ldd "${programs[@]}" | awk '
  /=> \// { print $3 }
  /^\t\/.*ld-linux/ { print $1 }' | sort -u | while read -r library; do
  case $(basename "$library") in
    libcuda.so*|libnvrtc*) continue ;;  # the machine's own (driver; toolkit)
  esac
  cp -L "$library" "$root/lib/"
done
for library in "$root"/lib/*.so*; do strip --strip-debug "$library" 2>/dev/null || true; done

mkdir -p "$(dirname "$archive")"
tar -C "$stage" -cf - tuned-gpu-bundle | xz -T0 -6 > "$archive"
echo "make_bundle: $archive ($(du -m "$archive" | cut -f1) MiB; unpacked $(du -sm "$root" | cut -f1) MiB)"
