// Hand-built loop programs through the JIT, compared with the interpreter: every loop kind,
// predicates of imperfect splits, selects whose untaken branch would read out of bounds (the
// buffer sits next to a guard page, so such a read crashes), allocations and dtypes. The
// emitted LLVM IR is checked for the instructions each rule promises.

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/codegen/llvm/llvm_jit.h"
#include "compiler/ir/evaluator.h"
#include "compiler/lower/interpreter.h"
#include "compiler/runtime/parallel.h"
#include "tests/support/text_count.h"
#include "tests/unit/compiler/codegen/codegen_test_util.h"

namespace tuned::codegen {
namespace {

using namespace tuned::ir;
using lower::LoweredFunc;
using ::testing::HasSubstr;
using ::testing::Not;
using Inputs = std::map<std::string, std::vector<double>>;

std::vector<double> RandomValues(const Buffer& b, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(size_t(b->num_elements()));
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> integer(-8, 8);
  for (double& x : v) x = b->dtype.is_float() ? RoundToType(real(rng), b->dtype) : integer(rng);
  return v;
}

class JitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::unique_ptr<LlvmJit>> jit = LlvmJit::Create(testing::HostTarget());
    ASSERT_TRUE(jit.ok()) << jit.status().message();
    jit_ = std::move(jit).value();
  }

  Inputs RandomInputsFor(const LoweredFunc& f, uint64_t seed = 7) {
    Inputs inputs;
    for (size_t i = 0; i + 1 < f.args.size(); ++i) {
      inputs[f.args[i]->name] = RandomValues(f.args[i], seed + i);
    }
    return inputs;
  }

  void ExpectMatchesInterpreter(const LoweredFunc& f, const Inputs& inputs, double tolerance) {
    StatusOr<std::vector<double>> expected = lower::Interpret(f, inputs);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    StatusOr<std::vector<double>> actual = testing::RunOnJit(*jit_, f, inputs);
    ASSERT_TRUE(actual.ok()) << actual.status().message();
    EXPECT_LE(MaxRelativeError(*actual, *expected), tolerance) << f.name;
  }

  void ExpectMatchesInterpreter(const LoweredFunc& f, double tolerance = 1e-5) {
    ExpectMatchesInterpreter(f, RandomInputsFor(f), tolerance);
  }

  std::string Ir(const LoweredFunc& f, bool optimize, CodegenOptions options = {}) {
    StatusOr<std::string> ir = EmitLlvmIr({f}, testing::HostTarget(), options, optimize);
    EXPECT_TRUE(ir.ok()) << ir.status().message();
    return ir.ok() ? *ir : "";
  }

  std::unique_ptr<LlvmJit> jit_;
};

// C[i, j] = A[i, j] + B[i, j] with the inner loop of the given kind.
LoweredFunc AddProgram(ForKind inner, int64_t m, int64_t n, DataType t = DataType::Float32()) {
  Buffer A = MakeBuffer("A", t, {m, n}), B = MakeBuffer("B", t, {m, n});
  Buffer C = MakeBuffer("C", t, {m, n});
  Var i = MakeVar("i"), j = MakeVar("j");
  Expr sum = MakeLoad(A, {AsExpr(i), AsExpr(j)}) + MakeLoad(B, {AsExpr(i), AsExpr(j)});
  Stmt body = MakeStore(C, {AsExpr(i), AsExpr(j)}, sum);
  return {"add_kernel", {A, B, C},
          MakeFor(i, 0, m, ForKind::kSerial, MakeFor(j, 0, n, inner, body))};
}

TEST_F(JitTest, SerialLoopsMatchInterpreter) { ExpectMatchesInterpreter(AddProgram(ForKind::kSerial, 5, 13)); }

TEST_F(JitTest, VectorizedLoopBecomesVectorLoadsAndStores) {
  LoweredFunc f = AddProgram(ForKind::kVectorized, 3, 8);
  std::string ir = Ir(f, /*optimize=*/false);
  EXPECT_THAT(ir, HasSubstr("load <8 x float>"));
  EXPECT_THAT(ir, HasSubstr("store <8 x float>"));
  ExpectMatchesInterpreter(f);
}

// An output of kMinStreamingStoreBytes or more, written in aligned whole vectors and never read,
// is written with streaming stores and an sfence; smaller, read, or misaligned outputs are not.
TEST_F(JitTest, LargeOutputsNeverReadAreWrittenWithAlignedStreamingStores) {
  const int64_t rows = kMinStreamingStoreBytes / (16 * 4);  // 16 floats a row
  LoweredFunc streamed = AddProgram(ForKind::kVectorized, rows, 16);
  std::string ir = Ir(streamed, /*optimize=*/false);
  EXPECT_THAT(ir, HasSubstr("store <16 x float> %"));
  EXPECT_THAT(ir, HasSubstr("align 64, !nontemporal"));
  EXPECT_THAT(ir, HasSubstr("call void @llvm.x86.sse.sfence()"));
  ExpectMatchesInterpreter(streamed);

  EXPECT_THAT(Ir(AddProgram(ForKind::kVectorized, 4, 16), false), Not(HasSubstr("nontemporal")));
  // Read back (an accumulation into the output) or stored one element off the vector alignment.
  for (int64_t shift : {int64_t(0), int64_t(1)}) {
    Buffer A = MakeBuffer("A", DataType::Float32(), {rows, 17}), C = MakeBuffer("C", DataType::Float32(), {rows, 17});
    Var i = MakeVar("i"), j = MakeVar("j");
    std::vector<Expr> at = {AsExpr(i), AsExpr(j) + MakeInt(shift)};
    Expr value = MakeLoad(A, at);
    if (shift == 0) value = value + MakeLoad(C, at);
    LoweredFunc f{"not_streamed", {A, C},
                  MakeFor(i, 0, rows, ForKind::kSerial, MakeFor(j, 0, 16, ForKind::kVectorized, MakeStore(C, at, value)))};
    EXPECT_THAT(Ir(f, false), Not(HasSubstr("nontemporal"))) << "shift " << shift;
  }
}

