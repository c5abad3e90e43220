#ifndef TUNED_WORKER_BUILDER_H_
#define TUNED_WORKER_BUILDER_H_

/// \file
/// Building a candidate, in two halves. `Builder::Compile` replays the job's trace on its
/// workload, lowers it by the compile pipeline (compiler/lower/pipeline.h; an absent trace is
/// the unscheduled program) and emits a relocatable object file; the engine runs it in a
/// forked build process (worker/contained_build.h), so a build that crashes inside LLVM or
/// never returns costs one child, not the worker. `LinkCandidate` then links the object into
/// the worker's JIT. A failure is the candidate's COMPILE_ERROR, with the failing stage and the
/// compiler's message: "invalid trace: ...", "replay: ...", "lowering: ...",
/// "code generation: ...".
///
/// The engine takes its builder from a BuilderFactory, so a test can wrap the real builder
/// (tests/unit/worker/faulty_builder.cc makes faulty kernels and faulty builds that way). The
/// production factory (CreateMeasurementEngine in measurement_engine.h) always uses
/// MakeJitBuilder; nothing on the wire selects a builder.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "compiler/codegen/llvm/llvm_jit.h"
#include "compiler/ir/workload.h"
#include "compiler/lower/lowered_func.h"
#include "target/target.h"
#include "tuned/v1/measure.pb.h"
#include "worker/measurement_engine.h"
#include "worker/timing_protocol.h"

namespace tuned::worker {

/// What a build process hands back: the object file of one kernel, or (tests only) a
/// function of this program, whose address is the same in the worker after the fork.
/// Most packed buffers a candidate may have (a build process reports their sizes in a header).
inline constexpr size_t kMaxPackedBuffers = 8;

struct CompiledCandidate {
  std::string object;            // relocatable object file for the worker's target
  std::string kernel_name;       // the kernel in it (its `_packed` entry is called)
  size_t num_args = 0;           // buffers the kernel takes
  /// Bytes of each packed buffer (the arguments before the output, after the inputs), which
  /// the kernel's prepack entry fills from constant inputs; empty: no prepack entry.
  std::vector<uint64_t> packed_bytes;
  KernelEntry native = nullptr;  // set instead of `object` by test builders
};

/// A candidate ready to run: its entry point and what keeps the code alive.
struct BuiltKernel {
  std::shared_ptr<const codegen::JitKernel> kernel;  // owns the machine code
  KernelEntry entry = nullptr;                       // packed-arguments entry point
  KernelEntry prepack = nullptr;                     // its prepack entry, if any
  std::vector<uint64_t> packed_bytes;                // CompiledCandidate::packed_bytes
};

class Builder {
 public:
  virtual ~Builder() = default;
  /// Compiles `job`'s trace for `workload` (the workload the job names, already rebuilt and
  /// checked) for `target`. Runs in a build process: it may crash or hang without harm.
  virtual StatusOr<CompiledCandidate> Compile(const std::shared_ptr<const ir::Workload>& workload,
                                              const v1::MeasureJob& job,
                                              const target::Target& target) = 0;

  /// A key under which the engine may keep this job's object and link it again for a job of
  /// the same key (worker/object_cache.h); nullopt: build every time. Two jobs of one key
  /// must build the same object.
  virtual std::optional<std::string> CacheKey(const v1::MeasureJob& job,
                                              const target::Target& target) const {
    (void)job;
    (void)target;
    return std::nullopt;
  }
};

/// The real builder: replay, lower, emit an object file.
std::unique_ptr<Builder> MakeJitBuilder();

/// The last compile stage: `func` as an object file for `target`.
StatusOr<CompiledCandidate> CompileToObject(const lower::LoweredFunc& func,
                                            const target::Target& target);

/// Links a compiled candidate into `jit` (in the worker process).
StatusOr<BuiltKernel> LinkCandidate(codegen::LlvmJit& jit, const CompiledCandidate& compiled);

/// Makes the engine's candidate builder.
using BuilderFactory = std::function<StatusOr<std::unique_ptr<Builder>>()>;

/// CreateMeasurementEngine with the candidates' builder made by `factory` (the reference of
/// each workload is still built by MakeJitBuilder).
StatusOr<std::unique_ptr<MeasurementEngine>> CreateMeasurementEngine(const EngineOptions& options,
                                                                     const BuilderFactory& factory);

}  // namespace tuned::worker

#endif  // TUNED_WORKER_BUILDER_H_
