# Instrumented builds: TUNED_SANITIZE for the sanitizer suites (scripts/sanitize.sh) and
# TUNED_FUZZ for the libFuzzer targets (scripts/fuzz.sh). Flags go on every target of the
# build folder, so a bug in any library the code under test calls is caught where it happens.

set(_tuned_sanitize "${TUNED_SANITIZE}")
if(TUNED_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "TUNED_FUZZ needs clang (libFuzzer): configure with CXX=clang++ CC=clang")
  endif()
  if(_tuned_sanitize STREQUAL "")
    set(_tuned_sanitize "address,undefined")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(NOT _tuned_sanitize STREQUAL "")
  # Stop at the first undefined behaviour (UBSan otherwise prints and carries on), and keep
  # frames for readable reports.
  set(_tuned_sanitize_flags -fsanitize=${_tuned_sanitize} -fno-omit-frame-pointer)
  if(_tuned_sanitize MATCHES "undefined")
    list(APPEND _tuned_sanitize_flags -fno-sanitize-recover=undefined)
    # From clang 17 the function-type check reads a signature in the 8 bytes before every callee
    # of an indirect call. Kernels LLVM compiles at run time have none, and one that starts a
    # JIT page would make that read fault: the check is off for them all.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 17)
      list(APPEND _tuned_sanitize_flags -fno-sanitize=function)
    endif()
  endif()
  add_compile_options(${_tuned_sanitize_flags})
  add_link_options(${_tuned_sanitize_flags})
endif()
