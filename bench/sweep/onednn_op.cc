// One op through oneDNN, timed the way the sweep (bench/sweep/sweep.py) times every runtime:
//
//   tuned_onednn_op matmul M N K                               [--samples S] [--min-sample-ms MS]
//   tuned_onednn_op conv N C H W F KH KW STRIDE PAD GROUPS     [--samples S] [--min-sample-ms MS]
//                                                              [--native-layouts]
//   (every form also takes --flush-cache: each sample one run after a cache flush, untimed)
//   tuned_onednn_op softmax|layer_norm|reduce_mean|reduce_sum|reduce_cols|gelu|add_relu ROWS COLS
//                                                              [--samples S] [--min-sample-ms MS]
//
// src and dst are in the plain layouts of the ONNX model (row-major, NCHW); the weights are in
// the layout oneDNN picks (format_tag::any), reordered once before timing, as a framework packs
// constant weights once. With --native-layouts a convolution also runs on the image layouts
// oneDNN picks (blocked, e.g. nChw16c), the reorders from and to NCHW timed with it: oneDNN's
// fast kernels at the price a caller holding NCHW tensors pays. OpenMP runs on every core. After a warm-up, each of S samples (15)
// repeats the op until it lasts at least MS (20) ms; prints JSON with the median seconds per op.

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include <dnnl.hpp>

#include "common/cache_flush.h"

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using Clock = std::chrono::steady_clock;

// One primitive and its arguments.
struct Step {
  dnnl::primitive primitive;
  std::unordered_map<int, dnnl::memory> args;
};

struct Op {
  std::vector<Step> steps;
  std::string implementation;
  double flops = 0;
};

// Appends a reorder from `from` into a new memory of `to` (none when the layouts agree).
dnnl::memory Reordered(Op& op, const dnnl::memory& from, const dnnl::memory::desc& to, const dnnl::engine& engine) {
  if (from.get_desc() == to) return from;
  dnnl::memory into(to, engine);
  op.steps.push_back({dnnl::reorder(from, into), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, into}}});
  return into;
}

// A plain-layout memory filled with seeded values in [-1, 1].
dnnl::memory RandomMemory(const dnnl::memory::desc& desc, const dnnl::engine& engine, unsigned seed) {
  dnnl::memory mem(desc, engine);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  float* data = static_cast<float*>(mem.get_data_handle());
  for (size_t i = 0; i < desc.get_size() / sizeof(float); ++i) data[i] = dist(rng);
  return mem;
}

// The user's weights in the layout the primitive asked for (the pre-packing, outside the timing).
dnnl::memory PackWeights(const dnnl::memory::desc& user, const dnnl::memory::desc& want,
                         const dnnl::engine& engine, dnnl::stream& stream) {
  dnnl::memory plain = RandomMemory(user, engine, 2);
  if (want == user) return plain;
  dnnl::memory packed(want, engine);
  dnnl::reorder(plain, packed).execute(stream, plain, packed);
  stream.wait();
  return packed;
}

Op MakeMatmul(const std::vector<long>& a, const dnnl::engine& engine, dnnl::stream& stream) {
  const long m = a[0], n = a[1], k = a[2];
  dnnl::memory::desc src({m, k}, dt::f32, tag::ab), dst({m, n}, dt::f32, tag::ab);
  dnnl::matmul::primitive_desc pd(
      dnnl::matmul::desc(src, dnnl::memory::desc({k, n}, dt::f32, tag::any), dst), engine);
  Op op{{}, pd.impl_info_str(), 2.0 * m * n * k};
  op.steps.push_back({dnnl::matmul(pd),
                      {{DNNL_ARG_SRC, RandomMemory(src, engine, 1)},
                       {DNNL_ARG_WEIGHTS, PackWeights({{k, n}, dt::f32, tag::ab}, pd.weights_desc(), engine, stream)},
                       {DNNL_ARG_DST, dnnl::memory(dst, engine)}}});
  return op;
}

