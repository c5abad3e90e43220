// `tuned ops` on the real binary: it lists every op of the library with parameters that are
// enough to write a spec that parses.

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "compiler/ir/op_library.h"
#include "tests/cli/run_tuned.h"

namespace {

using tuned::testing::CommandOutput;
using tuned::testing::RunTuned;

TEST(TunedOps, ListsEveryOpOfTheLibrary) {
  CommandOutput out = RunTuned("ops --json");
  ASSERT_EQ(out.exit_code, 0) << out.all();
  nlohmann::json ops = nlohmann::json::parse(out.all());
  ASSERT_EQ(ops.size(), tuned::ir::OpLibrary().size());
  for (size_t i = 0; i < ops.size(); ++i) EXPECT_EQ(ops[i]["name"], tuned::ir::OpLibrary()[i].name);
}

TEST(TunedOps, RequiredParametersAreEnoughForASpecThatParses) {
  nlohmann::json ops = nlohmann::json::parse(RunTuned("ops --json").out);
  for (const nlohmann::json& op : ops) {
    std::string spec = op["name"].get<std::string>() + "(";
    bool first = true;
    for (const nlohmann::json& param : op["params"]) {
      if (!param["required"].get<bool>()) continue;
      std::string kind = param["kind"];
      std::string value = kind == "int" ? "8" : kind == "bool" ? "false" : kind == "dtype" ? "float32"
                                                                          : param["choices"][0].get<std::string>();
      spec += (first ? "" : ",") + param["name"].get<std::string>() + "=" + value;
      first = false;
    }
    spec += ")";
    auto parsed = tuned::ir::ParseWorkloadSpec(spec);
    EXPECT_TRUE(parsed.ok()) << spec << ": " << parsed.status().ToString();
  }
}

TEST(TunedOps, TextListingShowsDefaults) {
  CommandOutput out = RunTuned("ops");
  ASSERT_EQ(out.exit_code, 0) << out.all();
  EXPECT_NE(out.all().find("matmul"), std::string::npos) << out.all();
  EXPECT_NE(out.all().find("M:int"), std::string::npos) << out.all();
  EXPECT_NE(out.all().find("dtype:dtype=float32"), std::string::npos) << out.all();
}

}  // namespace
