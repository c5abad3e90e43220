// Target strings: host detection, parsing, canonical form, and one-line errors naming the bad
// option.

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler/codegen/llvm/cpu_target.h"
#include "compiler/codegen/llvm/llvm_jit.h"

namespace tuned::codegen {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

bool HostCpuInfoHas(const std::string& flag) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      if (word == flag) return true;
    }
    return false;
  }
  return false;
}

void ExpectInvalid(const std::string& text, const std::string& message) {
  StatusOr<target::Target> target = ParseCpuTarget(text);
  ASSERT_FALSE(target.ok()) << text;
  EXPECT_EQ(target.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(target.status().message(), HasSubstr(message));
  EXPECT_EQ(target.status().message().find('\n'), std::string::npos);
}

TEST(CpuTarget, HostRendersCpuAndCoresAndRoundTrips) {
  StatusOr<target::Target> host = HostCpuTarget();
  ASSERT_TRUE(host.ok()) << host.status().message();
  EXPECT_THAT(host->ToString(), StartsWith("llvm -mcpu=" + host->cpu));
  EXPECT_THAT(host->ToString(), HasSubstr("-num-cores=" + std::to_string(host->num_cores)));
  EXPECT_GE(host->num_cores, 1);
  StatusOr<target::Target> parsed = ParseCpuTarget(host->ToString());
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(*parsed, *host);
  EXPECT_TRUE(CheckRunnableOnHost(*host).ok());
}

TEST(CpuTarget, CanonicalFormDropsDefaultFeaturesAndOrdersOptions) {
  StatusOr<target::Target> target =
      ParseCpuTarget("llvm -num-cores=4 -mattr=+avx2,-fma,-avx512f -mcpu=znver3");
  ASSERT_TRUE(target.ok()) << target.status().message();
  // znver3 has AVX2 and no AVX-512 already; only -fma is a difference.
  EXPECT_EQ(target->ToString(), "llvm -mcpu=znver3 -mattr=-fma -num-cores=4");
  StatusOr<target::Target> plain = ParseCpuTarget("llvm");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->ToString(), "llvm -mcpu=generic -num-cores=1");
}

TEST(CpuTarget, CrossTripleIsPrinted) {
  StatusOr<target::Target> target = ParseCpuTarget("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1");
  ASSERT_TRUE(target.ok()) << target.status().message();
  EXPECT_THAT(target->ToString(), StartsWith("llvm -mtriple=aarch64-unknown-linux-gnu -mcpu=neoverse-n1"));
  Status runnable = CheckRunnableOnHost(*target);
  EXPECT_EQ(runnable.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(runnable.message(), HasSubstr("cannot run on this"));
  EXPECT_EQ(LlvmJit::Create(*target).status().code(), StatusCode::kFailedPrecondition);
}

TEST(CpuTarget, ErrorsNameTheBadOption) {
  ExpectInvalid("llvm -mcpu=notacpu", "unknown cpu 'notacpu' for ");
  ExpectInvalid("llvm -mcpu=znver3 -mattr=+notafeature", "unknown feature 'notafeature'");
  ExpectInvalid("llvm -mattr=avx2", "feature 'avx2' must start with + or -");
  ExpectInvalid("llvm -num-cores=0", "-num-cores: '0' is not a positive integer");
  ExpectInvalid("llvm -num-cores=two", "'two' is not a positive integer");
  ExpectInvalid("llvm -opt-level=3", "unknown option '-opt-level'");
  ExpectInvalid("llvm -mcpu", "option '-mcpu' needs a value");
  ExpectInvalid("cuda -arch=sm_80", "must start with 'llvm', found 'cuda'");
  ExpectInvalid("llvm -mtriple=nonsense-arch-none", "unknown triple");
}

TEST(CpuTarget, ExplicitHostTripleIsDropped) {
  const std::string host_triple = LlvmTriple(target::Target{});
  StatusOr<target::Target> target = ParseCpuTarget("llvm -mtriple=" + host_triple + " -mcpu=znver3");
  ASSERT_TRUE(target.ok()) << target.status().message();
  EXPECT_EQ(target->triple, "");
  EXPECT_EQ(target->ToString(), "llvm -mcpu=znver3 -num-cores=1");
  EXPECT_EQ(LlvmTriple(*target), host_triple);
}

TEST(CpuTarget, LlvmChecksRunOnTheParsedTarget) {
  StatusOr<target::Target> parsed = target::ParseTarget("llvm -mcpu=znver3 -mattr=+avx2,-fma");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->features, (std::vector<std::string>{"+avx2", "-fma"}));  // syntax only
  StatusOr<target::Target> checked = ValidateLlvmCpuTarget(*parsed);
  ASSERT_TRUE(checked.ok()) << checked.status().message();
  EXPECT_EQ(checked->features, std::vector<std::string>{"-fma"});  // +avx2 is znver3's default
  EXPECT_EQ(*ValidateLlvmCpuTarget(*checked), *checked);

  StatusOr<target::Target> gpu = target::ParseTarget("cuda -arch=sm_90");
  ASSERT_TRUE(gpu.ok());
  StatusOr<target::Target> refused = ValidateLlvmCpuTarget(*gpu);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("must start with 'llvm', found 'cuda'"));
  EXPECT_EQ(CheckRunnableOnHost(*gpu).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(LlvmJit::Create(*gpu).status().code(), StatusCode::kFailedPrecondition);
}

TEST(CpuTarget, MissingHostFeaturesAreNamed) {
  StatusOr<target::Target> host = HostCpuTarget();
  ASSERT_TRUE(host.ok());
  // The host's own target with AVX-512 asked for: the host's "-feature"s stay, since a VM may
  // report a CPU name (sapphirerapids) whose defaults it lacks (AMX, ...).
  target::Target wanted = *host;
  std::erase(wanted.features, std::string("-avx512f"));
  wanted.features.push_back("+avx512f");
  StatusOr<target::Target> wants_avx512 = ParseCpuTarget(wanted.ToString());
  ASSERT_TRUE(wants_avx512.ok()) << wants_avx512.status().message();
  Status status = CheckRunnableOnHost(*wants_avx512);
  if (HostCpuInfoHas("avx512f")) {
    EXPECT_TRUE(status.ok()) << status.message();
  } else {
    EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
    EXPECT_THAT(status.message(), HasSubstr("avx512f"));
  }
}

}  // namespace
}  // namespace tuned::codegen