Op MakeConv(const std::vector<long>& a, bool native_layouts, const dnnl::engine& engine, dnnl::stream& stream) {
  const long n = a[0], c = a[1], h = a[2], w = a[3], f = a[4], kh = a[5], kw = a[6];
  const long stride = a[7], pad = a[8], g = a[9];
  const long oh = (h + 2 * pad - kh) / stride + 1, ow = (w + 2 * pad - kw) / stride + 1;
  dnnl::memory::desc src({n, c, h, w}, dt::f32, tag::nchw), dst({n, f, oh, ow}, dt::f32, tag::nchw);
  // Grouped weights carry the group as a leading dimension (goihw), as oneDNN wants them.
  dnnl::memory::dims wdims = g == 1 ? dnnl::memory::dims{f, c, kh, kw}
                                    : dnnl::memory::dims{g, f / g, c / g, kh, kw};
  dnnl::memory::desc user_wei(wdims, dt::f32, g == 1 ? tag::oihw : tag::goihw);
  auto any_layout = [&](const dnnl::memory::desc& plain, const dnnl::memory::dims& dims) {
    return native_layouts ? dnnl::memory::desc(dims, dt::f32, tag::any) : plain;
  };
  dnnl::convolution_forward::primitive_desc pd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                      any_layout(src, {n, c, h, w}), dnnl::memory::desc(wdims, dt::f32, tag::any),
                                      any_layout(dst, {n, f, oh, ow}),
                                      {stride, stride}, {pad, pad}, {pad, pad}),
      engine);
  Op op{{}, pd.impl_info_str(), 2.0 * n * f * oh * ow * (c / g) * kh * kw};
  dnnl::memory user_src = RandomMemory(src, engine, 1), user_dst(dst, engine);
  dnnl::memory conv_src = Reordered(op, user_src, pd.src_desc(), engine);
  dnnl::memory conv_dst = pd.dst_desc() == dst ? user_dst : dnnl::memory(pd.dst_desc(), engine);
  op.steps.push_back({dnnl::convolution_forward(pd),
                      {{DNNL_ARG_SRC, conv_src},
                       {DNNL_ARG_WEIGHTS, PackWeights(user_wei, pd.weights_desc(), engine, stream)},
                       {DNNL_ARG_DST, conv_dst}}});
  if (conv_dst != user_dst) {
    op.steps.push_back({dnnl::reorder(conv_dst, user_dst), {{DNNL_ARG_FROM, conv_dst}, {DNNL_ARG_TO, user_dst}}});
  }
  return op;
}

// softmax, layer_norm (scale and shift), reduce_mean (over each row), reduce_sum (of the whole
// tensor), reduce_cols (a sum over the rows, one per column), gelu (erf form) or add_relu
// (a second tensor added, then ReLU as a post-op) of a row-major [rows, cols] tensor.
Op MakeRowOp(const std::string& kind, const std::vector<long>& a, const dnnl::engine& engine) {
  const long rows = a[0], cols = a[1];
  dnnl::memory::desc src({rows, cols}, dt::f32, tag::ab);
  dnnl::memory x = RandomMemory(src, engine, 1);
  Op op{{}, "", double(rows) * double(cols)};
  if (kind == "softmax") {
    dnnl::softmax_forward::primitive_desc pd(
        dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, src, 1), engine);
    op.implementation = pd.impl_info_str();
    op.steps.push_back({dnnl::softmax_forward(pd), {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, dnnl::memory(src, engine)}}});
  } else if (kind == "layer_norm") {
    dnnl::layer_normalization_forward::primitive_desc pd(
        dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_inference, src, 1e-5f,
                                                dnnl::normalization_flags::use_scale |
                                                    dnnl::normalization_flags::use_shift),
        engine);
    op.implementation = pd.impl_info_str();
    dnnl::memory::desc channel({cols}, dt::f32, tag::a);
    op.steps.push_back({dnnl::layer_normalization_forward(pd),
                        {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, dnnl::memory(src, engine)},
                         {DNNL_ARG_SCALE, RandomMemory(channel, engine, 3)},
                         {DNNL_ARG_SHIFT, RandomMemory(channel, engine, 4)}}});
  } else if (kind == "gelu") {
    dnnl::eltwise_forward::primitive_desc pd(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_gelu_erf, src,
                                    0.f, 0.f),
        engine);
    op.implementation = pd.impl_info_str();
    op.steps.push_back({dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, dnnl::memory(src, engine)}}});
  } else if (kind == "reduce_mean" || kind == "reduce_sum" || kind == "reduce_cols") {
    const bool mean = kind == "reduce_mean";
    dnnl::memory::desc dst({mean ? rows : 1, kind == "reduce_cols" ? cols : 1}, dt::f32, tag::ab);
    dnnl::reduction::primitive_desc pd(
        dnnl::reduction::desc(mean ? dnnl::algorithm::reduction_mean : dnnl::algorithm::reduction_sum, src, dst,
                              0.f, 0.f),
        engine);
    op.implementation = pd.impl_info_str();
    op.steps.push_back({dnnl::reduction(pd), {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, dnnl::memory(dst, engine)}}});
  } else {
    dnnl::post_ops relu;
    relu.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(relu);
    dnnl::binary::primitive_desc pd(dnnl::binary::desc(dnnl::algorithm::binary_add, src, src, src), attr, engine);
    op.implementation = pd.impl_info_str();
    op.steps.push_back({dnnl::binary(pd), {{DNNL_ARG_SRC_0, x},
                                           {DNNL_ARG_SRC_1, RandomMemory(src, engine, 2)},
                                           {DNNL_ARG_DST, dnnl::memory(src, engine)}}});
  }
  return op;
}

