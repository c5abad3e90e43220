#ifndef TUNED_TESTS_UNIT_SEARCH_SEARCH_TEST_CONTEXT_H_
#define TUNED_TESTS_UNIT_SEARCH_SEARCH_TEST_CONTEXT_H_

/// \file
/// The CPU search context the design-space tests sample in: a workload spec on a 2-core AVX2
/// target (8 fp32 lanes).

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "compiler/ir/op_library.h"
#include "server/search/search_strategy.h"

namespace tuned::search {

inline constexpr int kTestLanes = 8;

inline SearchContext ContextFor(const std::string& spec) {
  auto w = ir::ParseWorkloadSpec(spec);
  EXPECT_TRUE(w.ok()) << spec;
  SearchContext ctx;
  ctx.workload = std::make_shared<const ir::Workload>(std::move(w).value());
  ctx.target = "llvm -mcpu=znver3 -num-cores=2";
  ctx.num_cores = 2;
  ctx.vector_lanes = kTestLanes;
  return ctx;
}

}  // namespace tuned::search

#endif  // TUNED_TESTS_UNIT_SEARCH_SEARCH_TEST_CONTEXT_H_
