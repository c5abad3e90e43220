// A ResNet-50 3x3 convolution through the LLVM code generator against oneDNN, in one run on one
// machine.
//
//   build/bench/tuned_conv2d_bench [--threads 1,2] [--repeats 10] [--min-repeat-ms 50]
//                                  [--tile-f 4] [--tile-h 2] [--vectors 1] [--inline-pad]
//                                  [--print-program]
//
// Workload: conv2d_nchw N=1, C=64, H=W=56, F=64, 3x3, stride 1, pad 1, fp32 (data NCHW, weight
// FCRS = OIHW), 0.23 GFLOP. For each thread count it times
//   naive        the workload's unscheduled program (pad stage, then one loop nest), single-threaded;
//   hand         a schedule written only with schedule primitives (split, reorder, cache_write
//                local + reverse_compute_at + decompose_reduction for a register tile, unroll,
//                vectorize, fuse, parallel; the pad stage materialised or compute_inline'd) --
//                no convolution-specific code exists in the code generator;
//   onednn       oneDNN convolution_forward (Debian's oneDNN, OpenMP threading set with
//                omp_set_num_threads) on the same NCHW/OIHW memory;
//   onednn-blk   the same with the layouts oneDNN picks (format_tag::any, e.g. nChw8c), the
//                reorders into them outside the timing: oneDNN's best case, for reference.
// and prints GFLOP/s (median of the repeats, with min..max) and the ratio hand/onednn. Each
// result is checked against oneDNN's NCHW output (max relative error) before it is timed.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <omp.h>

#include <dnnl.hpp>

#include "bench/bench_util.h"
#include "compiler/codegen/llvm/cpu_target.h"
#include "compiler/codegen/llvm/llvm_jit.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/lower.h"
#include "compiler/runtime/aligned_buffer.h"
#include "compiler/schedule/schedule.h"

