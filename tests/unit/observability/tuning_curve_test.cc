#include "observability/curve/tuning_curve.h"

#include <gtest/gtest.h>

#include <vector>

namespace tuned::observability {
namespace {

v1::TuningRecord Record(const std::string& task, v1::MeasureStatus status, double median,
                        int64_t created_ms) {
  v1::TuningRecord record;
  record.set_task_id(task);
  record.mutable_workload()->set_key("matmul(M=8,N=8,K=8,dtype=float32)");
  record.mutable_workload()->set_flops(2e9);
  record.mutable_target()->set_target("llvm -mcpu=znver3");
  record.mutable_result()->set_status(status);
  record.mutable_result()->set_median_seconds(median);
  record.set_created_unix_ms(created_ms);
  return record;
}

TEST(TuningCurve, BestSoFarHoldsUntilBeatenAndFailuresCountAsTrials) {
  const std::vector<v1::TuningRecord> records = {
      Record("t1", v1::MEASURE_STATUS_OK, 1.0, 1000),            // 2 GFLOP/s
      Record("t1", v1::MEASURE_STATUS_COMPILE_ERROR, 0, 1500),   // a trial, no throughput
      Record("t1", v1::MEASURE_STATUS_OK, 2.0, 2000),            // 1 GFLOP/s: slower
      Record("t1", v1::MEASURE_STATUS_OK, 0.5, 4000)};           // 4 GFLOP/s
  const TuningCurve curve = CurveOf(records);
  ASSERT_EQ(curve.points.size(), 4u);
  EXPECT_EQ(curve.points[1].trial, 2);
  EXPECT_EQ(curve.points[1].status, v1::MEASURE_STATUS_COMPILE_ERROR);
  EXPECT_DOUBLE_EQ(curve.points[1].gflops, 0);
  EXPECT_DOUBLE_EQ(curve.points[1].best_gflops, 2);
  EXPECT_DOUBLE_EQ(curve.points[2].gflops, 1);
  EXPECT_DOUBLE_EQ(curve.points[2].best_gflops, 2);
  EXPECT_DOUBLE_EQ(curve.points[3].best_gflops, 4);
  EXPECT_DOUBLE_EQ(curve.points[3].seconds, 3.0);
  EXPECT_DOUBLE_EQ(curve.best_gflops, 4);
  EXPECT_EQ(curve.label(), "task t1");
}

TEST(TuningCurve, AReMeasureIsNoTrialButReplacesItsTrialsFigureInTheBest) {
  std::vector<v1::TuningRecord> records = {Record("t1", v1::MEASURE_STATUS_OK, 0.5, 1000),   // 4 GFLOP/s
                                           Record("t1", v1::MEASURE_STATUS_OK, 1.0, 2000),   // 2 GFLOP/s
                                           Record("t1", v1::MEASURE_STATUS_OK, 0.8, 3000)};  // its re-measure
  records[0].set_trace_hash("lucky");
  records[1].set_trace_hash("steady");
  records[2].set_trace_hash("lucky");
  records[2].set_kind(v1::RECORD_KIND_REMEASURE);  // 2.5 GFLOP/s measured again
  const TuningCurve curve = CurveOf(records);
  ASSERT_EQ(curve.points.size(), 2u);
  EXPECT_DOUBLE_EQ(curve.points[1].best_gflops, 4);  // what the trials showed
  EXPECT_DOUBLE_EQ(curve.best_gflops, 2.5);          // what the task ranks

  records.push_back(Record("t1", v1::MEASURE_STATUS_OK, 0.9, 4000));
  records.back().set_trace_hash("steady");
  records.back().set_kind(v1::RECORD_KIND_FINAL);  // only FINAL records rank once one exists
  EXPECT_NEAR(CurveOf(records).best_gflops, 2 / 0.9, 1e-12);
}

TEST(TuningCurve, OneCurvePerTaskInFirstAppearanceOrder) {
  const std::vector<v1::TuningRecord> records = {
      Record("bbbbbbbbbb", v1::MEASURE_STATUS_OK, 1.0, 1), Record("aaaa", v1::MEASURE_STATUS_OK, 1.0, 2),
      Record("bbbbbbbbbb", v1::MEASURE_STATUS_OK, 0.5, 3), Record("", v1::MEASURE_STATUS_OK, 1.0, 4)};
  const std::vector<TuningCurve> curves = CurvesByTask(records);
  ASSERT_EQ(curves.size(), 3u);
  EXPECT_EQ(curves[0].task_id, "bbbbbbbbbb");
  EXPECT_EQ(curves[0].points.size(), 2u);
  EXPECT_EQ(curves[0].label(), "task bbbbbbbb");
  EXPECT_EQ(curves[1].task_id, "aaaa");
  EXPECT_EQ(curves[2].label(), "imported");
  EXPECT_EQ(StatusLabel(v1::MEASURE_STATUS_WRONG_RESULT), "WRONG_RESULT");
}

}  // namespace
}  // namespace tuned::observability
