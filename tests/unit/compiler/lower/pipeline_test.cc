// The compile pipeline entry: the empty trace is the unscheduled program, the default schedule
// is a trace that parallelises every stage's outer loop, errors name the step and instruction.

#include "compiler/lower/pipeline.h"

#include <gtest/gtest.h>

#include "compiler/ir/ir_printer.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/lower.h"

namespace tuned::lower {
namespace {

std::shared_ptr<const ir::Workload> Spec(const std::string& spec) {
  return std::make_shared<const ir::Workload>(*ir::ParseWorkloadSpec(spec));
}

std::string Program(const StatusOr<LoweredFunc>& func) {
  EXPECT_TRUE(func.ok()) << func.status().message();
  return func.ok() ? ir::ToString(func->body) : "";
}

TEST(Pipeline, AbsentAndEmptyTracesAreTheUnscheduledProgram) {
  auto workload = Spec("matmul(M=16,N=8,K=4)");
  std::string unscheduled = Program(LowerUnscheduled(workload));
  EXPECT_EQ(unscheduled.find("parallel"), std::string::npos) << unscheduled;
  EXPECT_EQ(Program(LowerTraceProto(workload, v1::Trace())), unscheduled);
  v1::Trace empty;
  empty.set_version(schedule::kTraceVersion);
  EXPECT_EQ(Program(LowerTraceProto(workload, empty)), unscheduled);
  EXPECT_EQ(Program(LowerTrace(workload, schedule::Trace())), unscheduled);
}

TEST(Pipeline, DefaultScheduleIsATraceThatParallelisesEveryStage) {
  for (const char* spec : {"matmul(M=16,N=8,K=4)", "softmax(M=4,N=8)", "conv2d_nchw(N=2,C=2,H=6,W=6,F=2,R=3,S=3,pad=1)"}) {
    auto workload = Spec(spec);
    StatusOr<schedule::Trace> trace = DefaultScheduleTrace(workload);
    ASSERT_TRUE(trace.ok()) << spec << ": " << trace.status().message();
    EXPECT_FALSE(trace->instructions.empty()) << spec;
    // The same trace every time, so a task recognises its record by the trace hash.
    EXPECT_EQ(*DefaultScheduleTrace(workload), *trace) << spec;
    std::string program = Program(LowerDefaultSchedule(workload));
    EXPECT_EQ(Program(LowerTrace(workload, *trace)), program) << spec;
    size_t parallel_loops = 0;
    for (size_t at = program.find("parallel"); at != std::string::npos; at = program.find("parallel", at + 1)) {
      ++parallel_loops;
    }
    size_t stages_with_axes = 0;
    for (const ir::ComputeStage& stage : workload->stages()) stages_with_axes += stage.axes.empty() ? 0 : 1;
    EXPECT_EQ(parallel_loops, stages_with_axes) << spec << "\n" << program;
    // Through the wire format and back it is still the default schedule.
    v1::Trace proto;
    schedule::TraceToProto(*trace, &proto);
    EXPECT_EQ(Program(LowerTraceProto(workload, proto)), program) << spec;
  }
}

TEST(Pipeline, ErrorsNameTheStepAndTheInstruction) {
  auto workload = Spec("matmul(M=16,N=8,K=4)");
  v1::Trace trace;
  trace.set_version(schedule::kTraceVersion);
  v1::Instruction* inst = trace.add_instructions();
  inst->set_kind("get_block");
  inst->add_str_attrs("no_such_block");
  inst->add_outputs(0);
  StatusOr<LoweredFunc> func = LowerTraceProto(workload, trace);
  ASSERT_FALSE(func.ok());
  EXPECT_NE(func.status().message().find("replay"), std::string::npos) << func.status().message();
  EXPECT_NE(func.status().message().find("trace instruction 0 (get_block)"), std::string::npos)
      << func.status().message();

  v1::Trace unknown = trace;
  unknown.mutable_instructions(0)->set_kind("no_such_primitive");
  StatusOr<LoweredFunc> invalid = LowerTraceProto(workload, unknown);
  ASSERT_FALSE(invalid.ok());
  EXPECT_NE(invalid.status().message().find("invalid trace"), std::string::npos) << invalid.status().message();
}

}  // namespace
}  // namespace tuned::lower