TEST_F(JitTest, WideVectorizedLoopIsStripMined) {
  LoweredFunc f = AddProgram(ForKind::kVectorized, 2, 100);
  EXPECT_THAT(Ir(f, false), HasSubstr("<16 x float>"));
  ExpectMatchesInterpreter(f);
}

// A vectorized loop of a few registers whose width is no power of two (a register tile of three
// vectors) is emitted one register at a time: the back end split a <48 x float> into pieces
// that went through the stack.
TEST_F(JitTest, AVectorOfThreeRegistersIsEmittedAsThreeRegisterVectors) {
  const int64_t lanes = testing::HostTarget().Fp32VectorLanes();
  for (int64_t extent : {3 * lanes, 2 * lanes + lanes / 2}) {
    LoweredFunc f = AddProgram(ForKind::kVectorized, 2, extent);
    std::string ir = Ir(f, false);
    EXPECT_THAT(ir, HasSubstr("store <" + std::to_string(lanes) + " x float>")) << extent;
    EXPECT_THAT(ir, Not(HasSubstr("<" + std::to_string(extent) + " x float>"))) << extent;
    ExpectMatchesInterpreter(f);
  }
  EXPECT_THAT(Ir(AddProgram(ForKind::kVectorized, 2, 4 * lanes), false),
              HasSubstr("store <" + std::to_string(4 * lanes) + " x float>"))
      << "a power of two stays one vector";
}

// A masked vector access whose every lane lies in a stack array (a register tile's accumulator
// on the edge tile of a padded split) is a plain load, a select and a store, which LLVM keeps in
// registers; an access that may leave the array, or one to an argument, stays masked.
TEST_F(JitTest, MaskedAccessesInsideAStackArrayAreSelects) {
  const int64_t lanes = testing::HostTarget().Fp32VectorLanes(), n = lanes - 3;
  for (int64_t scratch : {lanes, n}) {
    Buffer A = MakeBuffer("A", DataType::Float32(), {n}), C = MakeBuffer("C", DataType::Float32(), {n});
    Buffer acc = MakeBuffer("acc", DataType::Float32(), {scratch}, MemoryScope::kLocal);
    Var j = MakeVar("j"), k = MakeVar("k");
    Expr in_domain_j = AsExpr(j) < MakeInt(n), in_domain_k = AsExpr(k) < MakeInt(n);
    Stmt fill = MakeFor(j, 0, lanes, ForKind::kVectorized,
                        MakeIfThenElse(in_domain_j, MakeStore(acc, {AsExpr(j)}, MakeLoad(A, {AsExpr(j)}) * MakeFloat(2.0))));
    Stmt write = MakeFor(k, 0, lanes, ForKind::kVectorized,
                         MakeIfThenElse(in_domain_k, MakeStore(C, {AsExpr(k)}, MakeLoad(acc, {AsExpr(k)}) + MakeFloat(1.0))));
    LoweredFunc f{"edge_tile", {A, C}, MakeAllocate(acc, MakeSeq({fill, write}))};
    std::string ir = Ir(f, false);
    auto count = [&](const std::string& what) {
      int found = 0;
      for (size_t at = ir.find(what); at != std::string::npos; at = ir.find(what, at + 1)) ++found;
      return found;
    };
    // The argument C is always written masked, A always read masked.
    EXPECT_EQ(count("call void @llvm.masked.store"), scratch == lanes ? 1 : 2) << ir;
    EXPECT_EQ(count("call <" + std::to_string(lanes) + " x float> @llvm.masked.load"), scratch == lanes ? 1 : 2) << ir;
    ExpectMatchesInterpreter(f);
  }
}

// C[i, j] = A[i] * B[j, i] + C0[j] with j vectorized: A is lane-invariant (broadcast), B is
// strided (gather), C0 contiguous.
TEST_F(JitTest, VectorizedInvariantAndStridedAccesses) {
  const int64_t m = 6, n = 8;
  Buffer A = MakeBuffer("A", DataType::Float32(), {m});
  Buffer B = MakeBuffer("B", DataType::Float32(), {n, m});
  Buffer D = MakeBuffer("D", DataType::Float32(), {n});
  Buffer C = MakeBuffer("C", DataType::Float32(), {m, n});
  Var i = MakeVar("i"), j = MakeVar("j");
  Expr value = MakeLoad(A, {AsExpr(i)}) * MakeLoad(B, {AsExpr(j), AsExpr(i)}) + MakeLoad(D, {AsExpr(j)});
  LoweredFunc f{"mixed", {A, B, D, C},
                MakeFor(i, 0, m, ForKind::kSerial,
                        MakeFor(j, 0, n, ForKind::kVectorized,
                                MakeStore(C, {AsExpr(i), AsExpr(j)}, value)))};
  std::string ir = Ir(f, false);
  EXPECT_THAT(ir, HasSubstr("llvm.masked.gather.v8f32"));
  EXPECT_THAT(ir, HasSubstr("llvm.fmuladd.v8f32"));
  ExpectMatchesInterpreter(f);
}

