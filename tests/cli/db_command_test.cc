// `tuned db ...` on the real binary: exit codes, parse-able --json output, error messages.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/run_tuned.h"
#include "tests/unit/tuning_db/db_test_util.h"

namespace tuned::db {
namespace {

using ::testing::HasSubstr;
using testing::kCpu;
using testing::kGpu;
using testing::MakeRecord;
using testing::MatmulKey;
using testing::TempDir;

using Output = tuned::testing::CommandOutput;

class DbCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_path_ = dir_.File("tuned.db");
    auto db = testing::OpenOrFail(db_path_);
    std::vector<v1::TuningRecord> batch = {
        MakeRecord(64, kCpu, 1, 0.004), MakeRecord(64, kCpu, 2, 0.002),
        MakeRecord(64, kCpu, 3, 0, v1::MEASURE_STATUS_TIMEOUT), MakeRecord(64, kGpu, 4, 0.0005),
        MakeRecord(128, kCpu, 5, 0, v1::MEASURE_STATUS_COMPILE_ERROR)};
    ASSERT_TRUE(db->InsertRecords(batch).ok());
  }

  Output Run(const std::string& args) { return tuned::testing::RunTuned(args); }

  std::string Db() const { return "--db " + db_path_; }

  static nlohmann::json Parse(const std::string& text) {
    nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(parsed.is_discarded()) << text;
    return parsed;
  }

  TempDir dir_;
  std::string db_path_;
};

TEST_F(DbCommandTest, ListPrintsTableWithTimesAndGflops) {
  Output out = Run("db list " + Db());
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_THAT(out.out, HasSubstr("KEY"));
  EXPECT_THAT(out.out, HasSubstr("GFLOP/S"));
  EXPECT_THAT(out.out, HasSubstr(MatmulKey(64)));
  EXPECT_THAT(out.out, HasSubstr("500.00 us"));  // The best median over both targets.
  // 2*64*256*256 flops in 0.5 ms.
  EXPECT_THAT(out.out, HasSubstr("16.8"));
}

TEST_F(DbCommandTest, ListJsonParses) {
  Output out = Run("db list --json " + Db());
  ASSERT_EQ(out.exit_code, 0) << out.err;
  nlohmann::json parsed = Parse(out.out);
  ASSERT_EQ(parsed["workloads"].size(), 2u);
  EXPECT_EQ(parsed["workloads"][1]["key"], MatmulKey(64));
  EXPECT_EQ(parsed["workloads"][1]["records"], 4);
  EXPECT_EQ(parsed["workloads"][1]["ok"], 3);
}

