// User-defined workloads on the real binary: `--workload-file` for lower, tune, db best/show and
// compile; the definition language's one-line errors with exit code 2; five user operators tuned
// end to end with every record verified; a kernel compiled by another process from the log alone
// that matches the reference evaluator.

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <memory>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "compiler/ir/evaluator.h"
#include "compiler/ir/tdl/definition.h"
#include "tests/cli/run_tuned.h"

namespace tuned {
namespace {

using ::testing::HasSubstr;
using Output = tuned::testing::CommandOutput;

std::string Example(const std::string& name) {
  return std::string(TUNED_SOURCE_DIR) + "/examples/tdl/" + name;
}

using WorkloadFileTest = tuned::testing::ScratchDirTest;

TEST_F(WorkloadFileTest, LowerPrintsTheDefinitionKeyWithParametersBound) {
  Output out = tuned::testing::RunTuned("lower --workload-file " + Example("matmul_transposed.tdl") +
                                        " --param M=16 --param N=8 --json");
  ASSERT_EQ(out.exit_code, 0) << out.err;
  nlohmann::json json = nlohmann::json::parse(out.out);
  const std::string key = json["key"];
  EXPECT_EQ(key, "tdl: input A: float32[32, 16]; input B: float32[8, 32]; "
                 "C[i: 16, j: 8]: float32 = sum[ri: 32](A[ri, i] * B[j, ri])");
  EXPECT_EQ(json["flops"].get<double>(), 2.0 * 16 * 8 * 32);
  // The key itself names the workload wherever a spec is taken.
  Output again = tuned::testing::RunTuned("lower --workload '" + key + "' --json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out)["program"], json["program"]);
}

struct ErrorCase {
  const char* file;
  const char* message;  // after "tuned: <path>:"
};

TEST_F(WorkloadFileTest, ErrorsAreOneLineWithPositionAndExitCodeTwo) {
  const ErrorCase cases[] = {
      {"input A: float32[4]\nB[i: 4] = Q[i]\n",
       "2:11: unknown tensor 'Q'; expected one of the tensors defined before (A)"},
      {"input A: float32[4, 4]\nB[i: 4] = A[i, i, i]\n",
       "2:19: index out of the declared rank: 'A' has 2 dimensions; expected ']'"},
      {"input A: float32[4]\nB[i: 4] = select(k > 0, 1.0, sum[k: 4](A[k]))\n",
       "2:18: reduction axis 'k' used outside its reduction; expected it inside sum[...](...)"},
      {"input A: float32[4]\ninput B: int8[4]\nC[i: 4] = A[i] * B[i]\n",
       "3:11: dtype mismatch: operands of '*' are float32 and int8; expected one dtype (cast one "
       "side, e.g. float32(...))"},
      {"param N = 4\ninput A: float32[N - 4]\nB[i: 4] = A[i]\n",
       "2:18: the dimension 0 of 'A' is 0, which makes the buffer empty; expected an extent of at "
       "least 1"},
      {"input A: float32[65536, 65536]\nB[i: 4] = A[i, i]\n",
       "1:7: buffer 'A' needs 17179869184 bytes; expected at most 2147483648"},
  };
  int n = 0;
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.file);
    const std::string path = WriteFile("bad" + std::to_string(n++) + ".tdl", c.file);
    for (const char* command : {"lower", "tune --trials 1 --db " , "compile -o x.so --db "}) {
      std::string args = std::string(command);
      if (args.back() == ' ') args += dir_ + "/unused.db";
      Output out = tuned::testing::RunTuned(args + " --workload-file " + path);
      EXPECT_EQ(out.exit_code, 2) << command << ": " << out.all();
      EXPECT_EQ(out.err, "tuned: " + path + ":" + c.message + "\n") << command;
    }
  }
  Output unknown = tuned::testing::RunTuned("lower --workload-file " + Example("gelu_matmul.tdl") +
                                            " --param Q=3");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("--param Q=3: no parameter 'Q'; expected one of M, N, K"));
  Output both = tuned::testing::RunTuned("lower --workload 'add(M=2,N=2)' --workload-file " +
                                         Example("gelu_matmul.tdl"));
  EXPECT_EQ(both.exit_code, 2);
}

// Runs `tuned tune` on a definition and checks that every record was measured and verified.
nlohmann::json TuneAndCheckRecords(const std::string& file, const std::string& params,
                                   const std::string& db, int trials) {
  Output tune = tuned::testing::RunTuned("tune --workload-file " + file + params + " --trials " +
                                         std::to_string(trials) +
                                         // A loaded machine must not turn a slow build into a
                                         // TIMEOUT record: every record here is to be verified.
                                         " --repeat 2 --min-repeat-ms 0 --build-timeout-ms 300000"
                                         " --db " + db + " --json");
  EXPECT_EQ(tune.exit_code, 0) << tune.all();
  if (tune.exit_code != 0) return {};
  nlohmann::json summary = nlohmann::json::parse(tune.out);
  EXPECT_EQ(summary["state"], "SUCCEEDED") << summary.dump();
  EXPECT_EQ(summary["trials_done"].get<int>(), trials);
  EXPECT_EQ(summary["workload"].get<std::string>().rfind("tdl: ", 0), 0u);
  Output exported = tuned::testing::RunTuned("db export --db " + db);
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  std::istringstream lines(exported.out);
  std::string line;
  int records = 0;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    nlohmann::json record = nlohmann::json::parse(line);
    if (record["workload"]["key"] != summary["workload"]) continue;
    ++records;
    EXPECT_EQ(record["result"]["status"], "MEASURE_STATUS_OK") << record["result"].dump();
  }
  EXPECT_GE(records, trials);
  return summary;
}

