#ifndef TUNED_WORKER_BUILDER_H_
#define TUNED_WORKER_BUILDER_H_

/// \file
/// Building a candidate: the job's trace replayed on its workload and lowered by the compile
/// pipeline (compiler/lower/pipeline.h; an absent trace is the unscheduled program), then
/// compiled to machine code by the LLVM JIT. A failure is the
/// candidate's COMPILE_ERROR, with the failing stage and the compiler's message:
///   "invalid trace: ...", "replay: ...", "lowering: ...", "code generation: ...".
///
/// The engine takes its builder from a BuilderFactory, so a test can wrap the real builder
/// (tests/unit/worker/faulty_builder.cc makes faulty kernels that way). The production factory
/// (CreateMeasurementEngine in measurement_engine.h) always uses MakeJitBuilder; nothing on the
/// wire selects a builder.

#include <functional>
#include <memory>

#include "common/status.h"
#include "compiler/codegen/llvm/llvm_jit.h"
#include "compiler/ir/workload.h"
#include "compiler/lower/lowered_func.h"
#include "tuned/v1/measure.pb.h"
#include "worker/measurement_engine.h"
#include "worker/timing_protocol.h"

namespace tuned::worker {

/// A candidate ready to run: its entry point and what keeps the code alive.
struct BuiltKernel {
  std::shared_ptr<const codegen::JitKernel> kernel;  // owns the machine code
  KernelEntry entry = nullptr;                       // packed-arguments entry point
};

class Builder {
 public:
  virtual ~Builder() = default;
  /// Builds `job`'s trace for `workload` (the workload the job names, already rebuilt and
  /// checked). Thread-safe: several builds may run at once.
  virtual StatusOr<BuiltKernel> Build(const std::shared_ptr<const ir::Workload>& workload,
                                      const v1::MeasureJob& job) = 0;
};

/// The real builder: replay, lower, JIT with `jit`.
std::unique_ptr<Builder> MakeJitBuilder(std::shared_ptr<codegen::LlvmJit> jit);

/// The last stage: `func` compiled with `jit`.
StatusOr<BuiltKernel> CompileCandidate(codegen::LlvmJit& jit, const lower::LoweredFunc& func);

/// Makes the engine's builder from the JIT the engine created for its target.
using BuilderFactory =
    std::function<StatusOr<std::unique_ptr<Builder>>(std::shared_ptr<codegen::LlvmJit> jit)>;

/// CreateMeasurementEngine with the candidates' builder made by `factory` (the reference of
/// each workload is still built by MakeJitBuilder).
StatusOr<std::unique_ptr<MeasurementEngine>> CreateMeasurementEngine(const EngineOptions& options,
                                                                     const BuilderFactory& factory);

}  // namespace tuned::worker

#endif  // TUNED_WORKER_BUILDER_H_