// C[j, i] = A[i, j] * 2 with j vectorized: the store's stride is the row of C. Unmasked, it is
// one scalar store per lane at a constant distance from the first (a channel-vectorized
// convolution tile written to NCHW); under a mask, the scatter.
TEST_F(JitTest, AStridedStoreIsOneStorePerLaneUnlessMasked) {
  const int64_t lanes = testing::HostTarget().Fp32VectorLanes(), m = 5;
  for (int64_t n : {lanes, lanes - 3}) {
    Buffer A = MakeBuffer("A", DataType::Float32(), {m, lanes});
    Buffer C = MakeBuffer("C", DataType::Float32(), {n, m});
    Var i = MakeVar("i"), j = MakeVar("j");
    Stmt store = MakeStore(C, {AsExpr(j), AsExpr(i)}, MakeLoad(A, {AsExpr(i), AsExpr(j)}) * MakeFloat(2.0));
    if (n < lanes) store = MakeIfThenElse(AsExpr(j) < MakeInt(n), store);
    LoweredFunc f{"transpose", {A, C},
                  MakeFor(i, 0, m, ForKind::kSerial, MakeFor(j, 0, lanes, ForKind::kVectorized, store))};
    std::string ir = Ir(f, false);
    int scalar_stores = 0;
    for (size_t at = ir.find("store float"); at != std::string::npos; at = ir.find("store float", at + 1)) ++scalar_stores;
    if (n == lanes) {
      EXPECT_THAT(ir, Not(HasSubstr("llvm.masked.scatter"))) << ir;
      EXPECT_EQ(scalar_stores, lanes) << ir;
    } else {
      EXPECT_THAT(ir, HasSubstr("llvm.masked.scatter")) << ir;
      EXPECT_EQ(scalar_stores, 0) << ir;
    }
    ExpectMatchesInterpreter(f);
  }
}

// An imperfect split: for io, for ii (vectorized 8): if (io * 8 + ii < 37) C[...] = A[...] * 2,
// with the outer loop parallel.
LoweredFunc ImperfectSplit(ForKind outer, ForKind inner) {
  const int64_t n = 37, factor = 8;
  Buffer A = MakeBuffer("A", DataType::Float32(), {n});
  Buffer C = MakeBuffer("C", DataType::Float32(), {n});
  Var io = MakeVar("io"), ii = MakeVar("ii");
  Expr index = AsExpr(io) * factor + AsExpr(ii);
  Stmt store = MakeStore(C, {index}, MakeLoad(A, {index}) * MakeFloat(2.0));
  Stmt guarded = MakeIfThenElse(index < MakeInt(n), store);
  return {"split", {A, C},
          MakeFor(io, 0, (n + factor - 1) / factor, outer, MakeFor(ii, 0, factor, inner, guarded))};
}

TEST_F(JitTest, ImperfectSplitPredicateBecomesMask) {
  LoweredFunc f = ImperfectSplit(ForKind::kParallel, ForKind::kVectorized);
  std::string ir = Ir(f, false);
  EXPECT_THAT(ir, HasSubstr("llvm.masked.load.v8f32"));
  EXPECT_THAT(ir, HasSubstr("llvm.masked.store.v8f32"));
  EXPECT_THAT(ir, HasSubstr("tuned_parallel_for"));
  ExpectMatchesInterpreter(f);
  ExpectMatchesInterpreter(ImperfectSplit(ForKind::kSerial, ForKind::kSerial));
  ExpectMatchesInterpreter(ImperfectSplit(ForKind::kUnrolled, ForKind::kUnrolled));
}