[[noreturn]] void Usage() {
  std::fprintf(stderr,
               "usage: tuned_onednn_op matmul M N K | conv N C H W F KH KW STRIDE PAD GROUPS\n"
               "                       | softmax|layer_norm|reduce_mean|reduce_sum|reduce_cols|gelu|add_relu ROWS COLS\n"
               "                       [--samples S] [--min-sample-ms MS] [--native-layouts] [--flush-cache]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) Usage();
  const std::string kind = argv[1];
  std::vector<long> dims;
  int samples = 15;
  double min_sample_ms = 20;
  bool native_layouts = false;
  bool cold = false;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--native-layouts") {
      native_layouts = true;
    } else if (arg == "--flush-cache") {
      cold = true;
    } else if (arg == "--samples" && i + 1 < argc) {
      samples = std::atoi(argv[++i]);
    } else if (arg == "--min-sample-ms" && i + 1 < argc) {
      min_sample_ms = std::atof(argv[++i]);
    } else {
      char* end = nullptr;
      dims.push_back(std::strtol(argv[i], &end, 10));
      if (*end != '\0' || dims.back() < 0) Usage();  // 0 only makes sense as a padding
    }
  }
  const bool row_op = kind == "softmax" || kind == "layer_norm" || kind == "reduce_mean" || kind == "reduce_sum" ||
                      kind == "reduce_cols" || kind == "gelu" || kind == "add_relu";
  if (samples < 1 || !((kind == "matmul" && dims.size() == 3) || (kind == "conv" && dims.size() == 10) ||
                       (row_op && dims.size() == 2))) {
    Usage();
  }

  // oneDNN reads the OpenMP thread count when the primitive is created and when it runs.
  const int threads = omp_get_num_procs();
  omp_set_num_threads(threads);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  Op op = kind == "matmul" ? MakeMatmul(dims, engine, stream)
          : row_op         ? MakeRowOp(kind, dims, engine)
                           : MakeConv(dims, native_layouts, engine, stream);
  auto run = [&](long times) {
    const Clock::time_point start = Clock::now();
    for (long i = 0; i < times; ++i) {
      for (Step& step : op.steps) step.primitive.execute(stream, step.args);
    }
    stream.wait();
    return std::chrono::duration<double>(Clock::now() - start).count();
  };

  // Warm-up (page faults, oneDNN's JIT, OpenMP's threads), then grow the repeats per sample
  // until one sample lasts min_sample_ms, so small ops are not timed by the clock's overhead.
  // Cold (--flush-cache): each sample is one run after the caches are flushed, untimed.
  run(3);
  long number = 1;
  while (!cold && run(number) * 1e3 < min_sample_ms && number < (1L << 24)) number *= 2;
  const std::vector<uint8_t> flush(cold ? tuned::FlushBytes(tuned::ProbeHostCaches().LastLevel()) : 0, 1);
  std::vector<double> per_op;
  for (int s = 0; s < samples; ++s) {
    tuned::FlushCaches(flush.data(), flush.size());
    per_op.push_back(run(number) / double(number));
  }
  std::sort(per_op.begin(), per_op.end());
  const double median = per_op[per_op.size() / 2];
  std::printf("{\"op\": \"%s\", \"implementation\": \"%s\", \"native_layouts\": %s, \"cold\": %s, \"steps\": %zu, "
              "\"threads\": %d, \"samples\": %d, "
              "\"runs_per_sample\": %ld, \"median_seconds\": %.9g, \"min_seconds\": %.9g, \"gflops\": %.3f}\n",
              kind.c_str(), op.implementation.c_str(), native_layouts ? "true" : "false", cold ? "true" : "false", op.steps.size(),
              threads, samples, number, median, per_op.front(),
              op.flops / median * 1e-9);
  return 0;
}
