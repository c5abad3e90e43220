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
  message(STATUS "tuned: CUDA ${CUDAToolkit_VERSION} in ${CUDAToolkit_LIBRARY_DIR}: NVRTC builds on")
else()
  message(STATUS "tuned: CUDA toolkit not found: tuned_codegen_cuda and tuned_nvrtc_bench are not built, their tests are skipped")
endif()
find_package(OpenCL QUIET)
option(TUNED_ENABLE_OPENCL "Build the OpenCL runner (needs ocl-icd-opencl-dev and opencl-headers)" ${OpenCL_FOUND})
if(TUNED_ENABLE_OPENCL AND NOT TARGET OpenCL::OpenCL)
  message(FATAL_ERROR "TUNED_ENABLE_OPENCL is ON but OpenCL was not found (install ocl-icd-opencl-dev opencl-headers)")
endif()
if(NOT TUNED_ENABLE_OPENCL)
  message(STATUS "tuned: OpenCL not found (install ocl-icd-opencl-dev opencl-headers): tuned_opencl is not built, its tests are skipped")
endif()