TEST_F(DbCommandTest, DefaultDatabaseIsTunedDbThenCurrentDirectory) {
  std::filesystem::create_directory(dir_.File("empty"));
  auto run = [&](const std::string& env) {
    const std::string command =
        "cd " + dir_.File("empty") + " && " + env + " " + TUNED_BINARY + " db stats --json 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    std::string text;
    std::array<char, 4096> buffer;
    size_t n;
    while (pipe != nullptr && (n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
      text.append(buffer.data(), n);
    }
    int status = pipe != nullptr ? pclose(pipe) : -1;
    return std::make_pair(WIFEXITED(status) ? WEXITSTATUS(status) : -1, text);
  };
  auto [default_code, default_text] = run("env -u TUNED_DB");
  EXPECT_EQ(default_code, 2);
  EXPECT_THAT(default_text, HasSubstr("database './tuned.db' does not exist"));
  auto [env_code, env_text] = run("TUNED_DB=" + db_path_);
  EXPECT_EQ(env_code, 0) << env_text;
  EXPECT_EQ(Parse(env_text)["records"], 5);
}

TEST_F(DbCommandTest, MissingDatabaseIsErrorAndNotCreated) {
  const std::string missing = dir_.File("missing.db");
  for (const char* command : {"list", "stats", "export", "show x", "best 'matmul(M=1,N=1,K=1)'"}) {
    Output out = Run(std::string("db ") + command + " --db " + missing);
    EXPECT_EQ(out.exit_code, 2) << command;
    EXPECT_THAT(out.err, HasSubstr("missing.db' does not exist")) << command;
    EXPECT_FALSE(std::filesystem::exists(missing)) << command;
  }
}

TEST_F(DbCommandTest, GarbageDatabaseIsOneLineError) {
  const std::string garbage = dir_.File("garbage.db");
  testing::WriteFile(garbage, std::string(4096, 'x'));
  Output out = Run("db list --db " + garbage);
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(out.err, "tuned: '" + garbage + "' is not a tuned database (not an SQLite file)\n");
}

TEST_F(DbCommandTest, ShowPrintsRecordsAndBestTrace) {
  Output out = Run("db show '" + MatmulKey(64) + "' " + Db());
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_THAT(out.out, HasSubstr("workload    " + MatmulKey(64)));
  EXPECT_THAT(out.out, HasSubstr("timeout"));
  EXPECT_THAT(out.out, HasSubstr("trace of record 4"));  // The fastest OK record.
  EXPECT_THAT(out.out, HasSubstr("v1, v2 = sample_perfect_tile(v0) int=[2]   # decision [4, 8]"));
  Output chosen = Run("db show '" + MatmulKey(64) + "' --record 2 " + Db());
  EXPECT_THAT(chosen.out, HasSubstr("trace of record 2"));
  EXPECT_THAT(chosen.out, HasSubstr("# decision [2, 8]"));
}

TEST_F(DbCommandTest, ShowListsQuarantinedTracesWithReasons) {
  {
    auto db = testing::OpenOrFail(db_path_);
    v1::TuningRecord crashed = MakeRecord(64, kCpu, 6, 0, v1::MEASURE_STATUS_RUNTIME_ERROR);
    crashed.mutable_result()->set_error("kernel killed by SIGSEGV (Segmentation fault)");
    ASSERT_TRUE(db->InsertRecord(crashed).ok());
  }
  Output out = Run("db show '" + MatmulKey(64) + "' " + Db());
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_THAT(out.out, HasSubstr("quarantined traces"));
  EXPECT_THAT(out.out, HasSubstr("kernel killed by SIGSEGV (Segmentation fault)"));
  Output json_out = Run("db show '" + MatmulKey(64) + "' --json " + Db());
  nlohmann::json parsed = Parse(json_out.out);
  ASSERT_EQ(parsed["quarantined"].size(), 2u);  // the timeout and the crash
  EXPECT_EQ(parsed["quarantined"][0]["status"], "timeout");
  EXPECT_EQ(parsed["quarantined"][1]["status"], "runtime_error");
  Output other = Run("db show '" + MatmulKey(128) + "' " + Db());  // a compile error only
  EXPECT_THAT(other.out, ::testing::Not(HasSubstr("quarantined traces")));
}

TEST_F(DbCommandTest, ShowJsonAndUnknownKey) {
  Output out = Run("db show '" + MatmulKey(64) + "' --json " + Db());
  ASSERT_EQ(out.exit_code, 0) << out.err;
  nlohmann::json parsed = Parse(out.out);
  EXPECT_EQ(parsed["workload"]["key"], MatmulKey(64));
  EXPECT_EQ(parsed["records"].size(), 4u);
  EXPECT_EQ(parsed["trace_record"]["record_id"], "4");
  Output missing = Run("db show 'conv2d(N=1)' " + Db());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("no workload with key 'conv2d(N=1)'"));
  EXPECT_THAT(missing.err, HasSubstr("unknown op 'conv2d'"));
  Output wrong = Run("db show '" + MatmulKey(64) + "' --record 5 " + Db());
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_THAT(wrong.err, HasSubstr("record 5 is not a record of workload"));
}

TEST_F(DbCommandTest, ShowAndBestCanonicaliseTheSpecTheSameWay) {
  // Parameters reordered, spaced, and the dtype default left out: both commands find the
  // stored workload.
  std::string spec = "'matmul(K=256, N=256, M=64)'";
  Output show = Run("db show " + spec + " --json " + Db());
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_EQ(Parse(show.out)["workload"]["key"], MatmulKey(64));
  Output best = Run("db best " + spec + " --json " + Db());
  ASSERT_EQ(best.exit_code, 0) << best.err;
  EXPECT_EQ(Parse(best.out)["workload_key"], MatmulKey(64));
}

TEST_F(DbCommandTest, BestPerTargetAndJson) {
  Output out = Run("db best '" + MatmulKey(64) + "' -k 1 " + Db());
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_THAT(out.out, HasSubstr("target " + std::string(kCpu)));
  EXPECT_THAT(out.out, HasSubstr("target " + std::string(kGpu)));
  EXPECT_THAT(out.out, HasSubstr("2.000 ms"));
  EXPECT_THAT(out.out, ::testing::Not(HasSubstr("4.000 ms")));
  Output json = Run("db best '" + MatmulKey(64) + "' --target '" + kCpu + "' -k 5 --json " + Db());
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json parsed = Parse(json.out);
  ASSERT_EQ(parsed["results"].size(), 1u);
  ASSERT_EQ(parsed["results"][0]["records"].size(), 2u);
  EXPECT_DOUBLE_EQ(parsed["results"][0]["records"][0]["result"]["median_seconds"].get<double>(),
                   0.002);
}