TEST_F(WorkloadFileTest, FiveUserOperatorsTuneEndToEndWithEveryRecordVerified) {
  // Small shapes keep the 5 x 32 trials fast; the examples' defaults are larger.
  const std::pair<const char*, const char*> operators[] = {
      {"gelu_matmul.tdl", " --param M=16 --param N=16 --param K=8"},
      {"layer_norm.tdl", " --param M=8 --param N=16"},
      {"conv2d_residual_relu.tdl", " --param C=2 --param H=6 --param W=6"},
      {"attention_scores.tdl", " --param S=8 --param D=8"},
      {"matmul_transposed.tdl", " --param M=16 --param N=8 --param K=8"}};
  for (const auto& [name, params] : operators) {
    SCOPED_TRACE(name);
    const std::string db = dir_ + "/" + name + ".db";
    TuneAndCheckRecords(Example(name), params, db, 32);
    // `db best` and `db show` find it from the same file; show prints the definition back.
    const std::string file = " --workload-file " + Example(name) + params;
    Output best = tuned::testing::RunTuned("db best --db " + db + file);
    EXPECT_EQ(best.exit_code, 0) << best.all();
    Output show = tuned::testing::RunTuned("db show --db " + db + file);
    ASSERT_EQ(show.exit_code, 0) << show.all();
    EXPECT_THAT(show.out, HasSubstr("op          tdl"));
    EXPECT_THAT(show.out, HasSubstr("definition\n  input "));
    EXPECT_THAT(show.out, HasSubstr("[i: ")) << "the definition is printed in the language";
  }
}

TEST_F(WorkloadFileTest, TunedLogCompilesInAnotherProcessAndMatchesTheReference) {
  const std::string db = dir_ + "/tuned.db";
  const std::string file = Example("gelu_matmul.tdl");
  const std::string params = " --param M=24 --param N=16 --param K=8";
  TuneAndCheckRecords(file, params, db, 8);

  // Another process, with only the log: it rebuilds the workload from the same definition.
  const std::string so = dir_ + "/gelu.so";
  Output compiled = tuned::testing::RunTuned("compile --workload-file " + file + params + " --db " +
                                             db + " -o " + so + " --json");
  ASSERT_EQ(compiled.exit_code, 0) << compiled.all();
  nlohmann::json out = nlohmann::json::parse(compiled.out);
  EXPECT_TRUE(out["from_record"].get<bool>()) << out.dump();

  ir::DefinitionOptions options;
  options.params = {{"M", "24"}, {"N", "16"}, {"K", "8"}};
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  StatusOr<ir::Workload> workload = ir::ParseDefinition(text.str(), options);
  ASSERT_TRUE(workload.ok()) << workload.status().message();
  EXPECT_EQ(out["workload"], workload->key());

  void* library = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  using Kernel = void (*)(const float*, const float*, float*);
  auto kernel = reinterpret_cast<Kernel>(dlsym(library, "tuned_kernel"));
  ASSERT_NE(kernel, nullptr) << dlerror();
  // Generated code assumes 64-byte aligned buffers.
  auto aligned = [](size_t count) {
    return std::unique_ptr<float[], decltype(&std::free)>(
        static_cast<float*>(std::aligned_alloc(64, (count * sizeof(float) + 63) / 64 * 64)), &std::free);
  };
  auto inputs = ir::RandomInputs(*workload, 7);
  std::vector<std::unique_ptr<float[], decltype(&std::free)>> args;
  for (const ir::Buffer& b : workload->inputs()) {
    const std::vector<double>& values = inputs.at(b->name);
    args.push_back(aligned(values.size()));
    std::copy(values.begin(), values.end(), args.back().get());
  }
  const size_t count = size_t(workload->output_stage().output->num_elements());
  auto result = aligned(count);
  kernel(args[0].get(), args[1].get(), result.get());
  dlclose(library);

  auto reference = ir::EvaluateReference(*workload, inputs);
  ASSERT_TRUE(reference.ok()) << reference.status().message();
  const std::vector<double>& expected = reference->at(workload->output_stage().name);
  std::vector<double> actual(result.get(), result.get() + count);
  EXPECT_LE(ir::MaxRelativeError(actual, expected), ir::ToleranceFor(ir::DataType::Float32()));
}

}  // namespace
}  // namespace tuned
