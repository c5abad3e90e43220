// GPU property test, the counterpart of the CPU one: random GPU schedules of every op of the
// library (several shapes each) are lowered for sm_90's limits; every program that lowers is
// run by the GPU interpreter with the race checker and compared with the float64 reference,
// run as OpenCL C on PoCL and compared, and compiled as CUDA C by NVRTC for sm_90. A schedule
// that does not lower must say why in one line. The counts are printed at the end.

#include <gtest/gtest.h>

#include <map>

#include "compiler/codegen/gpu/gpu_source.h"
#include "compiler/ir/evaluator.h"
#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/gpu/lower_gpu.h"
#include "compiler/lower/interpreter.h"
#include "tests/support/gpu_schedules.h"
#include "tests/support/random_schedule.h"
#include "tests/support/text_count.h"
#include "tests/unit/compiler/gpu/gpu_test_util.h"

namespace tuned {
namespace {

constexpr int kSchedulesPerSpec = 4;  // x 13 specs x 2 shape seeds = 104 schedules
constexpr int kShapeSeeds = 2;

// The refusal's kind, for the summary: the rule it names, or the message without its digits.
std::string Kind(const std::string& message) {
  for (const char* rule : {"not bound to GPU threads", "computed redundantly", "inconsistent extents",
                           "threads per block", "bytes of shared memory", "float16", "outside every kernel",
                           "inside another block's kernel", "needs a barrier under the thread-dependent",
                           "where threads would share the buffer", "binds", "has extent"}) {
    if (message.find(rule) != std::string::npos) return std::string("'") + rule + "'";
  }
  std::string kind;
  for (char c : message.substr(0, 90)) {
    if (!std::isdigit(static_cast<unsigned char>(c))) kind += c;
  }
  return "'" + kind + "'";
}

// How many loops of a kernel are marked vectorized.
class VectorizedLoops : public ir::IRVisitor {
 public:
  int count = 0;

