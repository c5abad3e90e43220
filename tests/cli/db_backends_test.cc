// `tuned db` with a PostgreSQL URL as --db (and as the merge source): stats, merge and
// export/import between the backends in both directions, and the one-line error for a server
// that cannot be reached. Needs the `postgres` CTest fixture; skips, saying why, without it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/run_tuned.h"
#include "tests/unit/tuning_db/backend_test_util.h"
#include "tests/unit/tuning_db/db_test_util.h"

namespace tuned::db {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::Backend;
using testing::BackendName;
using testing::kCpu;
using testing::MakeRecord;
using testing::ScratchLog;
using Output = tuned::testing::CommandOutput;

nlohmann::json Parse(const std::string& text) {
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(parsed.is_discarded()) << text;
  return parsed;
}

// A shell word for a database argument (URLs hold '&' and '?').
std::string Quote(const std::string& location) { return "'" + location + "'"; }

struct BackendPair {
  Backend from;
  Backend into;
};

void PrintTo(const BackendPair& pair, std::ostream* out) {
  *out << "from_" << BackendName(pair.from) << "_into_" << BackendName(pair.into);
}

class DbCommandBetweenBackends : public ::testing::TestWithParam<BackendPair> {
 protected:
  void SetUp() override {
    TUNED_SKIP_UNLESS_BACKEND(GetParam().from);
    TUNED_SKIP_UNLESS_BACKEND(GetParam().into);
    from_ = std::make_unique<ScratchLog>(GetParam().from);
    into_ = std::make_unique<ScratchLog>(GetParam().into);
    auto db = testing::OpenLogOrFail(from_->location());
    ASSERT_NE(db, nullptr);
    ASSERT_TRUE(db->InsertRecords(std::vector{MakeRecord(64, kCpu, 1, 0.004),
                                              MakeRecord(64, kCpu, 2, 0.002),
                                              MakeRecord(128, kCpu, 3, 0,
                                                         v1::MEASURE_STATUS_TIMEOUT)})
                    .ok());
  }
  std::unique_ptr<ScratchLog> from_;
  std::unique_ptr<ScratchLog> into_;
};

INSTANTIATE_TEST_SUITE_P(
    Pairs, DbCommandBetweenBackends,
    ::testing::Values(BackendPair{Backend::kSqlite, Backend::kPostgres},
                      BackendPair{Backend::kPostgres, Backend::kSqlite},
                      BackendPair{Backend::kPostgres, Backend::kPostgres}),
    [](const auto& info) {
      return "from_" + BackendName(info.param.from) + "_into_" + BackendName(info.param.into);
    });

TEST_P(DbCommandBetweenBackends, StatsOnEither) {
  Output out = tuned::testing::RunTuned("db stats --json --db " + Quote(from_->location()));
  ASSERT_EQ(out.exit_code, 0) << out.err;
  nlohmann::json stats = Parse(out.out);
  EXPECT_EQ(stats["records"], 3);
  EXPECT_EQ(stats["schema_version"], 4);
  EXPECT_EQ(stats["records_by_status"]["timeout"], 1);
}

TEST_P(DbCommandBetweenBackends, MergeIsIdempotentAndLogged) {
  const std::string into = "--db " + Quote(into_->location());
  Output first = tuned::testing::RunTuned("db merge " + Quote(from_->location()) + " --json " + into);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(Parse(first.out)["records_added"], 3);
  EXPECT_EQ(Parse(first.out)["workloads_added"], 2);
  Output second = tuned::testing::RunTuned("db merge " + Quote(from_->location()) + " --json " + into);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(Parse(second.out)["records_added"], 0);
  nlohmann::json stats = Parse(tuned::testing::RunTuned("db stats --json " + into).out);
  EXPECT_EQ(stats["records"], 3);
  EXPECT_EQ(stats["merges"].size(), 2u);
  Output best = tuned::testing::RunTuned("db best '" + testing::MatmulKey(64) + "' --json " + into);
  ASSERT_EQ(best.exit_code, 0) << best.err;
  EXPECT_DOUBLE_EQ(
      Parse(best.out)["results"][0]["records"][0]["result"]["median_seconds"].get<double>(), 0.002);
}

TEST_P(DbCommandBetweenBackends, ExportThenImportTwice) {
  testing::TempDir dir;
  const std::string file = dir.File("records.jsonl");
  Output exported =
      tuned::testing::RunTuned("db export -o " + file + " --db " + Quote(from_->location()));
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_THAT(exported.out, HasSubstr("exported 3 records"));
  const std::string into = "--db " + Quote(into_->location());
  Output imported = tuned::testing::RunTuned("db import " + file + " --json " + into);
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_EQ(Parse(imported.out)["inserted"], 3);
  Output again = tuned::testing::RunTuned("db import " + file + " --json " + into);
  EXPECT_EQ(Parse(again.out)["duplicates"], 3);
  Output back = tuned::testing::RunTuned("db export " + into);
  EXPECT_EQ(back.out, testing::ReadFile(file));  // Same records, same provenance, same order.
}

TEST(DbCommandPostgres, UnreachableServerIsOneLineWithoutPassword) {
  testing::TempDir empty;
  const std::string url = "postgresql://tuned:s3cret@/log?host=" + empty.File("") + "&port=1";
  Output out = tuned::testing::RunTuned("db stats --db " + Quote(url));
  EXPECT_NE(out.exit_code, 0);
  EXPECT_THAT(out.err, HasSubstr("postgresql://tuned@/log?host="));
  EXPECT_THAT(out.err, Not(HasSubstr("s3cret")));
  EXPECT_EQ(std::count(out.err.begin(), out.err.end(), '\n'), 1) << out.err;
}

}  // namespace
}  // namespace tuned::db