// Memory with an inaccessible page right after (or right before) a buffer's bytes, so a load
// one element out of bounds faults instead of reading garbage.
class GuardedBuffer {
 public:
  GuardedBuffer(size_t bytes, bool guard_after) {
    page_ = size_t(sysconf(_SC_PAGESIZE));
    size_t data_pages = (bytes + page_ - 1) / page_;
    total_ = (data_pages + 2) * page_;
    base_ = static_cast<char*>(
        mmap(nullptr, total_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    mprotect(base_, page_, PROT_NONE);
    mprotect(base_ + (data_pages + 1) * page_, page_, PROT_NONE);
    data_ = guard_after ? base_ + (data_pages + 1) * page_ - bytes : base_ + page_;
  }
  ~GuardedBuffer() { munmap(base_, total_); }
  void* data() { return data_; }

 private:
  size_t page_, total_;
  char* base_;
  char* data_;
};

// out[i] = inside(i) ? A[i + shift] : -1, for i past both ends of A. Evaluating the load for
// the untaken lanes would touch the guard page. The bounds come from an input buffer so that
// LLVM cannot fold the condition (and shrink an unguarded load to the lanes it keeps).
LoweredFunc PaddedRead(ForKind kind, int64_t shift, bool with_and) {
  const int64_t n = 16, extent = 32;
  Buffer limits = MakeBuffer("limits", DataType::Int32(), {2});
  Buffer A = MakeBuffer("A", DataType::Float32(), {n});
  Buffer out = MakeBuffer("out", DataType::Float32(), {extent});
  Var i = MakeVar("i");
  Expr src = AsExpr(i) + MakeInt(shift);
  Expr lo = MakeCast(DataType::Int64(), MakeLoad(limits, {MakeInt(0)}));
  Expr hi = MakeCast(DataType::Int64(), MakeLoad(limits, {MakeInt(1)}));
  Expr inside = (src >= lo) && (src < hi);
  Expr value;
  if (with_and) {
    // (inside && A[src] > 0) ? 1 : 0 : the load is the right side of &&.
    value = MakeSelect(inside && (MakeLoad(A, {src}) > MakeFloat(0.0)), MakeFloat(1.0), MakeFloat(0.0));
  } else {
    value = MakeSelect(inside, MakeLoad(A, {src}), MakeFloat(-1.0));
  }
  return {"padded", {limits, A, out},
          MakeFor(i, 0, extent, kind, MakeStore(out, {AsExpr(i)}, value))};
}

TEST_F(JitTest, SelectNeverLoadsInUntakenBranch) {
  for (ForKind kind : {ForKind::kSerial, ForKind::kVectorized, ForKind::kUnrolled}) {
    for (int64_t shift : {-8, 8}) {
      for (bool with_and : {false, true}) {
        LoweredFunc f = PaddedRead(kind, shift, with_and);
        if (kind == ForKind::kVectorized) {
          EXPECT_THAT(Ir(f, /*optimize=*/true), HasSubstr("llvm.masked.load.v32f32"));
        }
        Inputs inputs = RandomInputsFor(f);
        inputs["limits"] = {0, 16};
        StatusOr<std::vector<double>> expected = lower::Interpret(f, inputs);
        ASSERT_TRUE(expected.ok()) << expected.status().message();
        StatusOr<std::unique_ptr<JitKernel>> kernel = jit_->Compile(f);
        ASSERT_TRUE(kernel.ok()) << kernel.status().message();
        GuardedBuffer a(16 * sizeof(float), /*guard_after=*/shift > 0);
        for (int k = 0; k < 16; ++k) static_cast<float*>(a.data())[k] = float(inputs["A"][k]);
        runtime::AlignedBuffer limits(2 * sizeof(int32_t)), out(32 * sizeof(float));
        limits.as<int32_t>()[1] = 16;
        ASSERT_TRUE((*kernel)->Run({limits.data(), a.data(), out.data()}).ok());
        std::vector<double> actual(out.as<float>(), out.as<float>() + 32);
        EXPECT_LE(MaxRelativeError(actual, *expected), 0)
            << ForKindName(kind) << " shift " << shift << " and " << with_and;
      }
    }
  }
}

// for o in 32: for i (vectorized 8): if (o * 8 + i < limit) out[o * 8 + i] = A[o * 8 + i] * W[o],
// with W of 16 elements before a guard page and limit 128: W[o] is one element for all lanes (a
// scalar load and a broadcast, never a gather of one address), read only while a lane is active.
LoweredFunc MaskedBroadcast() {
  Buffer limits = MakeBuffer("limits", DataType::Int32(), {1});
  Buffer A = MakeBuffer("A", DataType::Float32(), {256});
  Buffer W = MakeBuffer("W", DataType::Float32(), {16});
  Buffer out = MakeBuffer("out", DataType::Float32(), {256});
  Var o = MakeVar("o"), i = MakeVar("i");
  Expr index = AsExpr(o) * 8 + AsExpr(i);
  Expr limit = MakeCast(DataType::Int64(), MakeLoad(limits, {MakeInt(0)}));
  Stmt store = MakeStore(out, {index}, MakeLoad(A, {index}) * MakeLoad(W, {AsExpr(o)}));
  return {"masked_broadcast", {limits, A, W, out},
          MakeFor(o, 0, 32, ForKind::kSerial,
                  MakeFor(i, 0, 8, ForKind::kVectorized, MakeIfThenElse(index < limit, store)))};
}

TEST_F(JitTest, LaneInvariantLoadUnderAMaskIsOneScalarLoadWhileALaneIsActive) {
  LoweredFunc f = MaskedBroadcast();
  std::string ir = Ir(f, /*optimize=*/false);
  EXPECT_THAT(ir, Not(HasSubstr("llvm.masked.gather")));
  EXPECT_THAT(ir, HasSubstr("llvm.vector.reduce.or.v8i1"));
  EXPECT_THAT(ir, HasSubstr("llvm.masked.load.v8f32"));
  Inputs inputs = RandomInputsFor(f);
  inputs["limits"] = {128};
  StatusOr<std::vector<double>> expected = lower::Interpret(f, inputs);
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  StatusOr<std::unique_ptr<JitKernel>> kernel = jit_->Compile(f);
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  GuardedBuffer w(16 * sizeof(float), /*guard_after=*/true);
  for (int k = 0; k < 16; ++k) static_cast<float*>(w.data())[k] = float(inputs["W"][k]);
  runtime::AlignedBuffer limits(sizeof(int32_t)), a(256 * sizeof(float)), out(256 * sizeof(float));
  limits.as<int32_t>()[0] = 128;
  for (int k = 0; k < 256; ++k) a.as<float>()[k] = float(inputs["A"][k]);
  std::memset(out.data(), 0, 256 * sizeof(float));
  Status run = (*kernel)->Run({limits.data(), a.data(), w.data(), out.data()});
  ASSERT_TRUE(run.ok()) << run.message();
  // The first 128 elements are written; the masked-off rest keeps its zeros.
  std::vector<double> written(out.as<float>(), out.as<float>() + 128);
  EXPECT_LE(MaxRelativeError(written, std::vector<double>(expected->begin(), expected->begin() + 128)), 1e-6);
  for (int k = 128; k < 256; ++k) EXPECT_EQ(out.as<float>()[k], 0.0f) << k;
}

// out[i, j] = A[i, 2j] + B[i, 3j + 1] with j vectorized (8 lanes): each strided row is read as
// the span of its lanes' elements (15 and 22 floats) and shuffled, not gathered.
TEST_F(JitTest, SmallStridesLoadTheirSpanAndShuffle) {
  const int64_t m = 3, n = 8;
  Buffer A = MakeBuffer("A", DataType::Float32(), {m, 2 * n});
  Buffer B = MakeBuffer("B", DataType::Float32(), {m, 3 * n});
  Buffer C = MakeBuffer("C", DataType::Float32(), {m, n});
  Var i = MakeVar("i"), j = MakeVar("j");
  Expr value = MakeLoad(A, {AsExpr(i), AsExpr(j) * 2}) + MakeLoad(B, {AsExpr(i), AsExpr(j) * 3 + MakeInt(1)});
  LoweredFunc f{"strided_rows", {A, B, C},
                MakeFor(i, 0, m, ForKind::kSerial,
                        MakeFor(j, 0, n, ForKind::kVectorized, MakeStore(C, {AsExpr(i), AsExpr(j)}, value)))};
  std::string ir = Ir(f, /*optimize=*/false);
  EXPECT_THAT(ir, Not(HasSubstr("llvm.masked.gather")));
  EXPECT_THAT(ir, HasSubstr("load <15 x float>"));
  EXPECT_THAT(ir, HasSubstr("load <22 x float>"));
  EXPECT_THAT(ir, HasSubstr("shufflevector <15 x float>"));
  ExpectMatchesInterpreter(f);
}

// for o in 8: for i (vectorized 8): if (o * 8 + i < limit) out[o * 8 + i] = A[3 * (o * 8 + i)],
// with A of 112 elements ending at a guard page and limit 37: lanes 38 and 39 of the fifth
// vector would read A[114] and A[117], and the later vectors are idle. Each span load is masked
// to the active lanes' own elements, so nothing past A is touched.
TEST_F(JitTest, MaskedStrideThreeLoadReadsOnlyTheActiveLanesElements) {
  const int64_t a_size = 112, limit_value = 37;
  Buffer limits = MakeBuffer("limits", DataType::Int32(), {1});
  Buffer A = MakeBuffer("A", DataType::Float32(), {a_size});
  Buffer out = MakeBuffer("out", DataType::Float32(), {64});
  Var o = MakeVar("o"), i = MakeVar("i");
  Expr index = AsExpr(o) * 8 + AsExpr(i);
  Expr limit = MakeCast(DataType::Int64(), MakeLoad(limits, {MakeInt(0)}));
  Stmt store = MakeStore(out, {index}, MakeLoad(A, {index * 3}) * MakeFloat(2.0));
  LoweredFunc f{"masked_stride_three", {limits, A, out},
                MakeFor(o, 0, 8, ForKind::kSerial,
                        MakeFor(i, 0, 8, ForKind::kVectorized, MakeIfThenElse(index < limit, store)))};
  std::string ir = Ir(f, /*optimize=*/false);
  EXPECT_THAT(ir, Not(HasSubstr("llvm.masked.gather")));
  EXPECT_THAT(ir, HasSubstr("llvm.masked.load.v32f32"));  // 22 elements, rounded up

  StatusOr<std::unique_ptr<JitKernel>> kernel = jit_->Compile(f);
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  GuardedBuffer a(size_t(a_size) * sizeof(float), /*guard_after=*/true);
  for (int k = 0; k < a_size; ++k) static_cast<float*>(a.data())[k] = float(k);
  runtime::AlignedBuffer limits_data(sizeof(int32_t)), result(64 * sizeof(float));
  limits_data.as<int32_t>()[0] = int32_t(limit_value);
  std::memset(result.data(), 0, 64 * sizeof(float));
  Status run = (*kernel)->Run({limits_data.data(), a.data(), result.data()});
  ASSERT_TRUE(run.ok()) << run.message();
  for (int k = 0; k < limit_value; ++k) EXPECT_EQ(result.as<float>()[k], float(3 * k) * 2.0f) << k;
  for (int k = int(limit_value); k < 64; ++k) EXPECT_EQ(result.as<float>()[k], 0.0f) << k;
}

TEST_F(JitTest, UnrolledLoopIsCopied) {
  LoweredFunc unrolled = AddProgram(ForKind::kUnrolled, 3, 4);
  EXPECT_THAT(Ir(unrolled, false), Not(HasSubstr("j.header")));
  EXPECT_THAT(Ir(AddProgram(ForKind::kSerial, 3, 4), false), HasSubstr("j.header"));
  ExpectMatchesInterpreter(unrolled);
}

// for o (auto_unroll_max_step = 16): { for a in 4: X[o, a] = ...; for b in 32: Y[o, b] = ... }
TEST_F(JitTest, AutoUnrollUnrollsOnlyLoopsThatFit) {
  Buffer A = MakeBuffer("A", DataType::Float32(), {2, 32});
  Buffer X = MakeBuffer("X", DataType::Float32(), {2, 36});
  Var o = MakeVar("o"), a = MakeVar("a"), b = MakeVar("b");
  Stmt small = MakeFor(a, 0, 4, ForKind::kSerial,
                       MakeStore(X, {AsExpr(o), AsExpr(a)}, MakeLoad(A, {AsExpr(o), AsExpr(a)})));
  Stmt large = MakeFor(b, 0, 32, ForKind::kSerial,
                       MakeStore(X, {AsExpr(o), AsExpr(b) + MakeInt(4)},
                                 MakeLoad(A, {AsExpr(o), AsExpr(b)}) * MakeFloat(3.0)));
  LoweredFunc f{"auto_unroll", {A, X},
                MakeFor(o, 0, 2, ForKind::kSerial, MakeSeq({small, large}), "", /*auto_unroll_max_step=*/16)};
  std::string ir = Ir(f, false);
  EXPECT_THAT(ir, Not(HasSubstr("a.header")));
  EXPECT_THAT(ir, HasSubstr("b.header"));
  EXPECT_THAT(ir, HasSubstr("o.header"));  // the annotated loop itself stays a loop
  ExpectMatchesInterpreter(f);
}

TEST_F(JitTest, ParallelLoopUsesTargetThreadsUnlessOverridden) {
  LoweredFunc f = AddProgram(ForKind::kSerial, 64, 16);
  const For* loop = f.body.as<For>();
  LoweredFunc parallel{"par", f.args,
                       MakeFor(loop->var, 0, 64, ForKind::kParallel, loop->body)};
  target::Target target = testing::HostTarget();
  StatusOr<std::string> ir = EmitLlvmIr({parallel}, target, {}, false);
  ASSERT_TRUE(ir.ok());
  EXPECT_THAT(*ir, HasSubstr("call void @tuned_parallel_for(i64 64, i32 " +
                             std::to_string(target.num_cores)));
  EXPECT_THAT(Ir(parallel, false, CodegenOptions{.num_threads = 3}),
              HasSubstr("call void @tuned_parallel_for(i64 64, i32 3"));
  ExpectMatchesInterpreter(parallel);
  runtime::SetThreadLimit(1);
  ExpectMatchesInterpreter(parallel);
  runtime::SetThreadLimit(0);
}

// The parallel loop's counter reaches the body through an empty inline-asm copy, so LLVM's loop
// analysis does not treat every address of the body as a recurrence of that loop (the cost is
// in docs/codegen_llvm.md); the kernel still indexes by it correctly, edge rows included.
TEST_F(JitTest, ParallelBodySeesItsCounterThroughAnOpaqueCopy) {
  LoweredFunc f = AddProgram(ForKind::kSerial, 7, 20);
  const For* loop = f.body.as<For>();
  LoweredFunc parallel{"par", f.args, MakeFor(loop->var, 0, 7, ForKind::kParallel, loop->body)};
  EXPECT_THAT(Ir(parallel, false), HasSubstr("call i64 asm \"\", \"=r,0\"(i64 %i)"));
  EXPECT_THAT(Ir(AddProgram(ForKind::kSerial, 7, 20), false), Not(HasSubstr("asm")));
  ExpectMatchesInterpreter(parallel);
}

TEST_F(JitTest, NestedParallelLoopsRunInside) {
  LoweredFunc f = AddProgram(ForKind::kParallel, 9, 7);
  const For* loop = f.body.as<For>();
  LoweredFunc nested{"nested", f.args, MakeFor(loop->var, 0, 9, ForKind::kParallel, loop->body)};
  ExpectMatchesInterpreter(nested);
}

// A cache_write-style register tile: acc[4] lives across the reduction loop, every index is
// constant after unrolling, so the optimised IR keeps it in registers (no alloca left).
TEST_F(JitTest, LocalAccumulatorEndsInRegisters) {
  const int64_t m = 8, n = 4, k = 16;
  Buffer A = MakeBuffer("A", DataType::Float32(), {m, k});
  Buffer B = MakeBuffer("B", DataType::Float32(), {k, n});
  Buffer C = MakeBuffer("C", DataType::Float32(), {m, n});
  Buffer acc = MakeBuffer("acc", DataType::Float32(), {n}, MemoryScope::kLocal);
  Var i = MakeVar("i"), j0 = MakeVar("j0"), r = MakeVar("r"), j1 = MakeVar("j1"), j2 = MakeVar("j2");
  Stmt init = MakeFor(j0, 0, n, ForKind::kUnrolled, MakeStore(acc, {AsExpr(j0)}, MakeFloat(0.0)));
  Stmt update = MakeFor(
      r, 0, k, ForKind::kSerial,
      MakeFor(j1, 0, n, ForKind::kUnrolled,
              MakeStore(acc, {AsExpr(j1)},
                        MakeLoad(acc, {AsExpr(j1)}) +
                            MakeLoad(A, {AsExpr(i), AsExpr(r)}) * MakeLoad(B, {AsExpr(r), AsExpr(j1)}))));
  Stmt write = MakeFor(j2, 0, n, ForKind::kUnrolled,
                       MakeStore(C, {AsExpr(i), AsExpr(j2)}, MakeLoad(acc, {AsExpr(j2)})));
  LoweredFunc f{"tile", {A, B, C},
                MakeFor(i, 0, m, ForKind::kSerial, MakeAllocate(acc, MakeSeq({init, update, write})))};
  EXPECT_THAT(Ir(f, false), HasSubstr("alloca [4 x float], align 64"));
  EXPECT_THAT(Ir(f, true), Not(HasSubstr("alloca")));
  ExpectMatchesInterpreter(f);
}

// Global scratch up to kMaxStackScratchBytes is a stack array; above it, a heap allocation.
TEST_F(JitTest, GlobalScratchIsOnTheStackUpToItsLimitAndOnTheHeapAbove) {
  for (int64_t n : {int64_t(1000), kMaxStackScratchBytes / 4 + 1}) {
    Buffer A = MakeBuffer("A", DataType::Float32(), {n});
    Buffer C = MakeBuffer("C", DataType::Float32(), {n});
    Buffer tmp = MakeBuffer("tmp", DataType::Float32(), {n}, MemoryScope::kGlobal);
    Var i = MakeVar("i"), j = MakeVar("j");
    Stmt fill = MakeFor(i, 0, n, ForKind::kSerial,
                        MakeStore(tmp, {AsExpr(i)}, MakeCall(Intrinsic::kExp, {MakeLoad(A, {AsExpr(i)})})));
    Stmt use = MakeFor(j, 0, n, ForKind::kVectorized,
                       MakeStore(C, {AsExpr(j)}, MakeLoad(tmp, {MakeInt(n - 1) - AsExpr(j)})));
    LoweredFunc f{"scratch", {A, C}, MakeAllocate(tmp, MakeSeq({fill, use}))};
    std::string ir = Ir(f, false);
    if (4 * n <= kMaxStackScratchBytes) {
      EXPECT_THAT(ir, HasSubstr("alloca [1000 x float]"));
      EXPECT_THAT(ir, Not(HasSubstr("@tuned_runtime_alloc(")));
    } else {
      EXPECT_THAT(ir, HasSubstr("@tuned_runtime_alloc(i64 " + std::to_string(4 * n) + ")"));
      EXPECT_THAT(ir, HasSubstr("@tuned_runtime_free"));
    }
    ExpectMatchesInterpreter(f);
  }
}

// Every dtype through load, arithmetic, cast and store, scalar and vectorized.
TEST_F(JitTest, DtypesMatchInterpreter) {
  for (DataType t : {DataType::Float16(), DataType::Float32(), DataType::Float64(),
                     DataType::Int8(), DataType::Int32(), DataType::Int64()}) {
    for (ForKind kind : {ForKind::kSerial, ForKind::kVectorized}) {
      const int64_t n = 24;
      Buffer A = MakeBuffer("A", t, {n}), B = MakeBuffer("B", t, {n});
      DataType acc = t.is_int() ? DataType::Int32() : t.bits == 16 ? DataType::Float32() : t;
      Buffer C = MakeBuffer("C", acc, {n});
      Var i = MakeVar("i");
      Expr a = MakeCast(acc, MakeLoad(A, {AsExpr(i)})), b = MakeCast(acc, MakeLoad(B, {AsExpr(i)}));
      Expr value = Max(a * b + a, Min(a - b, b));
      LoweredFunc f{"dtype_" + t.ToString(), {A, B, C},
                    MakeFor(i, 0, n, kind, MakeStore(C, {AsExpr(i)}, value))};
      ExpectMatchesInterpreter(f, ToleranceFor(acc));
      // And back into the narrow type.
      Buffer D = MakeBuffer("D", t, {n});
      LoweredFunc narrow{"narrow_" + t.ToString(), {A, B, D},
                         MakeFor(i, 0, n, kind, MakeStore(D, {AsExpr(i)}, MakeCast(t, value)))};
      ExpectMatchesInterpreter(narrow, ToleranceFor(t));
    }
  }
}

TEST_F(JitTest, IntegerFloorDivisionRoundsDown) {
  const int64_t n = 16;
  Buffer A = MakeBuffer("A", DataType::Int32(), {n});
  Buffer C = MakeBuffer("C", DataType::Int32(), {n});
  for (ForKind kind : {ForKind::kSerial, ForKind::kVectorized}) {
    Var i = MakeVar("i");
    Expr a = MakeLoad(A, {AsExpr(i)});
    Expr divisor = MakeInt(3, DataType::Int32());
    Expr value = FloorDiv(a, divisor) * MakeInt(100, DataType::Int32()) +
                 FloorMod(a, MakeInt(-4, DataType::Int32())) + a / divisor;
    LoweredFunc f{"floordiv", {A, C}, MakeFor(i, 0, n, kind, MakeStore(C, {AsExpr(i)}, value))};
    ExpectMatchesInterpreter(f, 0);
  }
}

// C[f / 4, f % 4] = A[f / 4, f % 4] + B[f / 4, f % 4] over a fused f (A and B with rows of 5):
// the accesses share one floor division and one floor modulo, emitted once in the loop's block.
TEST_F(JitTest, IndexArithmeticRepeatedInABlockIsEmittedOnce) {
  Buffer A = MakeBuffer("A", DataType::Float32(), {3, 5}), B = MakeBuffer("B", DataType::Float32(), {3, 5});
  Buffer C = MakeBuffer("C", DataType::Float32(), {3, 4});
  Var f = MakeVar("f");
  auto at = [&](const Buffer& buffer) {
    return MakeLoad(buffer, {FloorDiv(AsExpr(f), MakeInt(4)), FloorMod(AsExpr(f), MakeInt(4))});
  };
  Stmt body = MakeStore(C, {FloorDiv(AsExpr(f), MakeInt(4)), FloorMod(AsExpr(f), MakeInt(4))}, at(A) + at(B));
  LoweredFunc fused{"fused_index", {A, B, C}, MakeFor(f, 0, 12, ForKind::kSerial, body)};
  const std::string ir = Ir(fused, /*optimize=*/false);
  // A floor division and a floor modulo each take one sdiv and one srem.
  EXPECT_EQ(tuned::testing::CountOccurrences(ir, " = sdiv "), 2) << ir;
  EXPECT_EQ(tuned::testing::CountOccurrences(ir, " = srem "), 2) << ir;
  ExpectMatchesInterpreter(fused, 0);
}

TEST_F(JitTest, IntrinsicsMatchInterpreter) {
  for (DataType t : {DataType::Float32(), DataType::Float64()}) {
    for (ForKind kind : {ForKind::kSerial, ForKind::kVectorized}) {
      const int64_t n = 20;
      Buffer A = MakeBuffer("A", t, {n});
      Buffer C = MakeBuffer("C", t, {n});
      Var i = MakeVar("i");
      Expr a = MakeLoad(A, {AsExpr(i)});
      Expr value = MakeCall(Intrinsic::kExp, {a}) + MakeCall(Intrinsic::kTanh, {a}) +
                   MakeCall(Intrinsic::kSigmoid, {a}) + MakeCall(Intrinsic::kErf, {a}) +
                   MakeCall(Intrinsic::kLog, {MakeCall(Intrinsic::kFabs, {a}) + MakeFloat(1.0, t)}) +
                   MakeCall(Intrinsic::kSqrt, {a * a}) +
                   MakeSelect(a > MakeFloat(0.0, t), a, MakeFloat(0.5, t)) + MakeFloat(1.0, t) / (a + MakeFloat(3.0, t));
      LoweredFunc f{"math", {A, C}, MakeFor(i, 0, n, kind, MakeStore(C, {AsExpr(i)}, value))};
      ExpectMatchesInterpreter(f, t.bits == 32 ? 1e-5 : 1e-12);
    }
  }
}

// Vectorizing a reduction axis would change the order of the sums; the loop stays a loop.
TEST_F(JitTest, VectorizedReductionAxisStaysCorrect) {
  const int64_t n = 32;
  Buffer A = MakeBuffer("A", DataType::Float32(), {n});
  Buffer S = MakeBuffer("S", DataType::Float32(), {1});
  Var k = MakeVar("k");
  Stmt init = MakeStore(S, {MakeInt(0)}, MakeFloat(0.0));
  Stmt sum = MakeFor(k, 0, n, ForKind::kVectorized,
                     MakeStore(S, {MakeInt(0)}, MakeLoad(S, {MakeInt(0)}) + MakeLoad(A, {AsExpr(k)})));
  LoweredFunc f{"sum", {A, S}, MakeSeq({init, sum})};
  EXPECT_THAT(Ir(f, false), HasSubstr("k.header"));
  ExpectMatchesInterpreter(f);
}

// An rfactor's combine: a serial loop folding a local buffer's lanes into one element is one
// vector load folded in halves (log2(n) dependent operations, not a chain of n), for sums,
// maxima and minima; a sum over an argument keeps its loop and its order (above).
TEST_F(JitTest, AFoldOfLocalLanesIsFoldedInHalves) {
  const int64_t n = 32;
  for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kMax, BinaryOp::kMin}) {
    Buffer A = MakeBuffer("A", DataType::Float32(), {n});
    Buffer S = MakeBuffer("S", DataType::Float32(), {1});
    Buffer lanes = MakeBuffer("lanes", DataType::Float32(), {n}, MemoryScope::kLocal);
    Var i = MakeVar("i"), k = MakeVar("k");
    Stmt fill = MakeFor(i, 0, n, ForKind::kSerial, MakeStore(lanes, {AsExpr(i)}, MakeLoad(A, {AsExpr(i)})));
    Stmt init = MakeStore(S, {MakeInt(0)}, MakeFloat(op == BinaryOp::kAdd ? 0.5 : 0.0));
    Expr folded = MakeBinary(op, MakeLoad(S, {MakeInt(0)}), MakeLoad(lanes, {AsExpr(k)}));
    Stmt fold = MakeFor(k, 0, n, ForKind::kSerial, MakeStore(S, {MakeInt(0)}, folded));
    LoweredFunc f{"fold", {A, S}, MakeAllocate(lanes, MakeSeq({fill, init, fold}))};
    std::string ir = Ir(f, false);
    EXPECT_THAT(ir, Not(HasSubstr("k.header"))) << BinaryOpSymbol(op);
    EXPECT_THAT(ir, HasSubstr("load <32 x float>")) << BinaryOpSymbol(op);
    EXPECT_THAT(ir, HasSubstr("shufflevector <2 x float>")) << BinaryOpSymbol(op);
    ExpectMatchesInterpreter(f);
  }
}

