# Install rules: `cmake --install build --prefix P` gives a tuned that works with no build tree.
#   P/bin/tuned, P/bin/tuned-worker          the command line and the measurement worker
#   P/bin/tuned-opencl-runner                the OpenCL runner the worker starts (with OpenCL)
#   P/bin/tuned-cuda-runner                  the CUDA runner the worker starts (with CUDA)
#   P/lib/libtuned_compiler.so               the compiler API <tuned/compiler.h>
#   P/lib/libtuned_runtime.a                 what `tuned compile -o k.o` objects call
#   P/include/tuned/...                      compiler.h and the headers it includes
#   P/lib/cmake/tuned/tunedConfig.cmake      find_package(tuned): tuned::compiler, tuned::runtime
#   P/lib/pkgconfig/tuned-runtime.pc         the link line for a `.o` kernel outside CMake
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS tuned tuned-worker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Beside tuned-worker, where the GPU engine looks for it (worker/gpu/gpu_engine.h).
foreach(runner tuned-opencl-runner tuned-cuda-runner)
  if(TARGET ${runner})
    install(TARGETS ${runner} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()
install(TARGETS tuned_compiler LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES $<TARGET_FILE:tuned_runtime> DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES compiler/reuse/include/tuned/compiler.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tuned)
# compiler.h includes "common/status.h": installed under include/tuned, which tuned::compiler
# puts on the include path beside include/.
install(FILES common/status.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tuned/common)

# What the runtime archive needs beside it at link time (set in compiler/CMakeLists.txt).
get_target_property(TUNED_RUNTIME_LINK_FLAGS_LIST tuned_runtime TUNED_LINK_FLAGS)
string(JOIN " " TUNED_RUNTIME_LINK_FLAGS ${TUNED_RUNTIME_LINK_FLAGS_LIST})
set(config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/tuned)
configure_package_config_file(cmake/tunedConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/tunedConfig.cmake
  INSTALL_DESTINATION ${config_dir}
  PATH_VARS CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/tunedConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tunedConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/tunedConfigVersion.cmake
        DESTINATION ${config_dir})

# pkg-config resolves ${pcfiledir}, so the .pc file stays right wherever the prefix is moved.
file(RELATIVE_PATH pc_to_prefix
  /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
configure_file(cmake/tuned-runtime.pc.in ${CMAKE_CURRENT_BINARY_DIR}/tuned-runtime.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tuned-runtime.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
