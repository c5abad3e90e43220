// Measurement a user can trust, with real `tuned serve` and `tuned-worker` processes on
// loopback: noisy records are re-measured before they rank, the top-k are re-measured at the
// end on both workers of one device model and the winner is a FINAL record, a worker whose
// calibration drifts has its batch re-measured and shows it in `tuned workers`, and the key of
// the best record is shown by `tuned db best`.

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "proto/task_state.h"
#include "tests/integration/cluster.h"
#include "tuning_db/database.h"

namespace tuned::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

constexpr auto kTaskTimeout = std::chrono::seconds(180);

std::map<v1::RecordKind, std::vector<v1::TuningRecord>> ByKind(const Cluster& cluster,
                                                               const std::string& task_id) {
  std::map<v1::RecordKind, std::vector<v1::TuningRecord>> out;
  std::unique_ptr<db::Database> database = OpenDb(cluster);
  if (database == nullptr) return out;
  auto records = database->TaskRecords(task_id);
  EXPECT_TRUE(records.ok()) << records.status().ToString();
  if (!records.ok()) return out;
  for (const v1::TuningRecord& record : *records) out[record.kind()].push_back(record);
  return out;
}

class RemeasureClusterTest : public ::testing::Test {
 protected:
  std::string Logs() { return "server log:\n" + cluster_.server().Log(); }
  Cluster cluster_;
};

TEST_F(RemeasureClusterTest, NoisyRecordsAndTheTopKAreRemeasuredOnBothWorkers) {
  cluster_.set_server_args({"--drift-threshold", "0"});  // only the re-measures asked for here
  std::string error;
  ASSERT_TRUE(cluster_.StartServer(&error)) << error;
  cluster_.StartWorker("w1");
  cluster_.StartWorker("w2");
  ASSERT_TRUE(cluster_.WaitWorkers(2, 60s)) << Logs();

  v1::TaskSpec spec = Cluster::SmallTask(12);
  spec.mutable_measure()->set_repeat(2);               // a CV to measure
  spec.mutable_remeasure()->set_noise_cv_threshold(1e-9);  // every figure counts as noisy
  spec.mutable_remeasure()->set_top_k(3);
  spec.mutable_remeasure()->set_top_k_rounds(2);
  const std::string task_id = SubmitTask(cluster_, spec);
  v1::TaskStatus status;
  ASSERT_TRUE(cluster_.WaitTask(task_id, [](const auto& s) { return v1::IsFinal(s.state()); },
                                kTaskTimeout, &status))
      << Logs();
  ASSERT_EQ(status.state(), v1::TASK_STATE_SUCCEEDED) << status.error() << Logs();
  EXPECT_EQ(status.trials_done(), 12u);

  auto kinds = ByKind(cluster_, task_id);
  ExpectEachTrialOnce(cluster_, task_id, 12);
  size_t noisy = 0;
  for (const v1::TuningRecord& record : kinds[v1::RECORD_KIND_SEARCH]) {
    if (record.result().status() == v1::MEASURE_STATUS_OK && record.result().repeat_cv() > 1e-9) {
      ++noisy;
    }
  }
  ASSERT_GT(noisy, 0u);
  EXPECT_EQ(kinds[v1::RECORD_KIND_REMEASURE].size(), noisy);
  for (const v1::TuningRecord& record : kinds[v1::RECORD_KIND_REMEASURE]) {
    EXPECT_EQ(record.config().repeat(), 6u);  // 3 times the protocol's repeats
  }
  // 3 traces on each of the two workers (one machine: one device model), 2 rounds of 2 repeats.
  ASSERT_EQ(kinds[v1::RECORD_KIND_FINAL].size(), 6u);
  std::map<std::string, int> per_worker;
  for (const v1::TuningRecord& record : kinds[v1::RECORD_KIND_FINAL]) {
    ++per_worker[record.result().worker_id()];
    if (record.result().status() == v1::MEASURE_STATUS_OK) {
      EXPECT_EQ(record.result().repeat_seconds_size(), 4);
    }
  }
  EXPECT_EQ(per_worker["w1"], 3);
  EXPECT_EQ(per_worker["w2"], 3);
  EXPECT_EQ(status.best().kind(), v1::RECORD_KIND_FINAL);

  // `tuned db show` tells the kinds apart; `tuned db best` ranks the FINAL records and shows
  // the key of the first.
  std::string out;
  ASSERT_EQ(cluster_.RunTuned({"db", "show", "matmul(M=32,N=32,K=32)", "--limit", "100", "--db",
                               cluster_.db_path()},
                              &out),
            0)
      << out;
  EXPECT_THAT(out, HasSubstr("final"));
  EXPECT_THAT(out, HasSubstr("remeasure"));
  ASSERT_EQ(cluster_.RunTuned({"db", "best", "matmul(M=32,N=32,K=32)", "--db", cluster_.db_path()},
                              &out),
            0)
      << out;
  EXPECT_THAT(out, HasSubstr("final"));
  EXPECT_THAT(out, HasSubstr("key of rank 1: device '"));
  EXPECT_THAT(out, HasSubstr("toolkit 'LLVM "));
  // A code generation no record has: the miss reason names the one that exists.
  EXPECT_NE(cluster_.RunTuned({"db", "best", "matmul(M=32,N=32,K=32)", "--codegen-version", "999",
                               "--db", cluster_.db_path()},
                              &out),
            0);
  EXPECT_THAT(out, HasSubstr("of code generation 999"));
}

