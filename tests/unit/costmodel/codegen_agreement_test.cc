// The features describe what the code generator really emits: for lowered programs (hand
// schedules and random ones of every op), the fused multiply-adds the features count, times
// the copies the unroll features say the code generator makes, equal the llvm.fmuladd calls in
// the emitted LLVM IR. A disagreement on FMA contraction or on which loops are (auto-)unrolled
// changes one side only.

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>

#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/codegen/llvm/cpu_target.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/lower.h"
#include "costmodel/features/features.h"
#include "tests/support/random_schedule.h"
#include "tests/support/workload_spec.h"

namespace tuned::costmodel {
namespace {

std::shared_ptr<const ir::Workload> Workload(const std::string& spec) { return testing::WorkloadOfSpec(spec); }

float Feature(const std::vector<float>& f, const std::string& name) {
  const std::vector<std::string>& names = FeatureNames();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return f[i];
  }
  ADD_FAILURE() << "no feature named " << name;
  return 0;
}

// The inverse of the features' log2(x + 1).
double Unlog(float v) { return std::exp2(double(v)) - 1.0; }

// fmuladd sites the features predict: per store, fma per iteration times the copies of the
// store that unrolling makes (explicitly unrolled extents times auto-unrolled extents).
double PredictedFmaSites(const std::vector<float>& f) {
  double sites = 0;
  for (int i = 0; i < kTopStores; ++i) {
    const std::string s = "s" + std::to_string(i) + ".";
    double iterations = Unlog(Feature(f, s + "iterations"));
    if (iterations == 0) continue;
    double per_iteration = Unlog(Feature(f, s + "float_fma")) / iterations;
    double copies = Feature(f, s + "unroll_loops") > 0 ? Unlog(Feature(f, s + "unroll_product")) : 1;
    if (Feature(f, s + "auto_unroll_max_step") > 0) copies *= Unlog(Feature(f, s + "auto_unroll_steps"));
    sites += per_iteration * copies;
  }
  return sites;
}

int FmaCallsInIr(const std::string& ir) {
  std::istringstream lines(ir);
  std::string line;
  int calls = 0;
  while (std::getline(lines, line)) {
    if (line.find("call ") != std::string::npos && line.find("@llvm.fmuladd") != std::string::npos) {
      ++calls;
    }
  }
  return calls;
}

int GatherScatterCallsInIr(const std::string& ir) {
  std::istringstream lines(ir);
  std::string line;
  int calls = 0;
  while (std::getline(lines, line)) {
    if (line.find("call ") == std::string::npos) continue;
    if (line.find("@llvm.masked.gather") != std::string::npos ||
        line.find("@llvm.masked.scatter") != std::string::npos) {
      ++calls;
    }
  }
  return calls;
}

StatusOr<std::string> UnoptimizedIr(const lower::LoweredFunc& func) {
  StatusOr<target::Target> host = codegen::HostCpuTarget();
  if (!host.ok()) return host.status();
  return codegen::EmitLlvmIr({func}, *host, {}, /*optimize=*/false);
}

// Checks one program; returns false (without failing) when the features cannot say: more
// stores than the features give blocks to.
bool CheckAgreement(const schedule::Schedule& sch, const std::string& what) {
  // The program the search computes features of (guards in place); both sides see the same one.
  StatusOr<lower::LoweredFunc> func = lower::Lower(sch, "kernel", {.hoist_guards = false});
  if (!func.ok()) return false;
  std::vector<float> f = ExtractFeatures(*func);
  if (Feature(f, "g.num_stores") > float(kTopStores)) return false;
  StatusOr<std::string> ir = UnoptimizedIr(*func);
  EXPECT_TRUE(ir.ok()) << what << ": " << ir.status().ToString();
  if (!ir.ok()) return false;
  const double predicted = PredictedFmaSites(f);
  EXPECT_NEAR(predicted, double(FmaCallsInIr(*ir)), 0.25) << what << "\n" << ir::ToString(func->body);
  return true;
}

TEST(FeaturesAgreeWithCodegen, HandSchedules) {
  {
    schedule::Schedule sch(Workload("matmul(M=16,N=32,K=8)"), 1);
    EXPECT_TRUE(CheckAgreement(sch, "matmul, default schedule"));
  }
  {
    // j split, inner part vectorized, k unrolled, auto-unroll over the row loop.
    schedule::Schedule sch(Workload("matmul(M=16,N=32,K=8)"), 1);
    auto block = sch.GetBlock("C");
    ASSERT_TRUE(block.ok());
    auto loops = sch.GetLoops(*block);
    ASSERT_TRUE(loops.ok());
    auto j = sch.Split((*loops)[1], {schedule::Factor{}, schedule::Factor{8}});
    ASSERT_TRUE(j.ok());
    ASSERT_TRUE(sch.Reorder({(*loops)[0], (*j)[0], (*loops)[2], (*j)[1]}).ok());
    ASSERT_TRUE(sch.Vectorize((*j)[1]).ok());
    ASSERT_TRUE(sch.Annotate((*loops)[0], "auto_unroll_max_step", 64).ok());
    EXPECT_TRUE(CheckAgreement(sch, "matmul, vectorized and auto-unrolled"));
  }
  {
    schedule::Schedule sch(Workload("matmul(M=8,N=8,K=4)"), 1);
    auto block = sch.GetBlock("C");
    ASSERT_TRUE(block.ok());
    auto loops = sch.GetLoops(*block);
    ASSERT_TRUE(loops.ok());
    ASSERT_TRUE(sch.Unroll((*loops)[2]).ok());
    ASSERT_TRUE(sch.Annotate((*loops)[0], "auto_unroll_max_step", 16).ok());
    EXPECT_TRUE(CheckAgreement(sch, "matmul, k unrolled, auto-unroll over i"));
  }
  EXPECT_TRUE(CheckAgreement(schedule::Schedule(Workload("conv2d_nchw(N=1,C=3,H=8,W=8,F=4,R=3,S=3,pad=1)"), 1),
                             "conv2d, default schedule"));
  EXPECT_TRUE(CheckAgreement(schedule::Schedule(Workload("reduce_rows(M=8,N=16,kind=sum)"), 1),
                             "reduction, default schedule"));
  EXPECT_TRUE(CheckAgreement(schedule::Schedule(Workload("add(M=8,N=16)"), 1), "elementwise add"));
}

// `spec` with the loops of block `block_name` put in `order`, the last one vectorized.
schedule::Schedule VectorizedAlong(const std::string& spec, const std::string& block_name,
                                   std::vector<size_t> order) {
  schedule::Schedule sch(Workload(spec), 1);
  auto block = sch.GetBlock(block_name);
  EXPECT_TRUE(block.ok());
  auto loops = sch.GetLoops(*block);
  EXPECT_TRUE(loops.ok());
  std::vector<schedule::LoopRV> reordered;
  for (size_t k : order) reordered.push_back((*loops)[k]);
  EXPECT_TRUE(sch.Reorder(reordered).ok());
  EXPECT_TRUE(sch.Vectorize(reordered.back()).ok());
  return sch;
}

// Accesses the features count as gathers along the vectorized loop are the gathers and scatters
// the code generator emits (both decide through analysis::AnalyzeAccess and LoadsAsSpan; an
// unmasked strided store is a store per lane).
TEST(FeaturesAgreeWithCodegen, StridedVectorAccessesAreGathers) {
  struct Case {
    std::string what;
    schedule::Schedule sch;
    int min_gathers;  // so that each case shows what it is meant to show
  };
  std::vector<Case> cases;
  cases.push_back({"matmul vectorized along j (unit stride)",
                   VectorizedAlong("matmul(M=8,N=16,K=4)", "C", {0, 2, 1}), 0});
  cases.push_back({"matmul vectorized along i (strided A gathered, C stored one lane at a time)",
                   VectorizedAlong("matmul(M=8,N=16,K=4)", "C", {1, 2, 0}), 1});
  cases.push_back({"add vectorized along rows (strided loads gathered, the store one per lane)",
                   VectorizedAlong("add(M=8,N=16)", "add", {1, 0}), 2});
  cases.push_back({"every other element of a row (stride-2 load read as a span, no gather)",
                   VectorizedAlong("tdl: input A: float32[8, 32]; out[i: 8, j: 16]: float32 = A[i, j * 2] * 3.0",
                                   "out", {0, 1}),
                   0});
  for (const Case& c : cases) {
    StatusOr<lower::LoweredFunc> func = lower::Lower(c.sch);
    ASSERT_TRUE(func.ok()) << c.what << ": " << func.status().ToString();
    std::vector<float> f = ExtractFeatures(*func);
    ASSERT_LE(Feature(f, "g.num_stores"), float(kTopStores)) << c.what;
    double predicted = 0;
    for (int i = 0; i < kTopStores; ++i) predicted += Feature(f, "s" + std::to_string(i) + ".vec_gathers");
    StatusOr<std::string> ir = UnoptimizedIr(*func);
    ASSERT_TRUE(ir.ok()) << ir.status().ToString();
    EXPECT_EQ(predicted, double(GatherScatterCallsInIr(*ir))) << c.what << "\n" << ir::ToString(func->body);
    EXPECT_GE(predicted, c.min_gathers) << c.what;
  }
}

// A strided store under an if that tests the vector loop's variable is written under a lane
// mask: the features count the scatter the code generator emits. C[j, i] = A[i, j] for j < 5 of
// 8 lanes (the program is built by hand: lowering partitions such a guard away).
TEST(FeaturesAgreeWithCodegen, AMaskedStridedStoreIsAScatter) {
  using namespace ir;
  Buffer A = MakeBuffer("A", DataType::Float32(), {3, 8}), C = MakeBuffer("C", DataType::Float32(), {5, 3});
  Var i = MakeVar("i"), j = MakeVar("j");
  Stmt store = MakeStore(C, {Expr(j), Expr(i)}, MakeLoad(A, {Expr(i), Expr(j)}));
  lower::LoweredFunc func{"masked", {A, C},
                          MakeFor(i, 0, 3, ForKind::kSerial,
                                  MakeFor(j, 0, 8, ForKind::kVectorized, MakeIfThenElse(Expr(j) < MakeInt(5), store)))};
  std::vector<float> f = ExtractFeatures(func);
  StatusOr<std::string> ir = UnoptimizedIr(func);
  ASSERT_TRUE(ir.ok()) << ir.status().ToString();
  EXPECT_EQ(Feature(f, "s0.vec_gathers"), 1.f) << *ir;
  EXPECT_EQ(GatherScatterCallsInIr(*ir), 1) << *ir;
  EXPECT_NE(ir->find("@llvm.masked.scatter"), std::string::npos) << *ir;
}

// A row loop annotated prefetch_ahead: the feature gives the distance, and the code generator
// prefetches each argument's vector loads that many rows ahead (the row stride times it), while
// the output it stores and a loop without the annotation get no prefetch.
TEST(FeaturesAgreeWithCodegen, PrefetchesAheadAreTheOnesTheFeatureSays) {
  for (int64_t ahead : {0, 2}) {
    schedule::Schedule sch(Workload("add(M=8,N=32)"), 1);
    auto block = sch.GetBlock("add");
    ASSERT_TRUE(block.ok());
    auto loops = sch.GetLoops(*block);
    ASSERT_TRUE(loops.ok());
    auto j = sch.Split((*loops)[1], {schedule::Factor{}, schedule::Factor{16}});
    ASSERT_TRUE(j.ok());
    ASSERT_TRUE(sch.Vectorize((*j)[1]).ok());
    ASSERT_TRUE(sch.Annotate((*loops)[0], "prefetch_ahead", ahead).ok());
    ASSERT_TRUE(sch.Parallel((*loops)[0]).ok());
    StatusOr<lower::LoweredFunc> func = lower::Lower(sch);
    ASSERT_TRUE(func.ok()) << func.status().ToString();
    EXPECT_NEAR(Unlog(Feature(ExtractFeatures(*func), "s0.prefetch_ahead")), double(ahead), 1e-4);
    StatusOr<std::string> ir = UnoptimizedIr(*func);
    ASSERT_TRUE(ir.ok()) << ir.status().ToString();
    int prefetches = 0;
    std::istringstream lines(*ir);
    for (std::string line; std::getline(lines, line);) {
      prefetches += line.find("call void @llvm.prefetch") != std::string::npos;
    }
    EXPECT_EQ(prefetches, ahead ? 2 : 0) << *ir;  // both inputs, not the output
    if (ahead) {
      EXPECT_NE(ir->find("i64 64"), std::string::npos) << "two rows of 32 ahead\n" << *ir;
    }
  }
}

TEST(FeaturesAgreeWithCodegen, RandomSchedulesOfEveryOp) {
  int checked = 0, with_fma = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    for (const std::string& spec : testing::SmallSpecs(seed)) {
      schedule::Schedule sch = testing::RandomSchedule(Workload(spec), seed);
      const std::string what = spec + " seed " + std::to_string(seed);
      if (!CheckAgreement(sch, what)) continue;
      ++checked;
      StatusOr<lower::LoweredFunc> func = lower::Lower(sch);
      if (func.ok() && Feature(ExtractFeatures(*func), "s0.float_fma") > 0) ++with_fma;
    }
  }
  // Most programs fit in the store blocks, and many contract FMAs: the check is not vacuous.
  EXPECT_GE(checked, 40);
  EXPECT_GE(with_fma, 15);
}

}  // namespace
}  // namespace tuned::costmodel
