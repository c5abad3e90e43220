#include "tests/unit/worker/worker_test_util.h"

#include <gtest/gtest.h>

#include "compiler/ir/op_library.h"
#include "compiler/schedule/trace.h"
#include "worker/workload_message.h"

namespace tuned::worker::testing {

v1::MeasureConfig FastConfig() {
  v1::MeasureConfig config = DefaultMeasureConfig();
  config.set_repeat(3);
  config.set_min_repeat_ms(1);
  return config;
}

v1::MeasureJob MakeJob(const std::string& spec, const std::string& job_id,
                       const schedule::Trace& trace) {
  v1::MeasureJob job;
  job.set_job_id(job_id);
  job.set_task_id("test");
  StatusOr<ir::Workload> workload = ir::ParseWorkloadSpec(spec);
  EXPECT_TRUE(workload.ok()) << workload.status().ToString();
  if (workload.ok()) *job.mutable_workload() = WorkloadMessage(*workload);
  schedule::TraceToProto(trace, job.mutable_trace());
  *job.mutable_config() = FastConfig();
  return job;
}

schedule::Trace TiledTrace(const std::string& spec) {
  StatusOr<ir::Workload> parsed = ir::ParseWorkloadSpec(spec);
  EXPECT_TRUE(parsed.ok());
  if (!parsed.ok()) return {};
  auto workload = std::make_shared<const ir::Workload>(std::move(parsed).value());
  schedule::Schedule sch(workload, /*seed=*/0);
  StatusOr<schedule::BlockRV> block = sch.GetBlock(workload->output_stage().name);
  EXPECT_TRUE(block.ok());
  StatusOr<std::vector<schedule::LoopRV>> loops = sch.GetLoops(*block);
  EXPECT_TRUE(loops.ok() && loops->size() >= 2);
  StatusOr<std::vector<schedule::LoopRV>> outer = sch.Split((*loops)[0], {std::monostate{}, int64_t{4}});
  EXPECT_TRUE(outer.ok()) << outer.status().ToString();
  if (outer.ok()) {
    EXPECT_TRUE(sch.Parallel((*outer)[0]).ok());
  }
  return sch.trace();
}

std::unique_ptr<MeasurementEngine> MakeEngine(const EngineOptions& options) {
  StatusOr<std::unique_ptr<MeasurementEngine>> engine = CreateMeasurementEngine(options);
  EXPECT_TRUE(engine.ok()) << engine.status().ToString();
  return engine.ok() ? std::move(engine).value() : nullptr;
}

}  // namespace tuned::worker::testing
