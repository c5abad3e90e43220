#ifndef TUNED_TESTS_UNIT_COMPILER_RUNTIME_OPENCL_OPENCL_TEST_UTIL_H_
#define TUNED_TESTS_UNIT_COMPILER_RUNTIME_OPENCL_OPENCL_TEST_UTIL_H_

// The OpenCL device the tests run on (PoCL here), or a skip naming why there is none.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "compiler/runtime/opencl/device.h"

namespace tuned::opencl {

/// Opens `target_text`'s device; nullptr when no OpenCL platform is installed, with the reason
/// in `skip_reason` (a test then calls GTEST_SKIP, so the run shows a skip, not a pass).
std::unique_ptr<Device> OpenTestDevice(const std::string& target_text, std::string& skip_reason);

}  // namespace tuned::opencl

#define TUNED_OPEN_OPENCL_OR_SKIP(device, target_text)                                     \
  std::string device##_skip_reason;                                                      \
  std::unique_ptr<::tuned::opencl::Device> device =                                      \
      ::tuned::opencl::OpenTestDevice(target_text, device##_skip_reason);                \
  if (device == nullptr) GTEST_SKIP() << device##_skip_reason

#endif  // TUNED_TESTS_UNIT_COMPILER_RUNTIME_OPENCL_OPENCL_TEST_UTIL_H_
