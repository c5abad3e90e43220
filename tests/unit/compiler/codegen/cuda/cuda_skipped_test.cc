// Built instead of the CUDA code generation tests where CMake found no CUDA toolkit: the tests
// are reported as skipped, not silently absent and not passing.

#include <gtest/gtest.h>

TEST(NvrtcBuild, NeedsTheCudaToolkit) {
  GTEST_SKIP() << "tuned was configured without the CUDA toolkit (NVRTC): tuned_codegen_cuda is "
                  "not built; install CUDA and reconfigure (TUNED_ENABLE_CUDA)";
}
