// The device of an opencl target: the first one, one by name, limits from the device.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/compiler/runtime/opencl/opencl_test_util.h"

namespace tuned::opencl {
namespace {

using ::testing::HasSubstr;

TEST(OpenclDevice, BareTargetIsTheFirstDeviceWithItsOwnLimits) {
  TUNED_OPEN_OPENCL_OR_SKIP(device, "opencl");
  const DeviceInfo& info = device->info();
  EXPECT_FALSE(info.platform.empty());
  EXPECT_FALSE(info.name.empty());
  EXPECT_GE(info.compute_units, 1);
  EXPECT_GE(info.max_work_group_size, 1);
  EXPECT_GE(info.local_memory_bytes, 16 * 1024);  // OpenCL 1.2's minimum for a full profile
  EXPECT_GE(info.sub_group_size, 1);
  const target::OpenclAttributes& resolved = device->target().opencl;
  EXPECT_EQ(resolved.device, info.name);
  EXPECT_EQ(resolved.max_work_group_size, info.max_work_group_size);
  EXPECT_EQ(resolved.local_memory_bytes, info.local_memory_bytes);
  EXPECT_EQ(resolved.sub_group_size, info.sub_group_size);

  // The resolved text names the device and parses back to the same target.
  StatusOr<target::Target> again = target::ParseTarget(device->target().ToString());
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(*again, device->target());
  StatusOr<target::Target> resolved_again = ResolveTarget(*again);
  ASSERT_TRUE(resolved_again.ok()) << resolved_again.status().message();
  EXPECT_EQ(*resolved_again, device->target());
}

TEST(OpenclDevice, LowerLimitsAreKeptHigherOnesRefused) {
  TUNED_OPEN_OPENCL_OR_SKIP(device, "opencl");
  const DeviceInfo& info = device->info();
  StatusOr<target::Target> lower = ResolveTarget(*target::ParseTarget(
      "opencl -max-work-group-size=64 -local-memory-bytes=4096"));
  ASSERT_TRUE(lower.ok()) << lower.status().message();
  EXPECT_EQ(lower->opencl.max_work_group_size, 64);
  EXPECT_EQ(lower->opencl.local_memory_bytes, 4096);

  std::string too_many = "opencl -max-work-group-size=" + std::to_string(info.max_work_group_size * 2);
  StatusOr<target::Target> refused = ResolveTarget(*target::ParseTarget(too_many));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("exceeds the " + std::to_string(info.max_work_group_size) + " of OpenCL device"));

  std::string wrong_width = "opencl -sub-group-size=" + std::to_string(info.sub_group_size + 1);
  refused = ResolveTarget(*target::ParseTarget(wrong_width));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("-sub-group-size="));
}

TEST(OpenclDevice, DeviceIsFoundByNameAndUnknownNamesListTheDevices) {
  TUNED_OPEN_OPENCL_OR_SKIP(first, "opencl");
  target::Target by_name = first->target();
  StatusOr<std::unique_ptr<Device>> named = Device::Open(by_name);
  ASSERT_TRUE(named.ok()) << named.status().message();
  EXPECT_EQ((*named)->info().name, first->info().name);

  StatusOr<std::unique_ptr<Device>> missing = Device::Open(*target::ParseTarget("opencl -device=no-such-gpu"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("no OpenCL device is named 'no-such-gpu'"));
  EXPECT_THAT(missing.status().message(), HasSubstr("'" + first->info().name + "'"));
}

TEST(OpenclDevice, OtherTargetKindsAreRefused) {
  StatusOr<std::unique_ptr<Device>> device = Device::Open(*target::ParseTarget("cuda -arch=sm_90"));
  ASSERT_FALSE(device.ok());
  EXPECT_THAT(device.status().message(), HasSubstr("needs an opencl target, not 'cuda"));
}

}  // namespace
}  // namespace tuned::opencl
