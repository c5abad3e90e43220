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