TEST_F(DbCommandTest, BestMissExplainsWhy) {
  Output other_target =
      Run("db best '" + MatmulKey(64) + "' --target 'llvm -mcpu=skylake' " + Db());
  EXPECT_EQ(other_target.exit_code, 2);
  EXPECT_THAT(other_target.err, HasSubstr("records exist for other targets"));
  Output failed = Run("db best '" + MatmulKey(128) + "' --json " + Db());
  EXPECT_EQ(failed.exit_code, 2);
  EXPECT_THAT(failed.err, HasSubstr("failed (1 compile_error)"));
  EXPECT_THAT(Parse(failed.out)["results"][0]["miss_reason"].get<std::string>(),
              HasSubstr("failed"));
  Output unknown = Run("db best 'matmul(M=3,N=3,K=3)' " + Db());
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("no workload with key 'matmul(M=3,N=3,K=3,dtype=float32)'"));
  Output bad_spec = Run("db best 'conv2d(N=1)' " + Db());
  EXPECT_EQ(bad_spec.exit_code, 2);
  EXPECT_THAT(bad_spec.err, HasSubstr("unknown op 'conv2d'"));
  // A spec in another parameter order and spacing names the same canonical key.
  Output reordered = Run("db best 'matmul(K=256, N=256, M=64)' -k 1 " + Db());
  EXPECT_EQ(reordered.exit_code, 0) << reordered.err;
  EXPECT_THAT(reordered.out, HasSubstr(MatmulKey(64)));
  Output bad_k = Run("db best x -k 0 " + Db());
  EXPECT_EQ(bad_k.exit_code, 2);
}

TEST_F(DbCommandTest, ExportImportRoundTripAndDedup) {
  const std::string file = dir_.File("records.jsonl");
  Output exported = Run("db export -o " + file + " " + Db());
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_THAT(exported.out, HasSubstr("exported 5 records"));
  Output to_stdout = Run("db export --format jsonl " + Db());
  ASSERT_EQ(to_stdout.exit_code, 0);
  EXPECT_EQ(to_stdout.out, testing::ReadFile(file));
  for (size_t start = 0; start < to_stdout.out.size();) {  // Every line is one JSON object.
    size_t end = to_stdout.out.find('\n', start);
    EXPECT_TRUE(Parse(to_stdout.out.substr(start, end - start)).is_object());
    start = end + 1;
  }

  const std::string copy = dir_.File("copy.db");
  Output imported = Run("db import " + file + " --json --db " + copy);
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_EQ(Parse(imported.out)["inserted"], 5);
  Output again = Run("db import " + file + " --json --db " + copy);
  EXPECT_EQ(Parse(again.out)["duplicates"], 5);
  Output best = Run("db best '" + MatmulKey(64) + "' --json --db " + copy);
  Output original = Run("db best '" + MatmulKey(64) + "' --json " + Db());
  nlohmann::json a = Parse(best.out), b = Parse(original.out);
  for (auto* doc : {&a, &b}) {
    for (auto& result : (*doc)["results"]) {
      for (auto& record : result["records"]) record.erase("record_id");
    }
  }
  EXPECT_EQ(a, b);
}

TEST_F(DbCommandTest, ExportRejectsUnknownFormatAndImportBadFile) {
  Output format = Run("db export --format csv " + Db());
  EXPECT_EQ(format.exit_code, 2);
  EXPECT_THAT(format.err, HasSubstr("unknown export format 'csv'"));
  const std::string bad = dir_.File("bad.jsonl");
  testing::WriteFile(bad, "{\"workload\": 3}\n");
  Output imported = Run("db import " + bad + " " + Db());
  EXPECT_EQ(imported.exit_code, 2);
  EXPECT_THAT(imported.err, HasSubstr("bad.jsonl:1: not a tuning record"));
  Output missing = Run("db import " + dir_.File("nope.jsonl") + " " + Db());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("cannot read import file"));
}

TEST_F(DbCommandTest, MergeIsIdempotent) {
  const std::string other = dir_.File("other.db");
  {
    auto db = testing::OpenOrFail(other);
    ASSERT_TRUE(db->InsertRecord(MakeRecord(256, kCpu, 9, 0.01)).ok());
  }
  Output first = Run("db merge " + other + " --json " + Db());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(Parse(first.out)["records_added"], 1);
  Output second = Run("db merge " + other + " " + Db());
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_THAT(second.out, HasSubstr("0 records"));
  Output stats = Run("db stats --json " + Db());
  nlohmann::json parsed = Parse(stats.out);
  EXPECT_EQ(parsed["records"], 6);
  EXPECT_EQ(parsed["merges"].size(), 2u);
  Output missing = Run("db merge " + dir_.File("absent.db") + " " + Db());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("absent.db' does not exist"));
}

TEST_F(DbCommandTest, StatsHumanAndJson) {
  Output out = Run("db stats " + Db());
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_THAT(out.out, HasSubstr("schema       version 4"));
  EXPECT_THAT(out.out, HasSubstr("records      5  (ok 3, compile_error 1, timeout 1)"));
  nlohmann::json parsed = Parse(Run("db stats --json " + Db()).out);
  EXPECT_EQ(parsed["records_by_status"]["ok"], 3);
  EXPECT_EQ(parsed["schema_version"], 4);
}

TEST_F(DbCommandTest, DbWithoutSubcommandIsUsageError) {
  Output out = Run("db");
  EXPECT_EQ(out.exit_code, 2);
}

}  // namespace
}  // namespace tuned::db
