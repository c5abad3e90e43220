#ifndef TUNED_TESTS_SUPPORT_WORKLOAD_SPEC_H_
#define TUNED_TESTS_SUPPORT_WORKLOAD_SPEC_H_

/// \file
/// The workload of a spec string, for tests: a bad spec stops the test binary with its message
/// (a test's own specs are constants, so that is a bug in the test).

#include <memory>
#include <string>

#include "common/check.h"
#include "compiler/ir/op_library.h"

namespace tuned::testing {

inline std::shared_ptr<const ir::Workload> WorkloadOfSpec(const std::string& spec) {
  StatusOr<ir::Workload> w = ir::ParseWorkloadSpec(spec);
  TUNED_CHECK(w.ok()) << spec << ": " << w.status().message();
  return std::make_shared<const ir::Workload>(std::move(w).value());
}

}  // namespace tuned::testing

#endif  // TUNED_TESTS_SUPPORT_WORKLOAD_SPEC_H_
