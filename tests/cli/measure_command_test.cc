// `tuned measure` on the real binary: exit codes, text and --json output.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "compiler/schedule/trace.h"
#include "tests/cli/run_tuned.h"
#include "tests/unit/worker/worker_test_util.h"

namespace tuned::worker {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using Output = tuned::testing::CommandOutput;

class MeasureCommandTest : public tuned::testing::ScratchDirTest {
 protected:

  Output Run(const std::string& args) { return tuned::testing::RunTuned("measure " + args); }
};

TEST_F(MeasureCommandTest, DefaultScheduleSucceedsWithText) {
  Output run = Run("--workload 'matmul(M=16,N=16,K=16)' --repeat 3 --min-repeat-ms 1");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("status    OK"));
  EXPECT_THAT(run.out, HasSubstr("median"));
  EXPECT_THAT(run.out, HasSubstr("matmul(M=16,N=16,K=16,dtype=float32)"));
  EXPECT_THAT(run.out, HasSubstr("protocol  v2"));
  EXPECT_THAT(run.out, HasSubstr("flush_cache=auto"));
  EXPECT_THAT(run.out, Not(HasSubstr("after a cache flush")));  // 3 KiB of buffers stay warm
}

TEST_F(MeasureCommandTest, FlushCacheTimesEveryRunCold) {
  Output run = Run("--workload 'matmul(M=16,N=16,K=16)' --repeat 3 --min-repeat-ms 1 --flush-cache");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("flush_cache=true"));
  EXPECT_THAT(run.out, HasSubstr("(3 repeats of 1 runs, each after a cache flush)"));

  Output both = Run("--workload 'matmul(M=16,N=16,K=16)' --flush-cache --no-flush-cache");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("--flush-cache and --no-flush-cache exclude each other"));
}

TEST_F(MeasureCommandTest, JsonCarriesTheResultAndTheProtocol) {
  const std::string spec = "matmul(M=32,N=16,K=8,dtype=float32)";
  const std::string trace = WriteFile("trace.json", schedule::TraceToJson(testing::TiledTrace(spec)));
  Output run = Run("--workload '" + spec + "' --trace " + trace +
                   " --repeat 4 --min-repeat-ms 1 --seed 3 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json out = nlohmann::json::parse(run.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(out.is_discarded()) << run.out;
  EXPECT_EQ(out["workload"], spec);
  EXPECT_THAT(out["target"].get<std::string>(), HasSubstr("llvm"));
  EXPECT_EQ(out["config"]["protocol_version"], 2);
  EXPECT_EQ(out["config"]["repeat"], 4);
  EXPECT_EQ(out["config"]["seed"], "3");  // uint64 is a string in protobuf JSON
  EXPECT_EQ(out["result"]["status"], "MEASURE_STATUS_OK");
  EXPECT_EQ(out["result"]["repeat_seconds"].size(), 4u);
  EXPECT_GT(out["result"]["median_seconds"].get<double>(), 0);
  EXPECT_FALSE(out["result"]["device"]["model"].get<std::string>().empty());
}

TEST_F(MeasureCommandTest, SeveralTracesAreTimedTogetherAndComparedWithTheFastest) {
  const std::string spec = "matmul(M=32,N=16,K=8,dtype=float32)";
  const std::string tiled = WriteFile("tiled.json", schedule::TraceToJson(testing::TiledTrace(spec)));
  const std::string plain = WriteFile("plain.json", schedule::TraceToJson(schedule::Trace{}));
  const std::string flags = "--workload '" + spec + "' --trace " + tiled + " --trace " + plain +
                            " --repeat 4 --min-repeat-ms 1";
  Output json = Run(flags + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json out = nlohmann::json::parse(json.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(out.is_discarded()) << json.out;
  ASSERT_EQ(out["results"].size(), 2u) << json.out;
  EXPECT_EQ(out["results"][0]["trace"], tiled);
  EXPECT_EQ(out["results"][1]["trace"], plain);
  for (const nlohmann::json& entry : out["results"]) {
    EXPECT_EQ(entry["result"]["status"], "MEASURE_STATUS_OK");
    EXPECT_EQ(entry["result"]["repeat_seconds"].size(), 4u);
  }
  EXPECT_FALSE(out.contains("result"));

  Output text = Run(flags);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("trace     " + tiled));
  EXPECT_THAT(text.out, HasSubstr("trace     " + plain));
  EXPECT_THAT(text.out, HasSubstr("interleaved: each trace's median / the fastest's"));
  EXPECT_THAT(text.out, HasSubstr("   1.000  "));  // the fastest against itself
}

TEST_F(MeasureCommandTest, AFailingTraceAmongSeveralExitsOneNamingIt) {
  const std::string spec = "matmul(M=16,N=16,K=16)";
  schedule::Trace bad;
  bad.instructions.push_back({schedule::InstKind::kGetBlock, {}, {}, {}, {"missing"}, {0}});
  const std::string broken = WriteFile("broken.json", schedule::TraceToJson(bad));
  const std::string plain = WriteFile("plain.json", schedule::TraceToJson(schedule::Trace{}));
  Output run = Run("--workload '" + spec + "' --trace " + plain + " --trace " + broken);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.out, HasSubstr("status    OK"));  // the other trace's result is printed
  EXPECT_THAT(run.err, HasSubstr(broken));
  EXPECT_THAT(run.err, HasSubstr("COMPILE_ERROR"));
}

TEST_F(MeasureCommandTest, CandidateFailureExitsOneAndStillPrintsTheResult) {
  schedule::Trace bad;
  bad.instructions.push_back({schedule::InstKind::kGetBlock, {}, {}, {}, {"missing"}, {0}});
  const std::string trace = WriteFile("bad.json", schedule::TraceToJson(bad));
  Output run = Run("--workload 'matmul(M=16,N=16,K=16)' --trace " + trace + " --json");
  EXPECT_EQ(run.exit_code, 1);
  nlohmann::json out = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(out.is_discarded()) << run.out;
  EXPECT_EQ(out["result"]["status"], "MEASURE_STATUS_COMPILE_ERROR");
  EXPECT_THAT(out["result"]["error"].get<std::string>(), HasSubstr("missing"));
  EXPECT_THAT(run.err, HasSubstr("COMPILE_ERROR"));
}

TEST_F(MeasureCommandTest, BadInputExitsTwoWithAOneLineReason) {
  Output bad_spec = Run("--workload 'matmul(M=0,N=1,K=1)'");
  EXPECT_EQ(bad_spec.exit_code, 2);
  EXPECT_THAT(bad_spec.err, HasSubstr("tuned: "));
  EXPECT_THAT(bad_spec.err, HasSubstr("M"));

  Output no_file = Run("--workload 'matmul(M=4,N=4,K=4)' --trace " + dir_ + "/absent.json");
  EXPECT_EQ(no_file.exit_code, 2);
  EXPECT_THAT(no_file.err, HasSubstr("absent.json"));

  const std::string garbage = WriteFile("garbage.json", "{not json");
  Output bad_trace = Run("--workload 'matmul(M=4,N=4,K=4)' --trace " + garbage);
  EXPECT_EQ(bad_trace.exit_code, 2);
  EXPECT_THAT(bad_trace.err, HasSubstr("garbage.json"));

  Output missing_flag = Run("");
  EXPECT_EQ(missing_flag.exit_code, 2);
}

TEST_F(MeasureCommandTest, UnknownTargetIsRefused) {
  Output run = Run("--workload 'matmul(M=4,N=4,K=4)' --target 'llvm -mcpu=bogus'");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.err, HasSubstr("bogus"));
}

}  // namespace
}  // namespace tuned::worker
