#!/usr/bin/env bash
# Installs the Debian packages tuned builds against (only the missing ones), then configures and
# builds the project with CMake + Ninja (+ ccache). Safe to run any number of times.
#   scripts/setup.sh            install + configure + build into ./build
#   BUILD_DIR=out scripts/setup.sh
#   TUNED_BASELINES=0 scripts/setup.sh   leave out the baseline libraries (OpenBLAS, oneDNN): the
#                                        product and its tests build, their benchmarks are skipped
# libpq-dev and postgresql: the PostgreSQL backend of the tuning log and the server its tests
# start in a scratch folder (without libpq the project builds without that backend).
# Packages are installed with --no-install-recommends, so everything the build reads is named
# here, including what a package only recommends (oneDNN's CMake config needs the OpenCL
# headers and loader, which libdnnl-dev merely recommends). PoCL (pocl-opencl-icd) is the OpenCL
# device the GPU tests run their kernels on, on the CPU; `clinfo` shows it. CUDA is not a Debian
# package: where /usr/local/cuda has it, NVRTC builds are on (see docs/architecture.md, "GPU").
set -euo pipefail
cd "$(dirname "$0")/.."

# file: cpack's Debian package (cmake/TunedPackage.cmake) finds its Depends with dpkg-shlibdeps,
# which CPack runs only where `file` exists (a minimal Debian has none).
# prometheus-cpp-dev and libcivetweb-dev: `--metrics-listen` and the status page; libcairo2-dev:
# PNG plots (each optional for the build: without them the feature is off).
# libonnx-dev: ONNX's messages and shape inference, for `--model` (model/).
packages=(
  build-essential cmake ninja-build ccache pkg-config git file
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libsqlite3-dev libssl-dev openssl
  libpq-dev postgresql
  llvm-16-dev libomp-dev
  libspdlog-dev libcli11-dev nlohmann-json3-dev
  libxgboost-dev xgboost
  libgtest-dev libgmock-dev libbenchmark-dev
  ocl-icd-opencl-dev opencl-headers
  pocl-opencl-icd clinfo
  prometheus-cpp-dev libcivetweb-dev libcairo2-dev
  libonnx-dev
)
# What only the test suite uses (scripts/test.sh sets TUNED_TEST_PACKAGES=1): Slurm and munge for
# the job-array test (it starts its own daemons in a scratch folder), PyYAML and systemd-analyze
# for the check of deploy/, iproute2 for the test that cuts links between network namespaces;
# chromium (the status page, headless), tmux (the progress bar in a real terminal),
# python3-prometheus-client (parses /metrics) and fonts-dejavu-core (text in the screenshot and
# the PNG plots) for the observability tests; clang and its runtime libraries (libFuzzer, ASan,
# UBSan) for the fuzz smoke (scripts/fuzz.sh); python3-onnx (with numpy) writes the test models and
# libonnx-testdata holds ONNX's own converted PyTorch cases with their reference outputs;
# python3-venv: scripts/test.sh installs onnxruntime (PyPI) into a virtual environment.
[ "${TUNED_TEST_PACKAGES:-0}" = "0" ] ||
  packages+=(slurmctld slurmd slurm-client munge python3-yaml systemd iproute2
             chromium tmux python3-prometheus-client fonts-dejavu-core clang libclang-rt-14-dev
             python3-onnx libonnx-testdata python3-venv)
# Baselines the benchmarks compare against; optional for the build.
[ "${TUNED_BASELINES:-1}" = "0" ] || packages+=(libopenblas-dev libdnnl-dev)

source scripts/lib/packages.sh
install_missing_packages setup "${packages[@]}"
# The package starts a system cluster; nothing here uses it (the tests start their own server in
# the build tree, tests/support/postgres_server.sh), so stop the one we just installed.
if [[ " ${newly_installed[*]} " == *" postgresql "* ]] && command -v pg_lsclusters >/dev/null; then
  pg_lsclusters --no-header 2>/dev/null | while read -r version cluster _; do
    as_root pg_ctlcluster "$version" "$cluster" stop 2>/dev/null || true
  done
fi

# ccache: paths relative to the checkout and no working directory in the hash, so a fresh clone
# elsewhere (CI) reuses what an earlier build compiled.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true

build_dir=${BUILD_DIR:-build}
build_type=${BUILD_TYPE:-RelWithDebInfo}
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" -DTUNED_WERROR="$werror"
cmake --build "$build_dir"