namespace tuned::bench {
namespace {

using codegen::LlvmJit;
using schedule::Factor;
using schedule::LoopRV;

constexpr int64_t kN = 1, kC = 64, kH = 56, kW = 56, kF = 64, kR = 3, kS = 3, kPad = 1;
constexpr int64_t kOH = kH, kOW = kW;  // stride 1, pad 1, 3x3
constexpr int64_t kLanes = 8;          // fp32 lanes of an AVX2 vector

struct Options {
  std::vector<int> threads{1, 2};
  int repeats = 10;
  double min_repeat_ms = 50;
  // The register tile: tile_f output channels x tile_h output rows x `vectors` vectors of
  // kLanes output columns (tile_f * tile_h * vectors accumulators; AVX2 has 16 ymm registers).
  int64_t tile_f = 4, tile_h = 2, vectors = 1;
  bool inline_pad = false;
  bool print_program = false;
};

// The hand-written schedule. Loop nest (pad materialised):
//   pad[n, c, h, w] = ...                                    root stage, parallel over (n, c)
//   parallel (n, oh_o, f_o, ow_o)                            fused
//     acc[tile_f, tile_h, vectors * 8] = 0                   cache_write local + decompose
//     for c, r, s:
//       for oh_i (unrolled): for f_i (unrolled): for ow_v (unrolled): for lane (vectorized):
//         acc[f_i, oh_i, ow_v*8 + lane] += pad[n, c, oh + r, ow + s] * weight[f, c, r, s]
//     conv[...] = acc                                        reverse_compute_at ow_o
// The innermost loop runs along the output row, so the data load is one (unaligned) vector
// load and the weight a broadcast, as in the matmul register tile of gemm_bench.
StatusOr<lower::LoweredFunc> HandSchedule(std::shared_ptr<const ir::Workload> workload,
                                          const Options& o) {
  schedule::Schedule sch(workload, /*seed=*/0);
  TUNED_ASSIGN_OR_RETURN(auto conv, sch.GetBlock("conv"));
  TUNED_ASSIGN_OR_RETURN(auto write_back, sch.CacheWrite(conv, "local"));
  TUNED_ASSIGN_OR_RETURN(auto loops, sch.GetLoops(conv));  // n, f, oh, ow, c, r, s
  LoopRV n = loops[0], c = loops[4], r = loops[5], s = loops[6];
  TUNED_ASSIGN_OR_RETURN(auto f_split, sch.Split(loops[1], {Factor{}, Factor{o.tile_f}}));
  TUNED_ASSIGN_OR_RETURN(auto h_split, sch.Split(loops[2], {Factor{}, Factor{o.tile_h}}));
  TUNED_ASSIGN_OR_RETURN(auto w_split,
                         sch.Split(loops[3], {Factor{}, Factor{o.vectors}, Factor{kLanes}}));
  LoopRV fo = f_split[0], fi = f_split[1], ho = h_split[0], hi = h_split[1];
  LoopRV wo = w_split[0], wv = w_split[1], lane = w_split[2];
  TUNED_RETURN_IF_ERROR(sch.Reorder({n, ho, fo, wo, c, r, s, hi, fi, wv, lane}));
  TUNED_RETURN_IF_ERROR(sch.ReverseComputeAt(write_back, wo));
  TUNED_RETURN_IF_ERROR(sch.DecomposeReduction(conv, c));
  TUNED_RETURN_IF_ERROR(sch.Unroll(hi));
  TUNED_RETURN_IF_ERROR(sch.Unroll(fi));
  TUNED_RETURN_IF_ERROR(sch.Unroll(wv));
  TUNED_RETURN_IF_ERROR(sch.Vectorize(lane));
  // The write-back tile: vectorize along the row (the init nest inherits the loop kinds).
  TUNED_ASSIGN_OR_RETURN(auto write_loops, sch.GetLoops(write_back));
  TUNED_RETURN_IF_ERROR(sch.Vectorize(write_loops.back()));
  TUNED_ASSIGN_OR_RETURN(LoopRV fused, sch.Fuse({n, ho, fo, wo}));
  TUNED_RETURN_IF_ERROR(sch.Parallel(fused));
  TUNED_ASSIGN_OR_RETURN(auto pad, sch.GetBlock("pad"));
  if (o.inline_pad) {
    TUNED_RETURN_IF_ERROR(sch.ComputeInline(pad));
  } else {
    TUNED_ASSIGN_OR_RETURN(auto pad_loops, sch.GetLoops(pad));  // n, c, h, w
    TUNED_ASSIGN_OR_RETURN(LoopRV pad_nc, sch.Fuse({pad_loops[0], pad_loops[1]}));
    TUNED_RETURN_IF_ERROR(sch.Parallel(pad_nc));
  }
  return lower::Lower(sch, "conv2d_hand");
}

// oneDNN forward inference on the user's NCHW/OIHW memory, or (`blocked`) in the layouts oneDNN
// picks, with the user's data reordered into them once, here.
class OneDnnConv {
 public:
  OneDnnConv(bool blocked, float* data, float* weight, float* out)
      : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    dnnl::memory::desc user_src({kN, kC, kH, kW}, dt::f32, tag::nchw);
    dnnl::memory::desc user_wei({kF, kC, kR, kS}, dt::f32, tag::oihw);
    dnnl::memory::desc user_dst({kN, kF, kOH, kOW}, dt::f32, tag::nchw);
    tag t_src = blocked ? tag::any : tag::nchw, t_wei = blocked ? tag::any : tag::oihw;
    dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        dnnl::memory::desc({kN, kC, kH, kW}, dt::f32, t_src),
        dnnl::memory::desc({kF, kC, kR, kS}, dt::f32, t_wei),
        dnnl::memory::desc({kN, kF, kOH, kOW}, dt::f32, t_src), {1, 1}, {kPad, kPad},
        {kPad, kPad});
    pd_ = dnnl::convolution_forward::primitive_desc(desc, engine_);
    conv_ = dnnl::convolution_forward(pd_);
    dnnl::memory user_src_mem(user_src, engine_, data), user_wei_mem(user_wei, engine_, weight);
    user_dst_ = dnnl::memory(user_dst, engine_, out);
    src_ = Prepare(user_src_mem, pd_.src_desc());
    wei_ = Prepare(user_wei_mem, pd_.weights_desc());
    dst_ = pd_.dst_desc() == user_dst ? user_dst_ : dnnl::memory(pd_.dst_desc(), engine_);
  }

  std::string Implementation() const { return pd_.impl_info_str(); }

  // The convolution only (no reorders).
  void Run() {
    conv_.execute(stream_, {{DNNL_ARG_SRC, src_}, {DNNL_ARG_WEIGHTS, wei_}, {DNNL_ARG_DST, dst_}});
    stream_.wait();
  }

  // The convolution, then its output in NCHW at `out`.
  void RunToUser() {
    Run();
    if (dst_ != user_dst_) {
      dnnl::reorder(dst_, user_dst_).execute(stream_, dst_, user_dst_);
      stream_.wait();
    }
  }

