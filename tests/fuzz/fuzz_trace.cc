// Traces from the wire (a worker's job) and the log: decoded, replayed and lowered. An accepted
// trace must lower to a program that computes what the float64 reference computes, with every
// access in bounds (the interpreter checks each one); a refused one must say why.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/evaluator.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/interpreter.h"
#include "compiler/lower/pipeline.h"
#include "fuzz_check.h"
#include "fuzz_trace_input.h"
#include "tuned/v1/trace.pb.h"

using namespace tuned;

namespace {

struct Case {
  std::shared_ptr<const ir::Workload> workload;
  std::map<std::string, std::vector<double>> inputs;
  std::vector<double> expected;
};

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = [] {
    std::vector<Case> built;
    for (const std::string& spec : fuzz::TraceWorkloadSpecs()) {
      StatusOr<ir::Workload> parsed = ir::ParseWorkloadSpec(spec);
      fuzz::Check(parsed.ok(), "fuzz workload " + spec + " does not parse");
      Case c;
      c.workload = std::make_shared<const ir::Workload>(std::move(parsed).value());
      c.inputs = ir::RandomInputs(*c.workload, 1);
      auto reference = ir::EvaluateReference(*c.workload, c.inputs);
      fuzz::Check(reference.ok(), "no reference for " + spec);
      c.expected = reference->at(c.workload->output_stage().name);
      built.push_back(std::move(c));
    }
    return built;
  }();
  return cases;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::QuietProtobufLog();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Case& c = Cases()[data[0] % Cases().size()];
  v1::Trace trace;
  if (!trace.ParseFromArray(data + 1, int(size - 1))) return 0;  // not a message: refused by gRPC
  StatusOr<lower::LoweredFunc> func = lower::LowerTraceProto(c.workload, trace);
  if (!func.ok()) {
    fuzz::Check(!func.status().message().empty(), "a refused trace has no error message");
    return 0;
  }
  const std::string context = c.workload->key() + "\nprogram:\n" + ir::ToString(func->body);
  StatusOr<std::vector<double>> actual = lower::Interpret(*func, c.inputs);
  fuzz::Check(actual.ok(), "an accepted trace lowers to a program that fails: " +
                               (actual.ok() ? std::string() : actual.status().message()) + "\n" +
                               context);
  const double error = ir::MaxRelativeError(*actual, c.expected);
  fuzz::Check(error <= ir::ToleranceFor(c.workload->output_stage().output->dtype),
              "an accepted trace computes a wrong result (error " + std::to_string(error) +
                  ")\n" + context);
  return 0;
}