TEST_F(RemeasureClusterTest, AWorkerWhoseCalibrationDriftsHasItsBatchRemeasured) {
  // Any move of the calibration counts as a drift until the worker's jitter is known (four
  // changes), so the first batches after the first are.
  cluster_.set_server_args({"--drift-threshold", "1e-9"});
  std::string error;
  ASSERT_TRUE(cluster_.StartServer(&error)) << error;
  // Its small batches follow each other too closely for an idle gap: it calibrates whenever it
  // holds no job.
  cluster_.StartWorker("w1", {"--calibration-max-interval-ms", "0"});
  ASSERT_TRUE(cluster_.WaitWorkers(1, 60s)) << Logs();

  v1::TaskSpec spec = Cluster::SmallTask(24);
  spec.mutable_search()->set_batch_size(4);
  spec.mutable_remeasure()->set_noise_cv_threshold(0);
  spec.mutable_remeasure()->set_top_k(0);
  const std::string task_id = SubmitTask(cluster_, spec);
  v1::TaskStatus status;
  ASSERT_TRUE(cluster_.WaitTask(task_id, [](const auto& s) { return v1::IsFinal(s.state()); },
                                kTaskTimeout, &status))
      << Logs();
  ASSERT_EQ(status.state(), v1::TASK_STATE_SUCCEEDED) << status.error() << Logs();
  ExpectEachTrialOnce(cluster_, task_id, 24);
  auto kinds = ByKind(cluster_, task_id);
  EXPECT_FALSE(kinds[v1::RECORD_KIND_REMEASURE].empty()) << Logs();

  // The figures are in the log, drifted ones marked; `tuned workers` shows the events.
  std::unique_ptr<db::Database> database = OpenDb(cluster_);
  ASSERT_NE(database, nullptr);
  auto calibrations = database->ListCalibrations("w1", 1000);
  ASSERT_TRUE(calibrations.ok());
  ASSERT_GE(calibrations->size(), 2u);
  int drifted = 0;
  for (const db::WorkerCalibration& c : *calibrations) {
    EXPECT_GT(c.median_seconds, 0);
    drifted += c.drifted ? 1 : 0;
  }
  EXPECT_GT(drifted, 0);
  std::string out;
  ASSERT_EQ(cluster_.RunTuned(
                {"workers", "--server", cluster_.address(), "--token-file", cluster_.token_file()},
                &out),
            0)
      << out;
  EXPECT_THAT(out, HasSubstr("calibration "));
  EXPECT_THAT(out, HasSubstr("job(s) re-measured"));
}

}  // namespace
}  // namespace tuned::testing