 private:
  dnnl::memory Prepare(dnnl::memory user, const dnnl::memory::desc& want) {
    if (user.get_desc() == want) return user;
    dnnl::memory mem(want, engine_);
    dnnl::reorder(user, mem).execute(stream_, user, mem);
    stream_.wait();
    return mem;
  }

  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::convolution_forward::primitive_desc pd_;
  dnnl::convolution_forward conv_;
  dnnl::memory src_, wei_, dst_, user_dst_;
};

double MaxRelativeDifference(const float* x, const float* y, int64_t count) {
  double worst = 0;
  for (int64_t i = 0; i < count; ++i) {
    double scale = std::max(1.0, std::fabs(double(y[i])));
    worst = std::max(worst, std::fabs(double(x[i]) - y[i]) / scale);
  }
  return worst;
}

std::string Format(const Timing& t, double flops) {
  char text[96];
  std::snprintf(text, sizeof(text), "%7.1f (%5.1f..%5.1f)", Gflops(flops, t.median_ms),
                Gflops(flops, t.max_ms), Gflops(flops, t.min_ms));
  return text;
}

std::vector<int> ParseIntList(const std::string& text) {
  std::vector<int> out;
  for (const std::string& item : SplitList(text)) out.push_back(std::stoi(item));
  return out;
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--threads") {
      o.threads = ParseIntList(next());
    } else if (arg == "--repeats") {
      o.repeats = std::stoi(next());
    } else if (arg == "--min-repeat-ms") {
      o.min_repeat_ms = std::stod(next());
    } else if (arg == "--tile-f") {
      o.tile_f = std::stol(next());
    } else if (arg == "--tile-h") {
      o.tile_h = std::stol(next());
    } else if (arg == "--vectors") {
      o.vectors = std::stol(next());
    } else if (arg == "--inline-pad") {
      o.inline_pad = true;
    } else if (arg == "--print-program") {
      o.print_program = true;
    } else {
      std::fprintf(stderr, "unknown option %s\n", arg.c_str());
      std::exit(2);
    }
  }
  if (o.threads.empty() || o.repeats < 1 || kF % o.tile_f != 0 || kOH % o.tile_h != 0 ||
      kOW % (o.vectors * kLanes) != 0) {
    std::fprintf(stderr, "bad options: the tiles must divide F=%ld, OH=%ld and OW=%ld (in "
                 "vectors of %ld lanes)\n", kF, kOH, kOW, kLanes);
    std::exit(2);
  }
  return o;
}

