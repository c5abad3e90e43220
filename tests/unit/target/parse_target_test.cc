// The text form of targets: round trips, the canonical text of LLVM CPU targets (part of every
// tuning record's key), and one-line errors that name the offending option.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "target/target.h"
#include "target/target_proto.h"

namespace tuned::target {
namespace {

using ::testing::HasSubstr;

Target Parse(const std::string& text) {
  StatusOr<Target> target = ParseTarget(text);
  EXPECT_TRUE(target.ok()) << text << ": " << target.status().message();
  return target.ok() ? *target : Target{};
}

void ExpectInvalid(const std::string& text, const std::string& message) {
  StatusOr<Target> target = ParseTarget(text);
  ASSERT_FALSE(target.ok()) << text;
  EXPECT_EQ(target.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(target.status().message(), HasSubstr("target '" + text + "'"));
  EXPECT_THAT(target.status().message(), HasSubstr(message));
  EXPECT_EQ(target.status().message().find('\n'), std::string::npos);
}

TEST(ParseTarget, CanonicalLlvmCpuTextIsUnchanged) {
  // Texts as earlier versions stored them in tuning records: they must print back byte for byte.
  for (const char* text : {"llvm -mcpu=generic -num-cores=1", "llvm -mcpu=znver3 -num-cores=2",
                           "llvm -mcpu=znver3 -mattr=-fma -num-cores=4",
                           "llvm -mcpu=skylake -mattr=+avx512f,-fma -num-cores=8",
                           "llvm -mtriple=aarch64-unknown-linux-gnu -mcpu=neoverse-n1 -num-cores=1"}) {
    EXPECT_EQ(Parse(text).ToString(), text);
  }
}

TEST(ParseTarget, ReadsEveryLlvmCpuAttribute) {
  Target t = Parse("llvm -mtriple=aarch64-unknown-linux-gnu -mcpu=neoverse-n1 -mattr=+sve -num-cores=3");
  EXPECT_EQ(t.kind, TargetKind::kLlvmCpu);
  EXPECT_EQ(t.triple, "aarch64-unknown-linux-gnu");
  EXPECT_EQ(t.cpu, "neoverse-n1");
  EXPECT_EQ(t.features, (std::vector<std::string>{"+sve"}));
  EXPECT_EQ(t.num_cores, 3);
}

TEST(ParseTarget, DefaultsAndOptionOrder) {
  Target plain = Parse("llvm");
  EXPECT_EQ(plain.triple, "");  // the host's
  EXPECT_EQ(plain.cpu, "generic");
  EXPECT_EQ(plain.num_cores, 1);
  EXPECT_EQ(plain.ToString(), "llvm -mcpu=generic -num-cores=1");
  // Any order in, one order out; features sorted by name, the last mention of a name wins.
  Target shuffled = Parse("llvm  -num-cores=4 -mattr=+fma,-avx2 -mcpu=znver3 -mattr=+avx2,+bmi2");
  EXPECT_EQ(shuffled.ToString(), "llvm -mcpu=znver3 -mattr=+avx2,+bmi2,+fma -num-cores=4");
  EXPECT_EQ(shuffled.FeatureString(), "+avx2,+bmi2,+fma");
}

TEST(ParseTarget, PrintThenParseGivesTheSameTarget) {
  for (const char* text : {"llvm -num-cores=16 -mcpu=znver4 -mattr=-avx512f",
                           "cuda -arch=sm_80 -max-threads-per-block=256",
                           "cuda -warp-size=32 -arch=sm_90 -max-shared-memory-per-block=100000"}) {
    Target first = Parse(text);
    Target again = Parse(first.ToString());
    EXPECT_EQ(again, first) << text;
    EXPECT_EQ(again.ToString(), first.ToString());
  }
}

TEST(ParseTarget, ErrorsNameTheBadOption) {
  ExpectInvalid("llvm -mattr=avx2", "feature 'avx2' must start with + or -");
  EXPECT_EQ(Parse("llvm -mattr=+avx2,").features, std::vector<std::string>{"+avx2"});  // harmless
  ExpectInvalid("llvm -mattr=,+avx2", "feature '' must start with + or -");
  ExpectInvalid("llvm -num-cores=0", "-num-cores: '0' is not a positive integer");
  ExpectInvalid("llvm -num-cores=two", "'two' is not a positive integer");
  ExpectInvalid("llvm -num-cores=5000", "-num-cores: 5000 is outside [1, 4096]");
  ExpectInvalid("llvm -opt-level=3", "unknown option '-opt-level'");
  ExpectInvalid("llvm -mcpu", "option '-mcpu' needs a value");
  ExpectInvalid("llvm -mcpu=", "option '-mcpu=' needs a value");
}

TEST(ParseTarget, UnknownKindsAreRefused) {
  ExpectInvalid("tpu -v=4", "unknown kind 'tpu' (expected llvm, cuda or opencl)");
  ExpectInvalid("llvmx -mcpu=znver3", "unknown kind 'llvmx'");
  ExpectInvalid("cudax -arch=sm_90", "unknown kind 'cudax'");
  ExpectInvalid("", "empty");
}

// Found by fuzz_target_string: a quoted LLVM value with a space, or a NUL byte, was accepted,
// and its canonical text did not parse again.
TEST(ParseTarget, CanonicalTextAlwaysParsesAgain) {
  ExpectInvalid("llvm -mattr=\"+avx2, -fma\"", "-mattr: '+avx2, -fma' may not contain spaces");
  ExpectInvalid("llvm -mcpu=\"znver3 -x\"", "-mcpu: 'znver3 -x' may not contain spaces");
  StatusOr<Target> nul = ParseTarget(std::string("llvm -mcpu=znver3\0", 18));
  ASSERT_FALSE(nul.ok());
  EXPECT_EQ(nul.status().message(),
            "target 'llvm -mcpu=znver3?': byte 0x00 at offset 17 is not a printable ASCII character");
  StatusOr<Target> high = ParseTarget("llvm -mcpu=zn\x8cver3");
  ASSERT_FALSE(high.ok());
  EXPECT_THAT(high.status().message(), HasSubstr("byte 0x8c at offset 13"));
  // A device name may hold spaces: printed quoted, it parses to the same target.
  Target device = Parse("opencl -device=\"pthread-AMD EPYC\"");
  EXPECT_EQ(Parse(device.ToString()), device);
}

TEST(ParseTarget, KindReachesTheWire) {
  EXPECT_EQ(TargetToProto(Parse("llvm -mcpu=znver3")).kind(), v1::TARGET_KIND_LLVM_CPU);
  EXPECT_EQ(TargetToProto(Parse("llvm -mcpu=znver3")).target(), "llvm -mcpu=znver3 -num-cores=1");
  EXPECT_EQ(TargetToProto(Parse("cuda -arch=sm_90")).kind(), v1::TARGET_KIND_CUDA);
}

}  // namespace
}  // namespace tuned::target
