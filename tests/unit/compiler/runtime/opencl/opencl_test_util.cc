#include "tests/unit/compiler/runtime/opencl/opencl_test_util.h"

namespace tuned::opencl {

std::unique_ptr<Device> OpenTestDevice(const std::string& target_text, std::string& skip_reason) {
  StatusOr<target::Target> target = target::ParseTarget(target_text);
  EXPECT_TRUE(target.ok()) << target.status().message();
  if (!target.ok()) {
    skip_reason = target.status().message();
    return nullptr;
  }
  StatusOr<std::unique_ptr<Device>> device = Device::Open(*target);
  if (device.ok()) return std::move(*device);
  // Only a missing platform is a reason to skip; any other failure is a test failure.
  EXPECT_EQ(device.status().code(), StatusCode::kUnavailable) << device.status().message();
  skip_reason = device.status().message() + "; scripts/setup.sh installs it";
  return nullptr;
}

}  // namespace tuned::opencl