int Main(int argc, char** argv) {
  Options options = ParseOptions(argc, argv);
  target::Target host = Unwrap(codegen::HostCpuTarget(), "host target");
  std::printf("host target: %s\n", host.ToString().c_str());
  const char* spec = "conv2d_nchw(N=1,C=64,H=56,W=56,F=64,R=3,S=3,stride=1,pad=1)";
  auto workload = std::make_shared<const ir::Workload>(Unwrap(ir::ParseWorkloadSpec(spec), spec));
  const double flops = 2.0 * kN * kF * kOH * kOW * kC * kR * kS;
  std::printf("workload: %s, %.3f GFLOP; hand register tile %ld f x %ld rows x %ld vectors of "
              "%ld lanes, pad %s\n",
              spec, flops * 1e-9, options.tile_f, options.tile_h, options.vectors, kLanes,
              options.inline_pad ? "inlined" : "materialised");

  const int64_t data_count = kN * kC * kH * kW, weight_count = kF * kC * kR * kS;
  const int64_t out_count = kN * kF * kOH * kOW;
  runtime::AlignedBuffer data(size_t(data_count) * 4), weight(size_t(weight_count) * 4);
  runtime::AlignedBuffer out(size_t(out_count) * 4), expected(size_t(out_count) * 4);
  runtime::AlignedBuffer dnnl_out(size_t(out_count) * 4);
  {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (int64_t i = 0; i < data_count; ++i) data.as<float>()[i] = dist(rng);
    for (int64_t i = 0; i < weight_count; ++i) weight.as<float>()[i] = dist(rng);
  }
  // The reference: oneDNN on NCHW memory, single-threaded.
  omp_set_num_threads(1);
  OneDnnConv(false, data.as<float>(), weight.as<float>(), expected.as<float>()).RunToUser();

  auto check = [&](const char* what, const float* result) {
    double error = MaxRelativeDifference(result, expected.as<float>(), out_count);
    std::printf("  %-32s max relative error vs oneDNN %.2e\n", what, error);
    if (error > 1e-3) {
      std::fprintf(stderr, "%s is wrong: max relative error %g\n", what, error);
      std::exit(1);
    }
  };
  std::vector<void*> args{data.data(), weight.data(), out.data()};

  // Naive: the unscheduled program has no parallel loop, so it is measured once.
  std::string naive_text;
  {
    auto jit = Unwrap(LlvmJit::Create(host), "jit");
    lower::LoweredFunc naive =
        Unwrap(lower::Lower(schedule::Schedule(workload, 0), "conv2d_naive"), "lower naive");
    auto kernel = Unwrap(jit->Compile(naive), "compile naive");
    std::memset(out.data(), 0, out.size());
    Status run = kernel->Run(args);
    if (!run.ok()) {
      std::fprintf(stderr, "run naive: %s\n", run.ToString().c_str());
      return 1;
    }
    check("naive", out.as<float>());
    Timing t = Measure([&] { (void)kernel->Run(args); }, options.min_repeat_ms,
                       std::min(options.repeats, 3));
    naive_text = Format(t, flops);
  }

  struct Row {
    int threads;
    Timing hand, onednn, blocked;
  };
  std::vector<Row> rows;
  std::string impl_plain, impl_blocked;
  for (int threads : options.threads) {
    target::Target target = host;
    target.num_cores = threads;
    auto jit = Unwrap(LlvmJit::Create(target), "jit");
    lower::LoweredFunc hand = Unwrap(HandSchedule(workload, options), "hand schedule");
    if (options.print_program && threads == options.threads.front()) {
      std::printf("%s\n", ir::ToString(hand.body).c_str());
    }
    auto kernel = Unwrap(jit->Compile(hand), "compile hand");
    std::memset(out.data(), 0, out.size());
    Status run = kernel->Run(args);
    if (!run.ok()) {
      std::fprintf(stderr, "run hand: %s\n", run.ToString().c_str());
      return 1;
    }
    char what[64];
    std::snprintf(what, sizeof(what), "hand, %d thread(s)", threads);
    check(what, out.as<float>());
    Row row{threads, {}, {}, {}};
    row.hand = Measure([&] { (void)kernel->Run(args); }, options.min_repeat_ms, options.repeats);

    // oneDNN reads the OpenMP thread count when the primitive is created and when it runs.
    omp_set_num_threads(threads);
    OneDnnConv plain(false, data.as<float>(), weight.as<float>(), dnnl_out.as<float>());
    std::memset(dnnl_out.data(), 0, dnnl_out.size());
    plain.RunToUser();
    std::snprintf(what, sizeof(what), "onednn nchw (%s), %d thread(s)",
                  plain.Implementation().c_str(), threads);
    check(what, dnnl_out.as<float>());
    row.onednn = Measure([&] { plain.Run(); }, options.min_repeat_ms, options.repeats);
    impl_plain = plain.Implementation();

    OneDnnConv blocked(true, data.as<float>(), weight.as<float>(), dnnl_out.as<float>());
    std::memset(dnnl_out.data(), 0, dnnl_out.size());
    blocked.RunToUser();
    std::snprintf(what, sizeof(what), "onednn any (%s), %d thread(s)",
                  blocked.Implementation().c_str(), threads);
    check(what, dnnl_out.as<float>());
    row.blocked = Measure([&] { blocked.Run(); }, options.min_repeat_ms, options.repeats);
    impl_blocked = blocked.Implementation();
    rows.push_back(row);
  }

  std::printf("\nGFLOP/s, median (min..max) of %d repeats; oneDNN nchw: %s, oneDNN any: %s\n",
              options.repeats, impl_plain.c_str(), impl_blocked.c_str());
  std::printf("%3s %24s %24s %24s %24s %12s %14s\n", "thr", "naive", "hand", "onednn nchw",
              "onednn any (blocked)", "hand/onednn", "hand/onednn-any");
  for (const Row& row : rows) {
    std::printf("%3d %24s %24s %24s %24s %11.0f%% %13.0f%%\n", row.threads,
                row.threads == options.threads.front() ? naive_text.c_str() : "-",
                Format(row.hand, flops).c_str(), Format(row.onednn, flops).c_str(),
                Format(row.blocked, flops).c_str(),
                100 * row.onednn.median_ms / row.hand.median_ms,
                100 * row.blocked.median_ms / row.hand.median_ms);
  }
  return 0;
}

}  // namespace
}  // namespace tuned::bench

int main(int argc, char** argv) { return tuned::bench::Main(argc, argv); }
