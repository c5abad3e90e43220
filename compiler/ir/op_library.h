#ifndef TUNED_COMPILER_IR_OP_LIBRARY_H_
#define TUNED_COMPILER_IR_OP_LIBRARY_H_

/// \file
/// The library of built-in ops and the parser of workload specs such as
/// "matmul(M=1024,N=1024,K=1024,dtype=float32)". Each op declares its parameters (with
/// defaults); a spec's canonical key lists every parameter in declaration order, so
/// "matmul(K=64,M=64,N=64)" and "matmul(M=64, N=64, K=64, dtype=float32)" are one workload.

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "compiler/ir/workload.h"

namespace tuned::ir {

enum class ParamKind : uint8_t { kInt, kDtype, kBool, kChoice };

struct ParamSpec {
  std::string name;
  ParamKind kind = ParamKind::kInt;
  std::string default_value;          // empty: required
  std::vector<std::string> choices;   // for kChoice
  int64_t min_value = 1;              // for kInt
  // For kInt: every integer parameter is an extent, a stride, a padding or a dilation, so the
  // shape arithmetic of the builders stays far from overflowing an int64_t.
  int64_t max_value = int64_t(1) << 31;
};

/// Parsed, validated parameter values of one op.
class OpParams {
 public:
  explicit OpParams(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  int64_t Int(const std::string& name) const;
  DataType Dtype(const std::string& name) const;
  bool Bool(const std::string& name) const;
  const std::string& Text(const std::string& name) const;

 private:
  std::map<std::string, std::string> values_;
};

struct OpDef {
  std::string name;
  std::string summary;
  std::vector<ParamSpec> params;
  std::function<StatusOr<Workload>(const OpParams&, std::vector<std::pair<std::string, std::string>>)>
      build;
};

/// Every built-in op, in the order `tuned ops` lists them.
const std::vector<OpDef>& OpLibrary();

struct SpecLimits {
  /// Largest buffer (input, intermediate or output) a spec may ask for, in bytes.
  int64_t max_buffer_bytes = int64_t(1) << 31;
};

/// Parses and builds a workload from a spec; errors name the op, the parameter and the rule.
StatusOr<Workload> ParseWorkloadSpec(std::string_view spec, const SpecLimits& limits = {});

}  // namespace tuned::ir

#endif  // TUNED_COMPILER_IR_OP_LIBRARY_H_
