#ifndef TUNED_COMPILER_IR_WORKLOAD_H_
#define TUNED_COMPILER_IR_WORKLOAD_H_

/// \file
/// Workloads: static-shape tensor computations written in a tensor-expression style. A workload
/// has input buffers and compute stages; each stage defines every point of its output buffer
/// over spatial axes, optionally reducing (sum, max, min) over reduction axes:
///
///   C[i, j] = sum over k of A[i, k] * B[k, j]
///
/// Stages are in topological order and the last stage is the workload's output. A workload's key
/// is readable canonical text: the canonical spec of a library op, or the printed definition of
/// a custom compute. Keys are stable across runs, machines and versions.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/ir.h"

namespace tuned::ir {

enum class ReduceKind : uint8_t { kNone, kSum, kMax, kMin };
const char* ReduceKindName(ReduceKind kind);
/// The starting value of a reduction: 0 for sum, the lowest value for max, the highest for min.
Expr ReduceIdentity(ReduceKind kind, DataType type);

/// An axis of a stage: `var` runs over [0, extent).
struct Axis {
  Var var;
  int64_t extent = 0;
};

struct ComputeStage {
  std::string name;
  Buffer output;                   // shape = spatial axis extents
  std::vector<Axis> axes;          // spatial axes, one per output dimension
  std::vector<Axis> reduce_axes;   // empty unless reduce != kNone
  ReduceKind reduce = ReduceKind::kNone;
  Expr body;                       // value at one point (and reduction step)
  /// The starting value of the reduction (identity of `reduce`).
  Expr Init() const;
};

class Workload {
 public:
  const std::vector<Buffer>& inputs() const { return inputs_; }
  /// Whether input `buffer` is a constant of the program the kernel serves (a model's weight):
  /// the same values in every call, so what a schedule derives from it alone (a packed copy)
  /// may be computed once, before the calls (lower::LoweredFunc::prepack).
  bool IsConstantInput(const BufferNode* buffer) const;
  /// IsConstantInput of each input, in order (what runtime::PackedConstants takes).
  std::vector<bool> ConstantInputFlags() const;
  const std::vector<ComputeStage>& stages() const { return stages_; }
  const ComputeStage& output_stage() const { return stages_.back(); }
  /// All buffers a kernel takes as arguments: inputs, then the output.
  std::vector<Buffer> arguments() const;

  const std::string& key() const { return key_; }
  const std::string& key_sha256() const { return key_sha256_; }
  const std::string& op() const { return op_; }
  const std::vector<std::pair<std::string, std::string>>& params() const { return params_; }
  /// The printed definition (stages with their bodies), independent of the key.
  std::string Definition() const;
  /// Floating-point (or integer) operations of one execution: reduction steps count their body.
  double flops() const { return flops_; }
  /// Index of the stage named `name`, or -1.
  int FindStage(std::string_view name) const;

 private:
  friend class WorkloadBuilder;
  std::vector<Buffer> inputs_;
  std::vector<const BufferNode*> constant_inputs_;
  std::vector<ComputeStage> stages_;
  std::string op_ = "custom";
  std::vector<std::pair<std::string, std::string>> params_;
  std::string key_;
  std::string key_sha256_;
  double flops_ = 0;
};

/// Builds a workload stage by stage.
class WorkloadBuilder {
 public:
  Buffer Input(std::string name, DataType dtype, std::vector<int64_t> shape, bool constant = false);

  using BodyFn = std::function<Expr(const std::vector<Expr>& axes, const std::vector<Expr>& reduce_axes)>;
  /// Adds a stage named `name` of the given output shape; `body` receives the axis variables.
  Buffer Compute(std::string name, DataType dtype, std::vector<int64_t> shape,
                 std::vector<int64_t> reduce_shape, ReduceKind reduce, const BodyFn& body);
  Buffer Compute(std::string name, DataType dtype, std::vector<int64_t> shape,
                 const std::function<Expr(const std::vector<Expr>&)>& body);

  /// Finishes a library op: its key is `op(params...)` in the given (canonical) order.
  Workload BuildOp(std::string op, std::vector<std::pair<std::string, std::string>> params);
  /// Finishes a custom compute: its key is its printed definition.
  Workload BuildCustom();
  /// Finishes a workload whose key `key_of` computes from the finished stages (the canonical
  /// text of the definition language, which rebuilds it).
  Workload BuildKeyed(std::string op, const std::function<std::string(const Workload&)>& key_of);

 private:
  Workload workload_;
};

/// Canonical spec text of an op with parameters: "op(a=1,b=2)".
std::string FormatSpec(const std::string& op,
                       const std::vector<std::pair<std::string, std::string>>& params);

}  // namespace tuned::ir

#endif  // TUNED_COMPILER_IR_WORKLOAD_H_
