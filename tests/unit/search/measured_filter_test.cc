// "Already measured" has one owner: the strategy's MeasuredFilter. Over a real SQLite log
// pre-filled with records, no strategy proposes a stored trace, and the filter asks the
// database once per batch.

#include "server/search/measured_filter.h"

#include <filesystem>
#include <functional>
#include <random>
#include <set>

#include <gtest/gtest.h>
#include <unistd.h>

#include "compiler/ir/op_library.h"
#include "costmodel/model/cost_model.h"
#include "server/search/evolutionary_search.h"
#include "server/search/model_registry.h"
#include "server/search/random_search.h"
#include "tuning_db/database.h"

namespace tuned::search {
namespace {

class MeasuredFilterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("tuned_measured_" + std::to_string(::getpid()) + "_" + std::to_string(std::random_device{}()) + ".db");
    db_ = std::move(db::OpenSqliteDatabase(path_.string())).value();
    ctx_.workload = std::make_shared<const ir::Workload>(*ir::ParseWorkloadSpec("matmul(M=32,N=32,K=16)"));
    ctx_.target = "llvm -mcpu=znver3 -num-cores=2";
    ctx_.num_cores = 2;
    ctx_.seed = 11;
  }
  void TearDown() override {
    db_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_.string() + suffix);
  }

  // Stores every candidate as a measured record of the context's workload and target (on
  // `device`; "" as the server stores a job no worker measured).
  void Store(const std::vector<Candidate>& candidates, const std::string& device = "") {
    std::vector<v1::TuningRecord> records;
    for (const Candidate& c : candidates) {
      v1::TuningRecord record;
      record.mutable_workload()->set_key(ctx_.workload->key());
      record.mutable_target()->set_target(ctx_.target);
      *record.mutable_trace() = c.trace;
      record.mutable_result()->set_status(v1::MEASURE_STATUS_RUNTIME_ERROR);  // any status counts
      record.mutable_result()->set_worker_id("earlier");
      record.mutable_result()->mutable_device()->set_model(device);
      record.set_created_unix_ms(1700000000000 + int64_t(records.size()));
      records.push_back(record);
    }
    ASSERT_TRUE(db_->InsertRecords(records).ok());
  }

  static std::set<std::string> Hashes(const std::vector<Candidate>& candidates) {
    std::set<std::string> hashes;
    for (const Candidate& c : candidates) hashes.insert(c.trace_hash);
    return hashes;
  }

  std::filesystem::path path_;
  std::unique_ptr<db::Database> db_;
  SearchContext ctx_;
};

TEST_F(MeasuredFilterTest, AsksTheDatabaseOncePerBatchAndRemembersWhatItHolds) {
  auto sampler = MakeRandomSearch(ctx_);
  ASSERT_TRUE(sampler.ok());
  auto candidates = (*sampler)->NextBatch(100);
  ASSERT_TRUE(candidates.ok());
  ASSERT_EQ(candidates->size(), 100u);
  Store(std::vector<Candidate>(candidates->begin(), candidates->begin() + 70));

  SearchContext with_db = ctx_;
  with_db.database = db_.get();
  MeasuredFilter filter(with_db);
  std::vector<std::string> hashes;
  for (const Candidate& c : *candidates) hashes.push_back(c.trace_hash);
  hashes.push_back(hashes.back());  // listed twice: fresh once
  filter.Take(hashes[99]);          // proposed in this run
  auto fresh = filter.Fresh(hashes);
  ASSERT_TRUE(fresh.ok()) << fresh.status().message();
  EXPECT_EQ(filter.database_reads(), 1) << "one read for 100 hashes";
  for (size_t i = 0; i < 70; ++i) EXPECT_FALSE((*fresh)[i]) << "stored record " << i;
  for (size_t i = 70; i < 99; ++i) EXPECT_TRUE((*fresh)[i]) << "unmeasured " << i;
  EXPECT_FALSE((*fresh)[99]) << "taken in this run";
  EXPECT_FALSE((*fresh)[100]) << "a repeat in the list";

  // What the database holds is remembered: asking about it again reads nothing.
  auto again = filter.Fresh(std::vector<std::string>(hashes.begin(), hashes.begin() + 70));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(filter.database_reads(), 1);
  for (bool f : *again) EXPECT_FALSE(f);
}

TEST_F(MeasuredFilterTest, ATraceMeasuredOnAnotherDeviceIsFreshWhenTheTasksDeviceIsKnown) {
  auto sampler = MakeRandomSearch(ctx_);
  ASSERT_TRUE(sampler.ok());
  auto candidates = sampler.value()->NextBatch(4);
  ASSERT_TRUE(candidates.ok());
  ASSERT_EQ(candidates->size(), 4u);
  Store({(*candidates)[0]}, "CPU A");
  Store({(*candidates)[1]}, "CPU B");
  Store({(*candidates)[2]});  // no device: measured everywhere (a WORKER_LOST record)
  std::vector<std::string> hashes;
  for (const Candidate& c : *candidates) hashes.push_back(c.trace_hash);
  auto fresh_on = [&](const std::string& device) {
    SearchContext with_db = ctx_;
    with_db.database = db_.get();
    with_db.device_model = device;
    MeasuredFilter filter(with_db);
    return filter.Fresh(hashes).value();
  };
  EXPECT_EQ(fresh_on("CPU A"), (std::vector<bool>{false, true, false, true}));
  EXPECT_EQ(fresh_on("CPU B"), (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(fresh_on(""), (std::vector<bool>{false, false, false, true}));  // unknown: any device
}

TEST_F(MeasuredFilterTest, NoStrategyProposesATraceTheDatabaseHolds) {
  auto model = costmodel::MakeXgbCostModel();
  ASSERT_TRUE(model.ok());
  using Factory = std::function<StatusOr<std::unique_ptr<SearchStrategy>>(const SearchContext&)>;
  ModelRegistry registry({});
  v1::SearchOptions evolutionary_task;
  const std::vector<std::pair<std::string, Factory>> strategies = {
      {"random", [](const SearchContext& c) { return MakeRandomSearch(c); }},
      {"evolutionary", [&](const SearchContext& c) { return MakeEvolutionarySearch(c, model->get()); }},
      {"task search", [&](const SearchContext& c) { return MakeTaskSearch(c, evolutionary_task, registry); }},
  };
  for (const auto& [name, make] : strategies) {
    ctx_.seed += 1;
    // Without the database, the strategy proposes these (the default schedule first, for the
    // task search); they are then stored as measured.
    auto before = make(ctx_);
    ASSERT_TRUE(before.ok()) << name;
    auto first = (*before)->NextBatch(12);
    ASSERT_TRUE(first.ok()) << name;
    ASSERT_EQ(first->size(), 12u) << name;
    Store(*first);
    // The same strategy and seed over the database must propose something else.
    SearchContext with_db = ctx_;
    with_db.database = db_.get();
    auto after = make(with_db);
    ASSERT_TRUE(after.ok()) << name;
    auto second = (*after)->NextBatch(12);
    ASSERT_TRUE(second.ok()) << name;
    EXPECT_EQ(second->size(), 12u) << name;
    std::set<std::string> stored = Hashes(*first);
    for (const Candidate& c : *second) {
      EXPECT_FALSE(stored.contains(c.trace_hash)) << name << " proposed a stored trace";
    }
    EXPECT_EQ(Hashes(*second).size(), second->size()) << name << " proposed a trace twice";
  }
}

}  // namespace
}  // namespace tuned::search
