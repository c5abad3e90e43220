#ifndef TUNED_MODEL_DEFINITION_WRITER_H_
#define TUNED_MODEL_DEFINITION_WRITER_H_

/// \file
/// Writes the workload-language text of one fused kernel (docs/workload_language.md). The
/// operator emitters add stages and name the kernel's inputs through it; a value of the kernel
/// is a function from index expressions (text) to an expression (text), so an elementwise
/// epilogue composes into the expression of the stage it follows.
///
/// Names are chosen by role and order only (never from the model), so two occurrences of the
/// same computation write the same text and get the same workload key.

#include <functional>
#include <string>
#include <vector>

#include "model/graph.h"

namespace tuned::model {

using Index = std::vector<std::string>;
/// The value of a tensor at an index (one expression per dimension of its shape).
using ValueFn = std::function<std::string(const Index&)>;

/// A tensor's value inside the kernel being written.
struct KernelValue {
  std::vector<int64_t> shape;
  ValueFn at;
  /// The stage whose elements this value is, unchanged ("" when it is an expression): a kernel
  /// that ends in such a value needs no extra output stage.
  std::string stage;
  /// The shape its stages are computed over, where that merges trailing dimensions of `shape`
  /// into one (the same elements in the same row-major order; empty: `shape` itself). A
  /// pointwise convolution computes its image as one flat axis, so that whole vectors tile it.
  std::vector<int64_t> compute_shape;

  const std::vector<int64_t>& ComputeShape() const { return compute_shape.empty() ? shape : compute_shape; }
};

class DefinitionWriter {
 public:
  /// The kernel input reading model tensor `tensor` (declared on first use, named by `role` and
  /// a number when the role repeats); the same tensor is always the same input.
  std::string Input(const Tensor& tensor, const std::string& role);
  /// A stage name not used yet: `base`, else `base2`, `base3`, ...
  std::string FreshName(const std::string& base);
  /// Adds a stage: `name[axes] = body`; returns the stage's value.
  KernelValue Stage(const std::string& name, const std::vector<int64_t>& shape,
                    const std::function<std::string(const Index&)>& body);
  /// Adds a reduction stage: `name[axes] = kind[raxes](body)`.
  KernelValue Reduction(const std::string& name, const std::vector<int64_t>& shape,
                        const std::string& kind, const std::vector<int64_t>& reduce_extents,
                        const std::function<std::string(const Index& axes, const Index& raxes)>& body);

  /// Writes `value` as a stage over its compute shape (a stage of `shape` read through the
  /// value's index, else); returns the stage's elements as a value of `value.shape`.
  KernelValue Materialize(const std::string& name, const KernelValue& value);

  /// The definition so far, one statement a line.
  std::string Text() const;
  /// Model tensors in the order of the kernel's inputs.
  const std::vector<std::string>& input_tensors() const { return input_tensors_; }

 private:
  std::vector<std::string> inputs_;  // `input x: float32[...]` lines
  std::vector<std::string> stages_;
  std::vector<std::string> input_tensors_;
  std::vector<std::string> input_names_;
  std::vector<std::string> used_names_;
  int next_axis_ = 0;  // axis names are unique across the definition (a0, a1, ... / r0, r1, ...)
};

/// A float32 literal that reads back exactly.
std::string FloatLiteral(double value);
/// The index into a tensor of shape `from` that numpy-style broadcasting reads at `index` of a
/// result of shape `to` (trailing dimensions aligned; a dimension of 1 reads element 0).
Index BroadcastIndex(const std::vector<int64_t>& from, const std::vector<int64_t>& to, const Index& index);
/// The index into `shape` of element `flat` of `compute_shape` (dimensions of `shape` merged,
/// KernelValue::compute_shape): a merged dimension is recovered with floordiv and floormod.
Index ExpandIndex(const std::vector<int64_t>& shape, const std::vector<int64_t>& compute_shape, const Index& flat);
/// The inverse: the index into `compute_shape` of `index` into `shape`. An index ExpandIndex
/// wrote gives back its flat variable, so a stage reads another at its own axes.
Index FlattenIndex(const std::vector<int64_t>& shape, const std::vector<int64_t>& compute_shape, const Index& index);
/// A stage's value (over `stage.shape`, which merges dimensions of `shape`) read as a value of
/// `shape`.
KernelValue ViewAs(const KernelValue& stage, const std::vector<int64_t>& shape);
/// `a[i, j]`, or `a[0]` for a rank-0 tensor (stored as one element).
std::string Access(const std::string& name, const Index& index);

}  // namespace tuned::model

#endif  // TUNED_MODEL_DEFINITION_WRITER_H_