 protected:
  void VisitFor(const ir::For* op) override {
    count += op->kind == ir::ForKind::kVectorized;
    ir::IRVisitor::VisitFor(op);
  }
};

using tuned::testing::CountOccurrences;

TEST(RandomGpuSchedules, MatchReferenceOnPoclWithoutRacesAndCompileForSm90) {
  StatusOr<target::Target> sm90 = target::ParseTarget("cuda -arch=sm_90");
  ASSERT_TRUE(sm90.ok());
  lower::gpu::GpuLimits limits = codegen::gpu::LimitsOf(*sm90);
  int attempted = 0, lowered = 0, interpreted = 0, ran_opencl = 0, compiled_nvrtc = 0, kernels = 0;
  int with_shared = 0, with_barriers = 0, multi_kernel = 0;
  int vectorized_loops = 0, vector_stores = 0, with_vectorized = 0, with_vector_access = 0;
  std::map<std::string, int> refused;
  std::string opencl_skip, nvrtc_skip;
  for (uint64_t shape_seed = 1; shape_seed <= kShapeSeeds; ++shape_seed) {
    for (const std::string& spec : testing::SmallSpecs(shape_seed)) {
      StatusOr<ir::Workload> parsed = ir::ParseWorkloadSpec(spec);
      ASSERT_TRUE(parsed.ok()) << spec;
      auto workload = std::make_shared<const ir::Workload>(std::move(parsed).value());
      auto inputs = ir::RandomInputs(*workload, shape_seed);
      auto reference = ir::EvaluateReference(*workload, inputs);
      ASSERT_TRUE(reference.ok());
      const std::vector<double>& expected = reference->at(workload->output_stage().name);
      double tolerance = ir::ToleranceFor(workload->output_stage().output->dtype);
      for (int i = 0; i < kSchedulesPerSpec; ++i) {
        uint64_t seed = shape_seed * 1000 + uint64_t(i);
        schedule::Schedule sch = testing::RandomGpuSchedule(workload, seed);
        ++attempted;
        StatusOr<lower::gpu::GpuProgram> program = lower::gpu::LowerGpu(sch, limits, "k");
        if (!program.ok()) {
          EXPECT_EQ(program.status().code(), StatusCode::kInvalidArgument) << program.status().message();
          EXPECT_EQ(program.status().message().find('\n'), std::string::npos) << program.status().message();
          ++refused[Kind(program.status().message())];
          continue;
        }
        ++lowered;
        kernels += int(program->kernels.size());
        multi_kernel += program->kernels.size() > 1;
        bool shared = false, barriers = false;
        for (const auto& k : program->kernels) shared |= !k.shared.empty();
        std::string cuda = codegen::gpu::PrintGpuSource(*program, codegen::gpu::Dialect::kCuda);
        barriers = cuda.find("__syncthreads") != std::string::npos;
        with_shared += shared;
        VectorizedLoops marked;
        for (const auto& k : program->kernels) marked.Visit(k.body);
        int stores = CountOccurrences(cuda, "*reinterpret_cast<float");
        EXPECT_EQ(stores, CountOccurrences(codegen::gpu::PrintGpuSource(*program, codegen::gpu::Dialect::kOpencl), "vstore"))
            << "the dialects decide alike";
        EXPECT_LE(stores, marked.count);
        vectorized_loops += marked.count;
        vector_stores += stores;
        with_vectorized += marked.count > 0;
        with_vector_access += stores > 0;
        with_barriers += barriers;
        std::string context = spec + " seed " + std::to_string(seed) + "\ntrace:\n" + sch.trace().ToString() +
                              "CUDA C:\n" + cuda;
        StatusOr<std::vector<double>> interpreted_values = lower::InterpretGpu(*program, inputs);
        ASSERT_TRUE(interpreted_values.ok()) << interpreted_values.status().message() << "\n" << context;
        ASSERT_LE(ir::MaxRelativeError(*interpreted_values, expected), tolerance) << context;
        ++interpreted;
        StatusOr<std::vector<double>> ran = testing::RunOnOpencl(*program, inputs);
        if (ran.status().code() == StatusCode::kUnavailable) {
          opencl_skip = ran.status().message();
        } else {
          ASSERT_TRUE(ran.ok()) << ran.status().message() << "\n" << context;
          ASSERT_LE(ir::MaxRelativeError(*ran, expected), tolerance) << "on OpenCL\n" << context;
          ++ran_opencl;
        }
        StatusOr<std::string> built = testing::CompileWithNvrtc(*program);
        if (built.status().code() == StatusCode::kUnavailable) {
          nvrtc_skip = built.status().message();
        } else {
          ASSERT_TRUE(built.ok()) << built.status().message() << "\n" << context;
          ++compiled_nvrtc;
        }
      }
    }
  }
  std::string summary = std::to_string(attempted) + " random GPU schedules: " + std::to_string(lowered) +
                        " lowered (" + std::to_string(kernels) + " kernels; " + std::to_string(multi_kernel) +
                        " multi-kernel, " + std::to_string(with_shared) + " with shared staging, " +
                        std::to_string(with_barriers) + " with barriers, " + std::to_string(with_vectorized) +
                        " with vectorized loops (" + std::to_string(vectorized_loops) + " loops), " +
                        std::to_string(with_vector_access) + " printed with vector accesses (" +
                        std::to_string(vector_stores) + " loops)), " + std::to_string(interpreted) +
                        " race-free and matching in the interpreter, " + std::to_string(ran_opencl) +
                        " matching on OpenCL, " + std::to_string(compiled_nvrtc) + " compiled for sm_90; refused:";
  for (const auto& [kind, count] : refused) summary += " " + kind + " " + std::to_string(count) + ";";
  std::cout << summary << "\n";
  RecordProperty("summary", summary);
  if (!opencl_skip.empty()) std::cout << "OpenCL runs skipped: " << opencl_skip << "\n";
  if (!nvrtc_skip.empty()) std::cout << "NVRTC builds skipped: " << nvrtc_skip << "\n";
  // The generator aims at lowerable schedules; most must lower, and shared staging must occur.
  EXPECT_GE(lowered * 2, attempted) << summary;
  EXPECT_GT(with_shared, 0) << summary;
  EXPECT_GT(with_barriers, 0) << summary;
  EXPECT_GT(with_vector_access, 0) << summary;
  EXPECT_GT(vectorized_loops, vector_stores) << summary;  // some stay scalar (misaligned or guarded)
}

}  // namespace
}  // namespace tuned
