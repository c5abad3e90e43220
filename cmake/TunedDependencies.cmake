# Every third-party dependency, found from Debian's packages. Nothing is vendored or downloaded.
find_package(Threads REQUIRED)
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(spdlog CONFIG REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(xgboost CONFIG REQUIRED)
# LLVM 16: the newest Debian 12 packages; its ORC LLJIT and new pass manager are the stable APIs
# we build on, and it knows the host CPUs of our machines (znver3/znver4, sapphirerapids).
find_package(LLVM 16 CONFIG REQUIRED HINTS /usr/lib/llvm-16/lib/cmake/llvm)
message(STATUS "tuned: LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")
find_package(OpenMP REQUIRED)
# ONNX 1.12 (libonnx-dev): its protobuf messages and shape inference, for `--model` (model/).
find_package(ONNX CONFIG REQUIRED)
if(TUNED_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(TUNED_BUILD_BENCH)
  find_package(benchmark CONFIG REQUIRED)
endif()


# Optional GPU toolchains. CUDA (NVRTC) compiles generated CUDA C here without a GPU; OpenCL (the
# headers and the ICD loader; PoCL is the device at run time) runs generated OpenCL C on the CPU.
# Absent, their libraries are not built and their tests report that they are skipped.
find_package(CUDAToolkit QUIET)
option(TUNED_ENABLE_CUDA "Build CUDA code generation (needs the CUDA toolkit's NVRTC)" ${CUDAToolkit_FOUND})
if(TUNED_ENABLE_CUDA AND NOT TARGET CUDA::nvrtc)
  message(FATAL_ERROR "TUNED_ENABLE_CUDA is ON but NVRTC was not found (set CUDAToolkit_ROOT)")
endif()
if(TUNED_ENABLE_CUDA)
  # CMake's CUDA::nvrtc carries CUDA::cuda_driver, which without a GPU driver is the toolkit's
  # stub libcuda.so: it links, but no libcuda.so.1 exists to load. Nothing in tuned's own
  # processes calls the driver API (NVRTC does not need it), and a sanitizer build (which keeps
  # every library it links) would give test programs that cannot start.
  set_property(TARGET CUDA::nvrtc PROPERTY INTERFACE_LINK_LIBRARIES "")
  message(STATUS "tuned: CUDA ${CUDAToolkit_VERSION} in ${CUDAToolkit_LIBRARY_DIR}: NVRTC builds on")
else()
  message(STATUS "tuned: CUDA off (no CUDA toolkit found, or TUNED_ENABLE_CUDA=OFF): tuned_codegen_cuda and tuned_nvrtc_bench are not built, their tests are skipped")
endif()
find_package(OpenCL QUIET)
option(TUNED_ENABLE_OPENCL "Build the OpenCL runner (needs ocl-icd-opencl-dev and opencl-headers)" ${OpenCL_FOUND})
if(TUNED_ENABLE_OPENCL AND NOT TARGET OpenCL::OpenCL)
  message(FATAL_ERROR "TUNED_ENABLE_OPENCL is ON but OpenCL was not found (install ocl-icd-opencl-dev opencl-headers)")
endif()
if(TUNED_ENABLE_OPENCL)
  message(STATUS "tuned: OpenCL ${OpenCL_VERSION_STRING} headers and loader: the OpenCL runner builds on")
else()
  message(STATUS "tuned: OpenCL off (install ocl-icd-opencl-dev opencl-headers, or TUNED_ENABLE_OPENCL=OFF): tuned_opencl is not built, its tests are skipped")
endif()

# Optional observability. Metrics and the status page (`--metrics-listen`) need prometheus-cpp
# (the exposition format) and civetweb (the HTTP listener); without them the observability
# libraries are not built and the flag is refused with a one-line error. PNG plots need cairo;
# without it `tuned db plot` writes SVG only.
find_package(prometheus-cpp CONFIG QUIET)
find_package(civetweb CONFIG QUIET)
set(_tuned_metrics_found OFF)
if(TARGET prometheus-cpp::core AND TARGET civetweb::civetweb)
  set(_tuned_metrics_found ON)
endif()
option(TUNED_ENABLE_METRICS "Build Prometheus metrics and the status page (prometheus-cpp-dev, libcivetweb-dev)" ${_tuned_metrics_found})
if(TUNED_ENABLE_METRICS AND NOT _tuned_metrics_found)
  message(FATAL_ERROR "TUNED_ENABLE_METRICS is ON but prometheus-cpp or civetweb was not found (install prometheus-cpp-dev libcivetweb-dev)")
endif()
if(TUNED_ENABLE_METRICS)
  message(STATUS "tuned: prometheus-cpp and civetweb ${civetweb_VERSION}: --metrics-listen and the status page build on")
else()
  message(STATUS "tuned: metrics off (install prometheus-cpp-dev libcivetweb-dev, or TUNED_ENABLE_METRICS=OFF): --metrics-listen is refused, its tests are skipped")
endif()
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(CAIRO QUIET IMPORTED_TARGET cairo)
endif()
option(TUNED_ENABLE_CAIRO "Draw PNG plots with cairo (libcairo2-dev)" ${CAIRO_FOUND})
if(TUNED_ENABLE_CAIRO AND NOT TARGET PkgConfig::CAIRO)
  message(FATAL_ERROR "TUNED_ENABLE_CAIRO is ON but cairo was not found (install libcairo2-dev)")
endif()
if(TUNED_ENABLE_CAIRO)
  message(STATUS "tuned: cairo ${CAIRO_VERSION}: `tuned db plot` writes PNG too")
else()
  message(STATUS "tuned: cairo off (install libcairo2-dev, or TUNED_ENABLE_CAIRO=OFF): `tuned db plot` writes SVG only")
endif()
