// OpenCL targets: the text form, quoted device names, limits left to the device, one-line errors.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "target/target.h"
#include "target/target_proto.h"

namespace tuned::target {
namespace {

using ::testing::HasSubstr;

TEST(OpenclTarget, BareKindLeavesDeviceAndLimitsToTheDevice) {
  StatusOr<Target> target = ParseTarget("opencl");
  ASSERT_TRUE(target.ok()) << target.status().message();
  EXPECT_EQ(target->kind, TargetKind::kOpencl);
  EXPECT_EQ(target->opencl, OpenclAttributes{});  // 0 / empty: the device's own
  EXPECT_EQ(target->ToString(), "opencl");
  EXPECT_EQ(target->Fp32VectorLanes(), 1);
  EXPECT_EQ(TargetToProto(*target).kind(), v1::TARGET_KIND_OPENCL);
}

TEST(OpenclTarget, LimitsParseInAnyOrderAndPrintCanonically) {
  StatusOr<Target> target = ParseTarget(
      "opencl -sub-group-size=8 -local-memory-bytes=65536 -max-work-group-size=256 -device=gfx90a");
  ASSERT_TRUE(target.ok()) << target.status().message();
  EXPECT_EQ(target->opencl.device, "gfx90a");
  EXPECT_EQ(target->opencl.max_work_group_size, 256);
  EXPECT_EQ(target->opencl.local_memory_bytes, 65536);
  EXPECT_EQ(target->opencl.sub_group_size, 8);
  EXPECT_EQ(target->ToString(),
            "opencl -device=gfx90a -max-work-group-size=256 -local-memory-bytes=65536 "
            "-sub-group-size=8");
  StatusOr<Target> again = ParseTarget(target->ToString());
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(*again, *target);
}

TEST(OpenclTarget, DeviceNamesWithSpacesRoundTripInQuotes) {
  StatusOr<Target> target = ParseTarget("opencl -device=\"pthread-haswell-AMD EPYC\"  -sub-group-size=8");
  ASSERT_TRUE(target.ok()) << target.status().message();
  EXPECT_EQ(target->opencl.device, "pthread-haswell-AMD EPYC");
  EXPECT_EQ(target->ToString(), "opencl -device=\"pthread-haswell-AMD EPYC\" -sub-group-size=8");
  StatusOr<Target> again = ParseTarget(target->ToString());
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(*again, *target);
}

TEST(OpenclTarget, ErrorsNameTheBadOption) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : {
           Case{"opencl -max-work-group-size=0", "-max-work-group-size: '0' is not a positive integer"},
           Case{"opencl -max-work-group-size=70000", "-max-work-group-size: 70000 is outside [1, 65536]"},
           Case{"opencl -local-memory-bytes=1k", "-local-memory-bytes: '1k' is not a positive integer"},
           Case{"opencl -sub-group-size=2048", "-sub-group-size: 2048 is outside [1, 1024]"},
           Case{"opencl -arch=sm_90", "unknown option '-arch' (expected -device, "},
           Case{"opencl -device=", "option '-device=' needs a value"},
           Case{"opencl -device=\"pthread cpu", "unterminated quote"},
       }) {
    StatusOr<Target> target = ParseTarget(c.text);
    ASSERT_FALSE(target.ok()) << c.text;
    EXPECT_EQ(target.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(target.status().message(), HasSubstr(std::string("target '") + c.text + "': "));
    EXPECT_THAT(target.status().message(), HasSubstr(c.message));
    EXPECT_EQ(target.status().message().find('\n'), std::string::npos);
  }
}

TEST(OpenclTarget, UnknownKindsNameOpenclAmongTheKnownOnes) {
  StatusOr<Target> target = ParseTarget("vulkan");
  ASSERT_FALSE(target.ok());
  EXPECT_THAT(target.status().message(), HasSubstr("(expected llvm, cuda or opencl)"));
}

}  // namespace
}  // namespace tuned::target