TEST_F(JitTest, ThreadBindingIsRejected) {
  LoweredFunc f = AddProgram(ForKind::kSerial, 4, 4);
  const For* loop = f.body.as<For>();
  LoweredFunc gpu{"gpu", f.args,
                  MakeFor(loop->var, 0, 4, ForKind::kThreadBinding, loop->body, "blockIdx.x")};
  StatusOr<std::unique_ptr<JitKernel>> kernel = jit_->Compile(gpu);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(kernel.status().message(), HasSubstr("kernel gpu: loop i is bound to blockIdx.x"));
}

TEST_F(JitTest, BadProgramsAreErrorsNotCrashes) {
  LoweredFunc f = AddProgram(ForKind::kSerial, 4, 4);
  LoweredFunc bad_name{"not a name", f.args, f.body};
  EXPECT_THAT(jit_->Compile(bad_name).status().message(), HasSubstr("not a C identifier"));
  LoweredFunc missing{"missing", {f.args[0], f.args[2]}, f.body};
  EXPECT_THAT(jit_->Compile(missing).status().message(),
              HasSubstr("buffer B is neither an argument nor allocated"));
}

TEST_F(JitTest, RunChecksArgumentsAndReportsCompileTime) {
  StatusOr<std::unique_ptr<JitKernel>> kernel = jit_->Compile(AddProgram(ForKind::kVectorized, 2, 8));
  ASSERT_TRUE(kernel.ok());
  EXPECT_GT((*kernel)->stats().codegen_ms, 0);
  EXPECT_GT((*kernel)->stats().optimize_ms, 0);
  EXPECT_GT((*kernel)->stats().machine_code_ms, 0);
  runtime::AlignedBuffer a(64), b(64), c(128);
  EXPECT_EQ((*kernel)->Run({a.data(), b.data()}).code(), StatusCode::kInvalidArgument);
  Status misaligned = (*kernel)->Run({a.data(), b.data(), c.as<char>() + 4});
  EXPECT_THAT(misaligned.message(), HasSubstr("argument 2 is not 64-byte aligned"));
  EXPECT_TRUE((*kernel)->Run({a.data(), b.data(), c.data()}).ok());
}

TEST_F(JitTest, KernelOutlivesItsJit) {
  StatusOr<std::unique_ptr<JitKernel>> kernel = jit_->Compile(AddProgram(ForKind::kSerial, 2, 8));
  ASSERT_TRUE(kernel.ok());
  jit_.reset();
  runtime::AlignedBuffer a(64), b(64), c(64);
  a.as<float>()[3] = 1.5f;
  b.as<float>()[3] = 2.0f;
  EXPECT_TRUE((*kernel)->Run({a.data(), b.data(), c.data()}).ok());
  EXPECT_EQ(c.as<float>()[3], 3.5f);
}

}  // namespace
}  // namespace tuned::codegen
