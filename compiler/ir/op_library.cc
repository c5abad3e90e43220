// The built-in ops. Each builds its stages with WorkloadBuilder; none has a special schedule:
// how fast an op runs comes only from the schedule space.

#include "compiler/ir/op_library.h"

#include "common/check.h"

namespace tuned::ir {

int64_t OpParams::Int(const std::string& name) const { return std::stoll(Text(name)); }
DataType OpParams::Dtype(const std::string& name) const { return *ParseDataType(Text(name)); }
bool OpParams::Bool(const std::string& name) const { return Text(name) == "true"; }
const std::string& OpParams::Text(const std::string& name) const {
  auto it = values_.find(name);
  TUNED_CHECK(it != values_.end()) << "op parameter " << name << " not declared";
  return it->second;
}

namespace {

using Canonical = std::vector<std::pair<std::string, std::string>>;

ParamSpec IntParam(std::string name, std::string def = "", int64_t min_value = 1) {
  return {std::move(name), ParamKind::kInt, std::move(def), {}, min_value};
}
ParamSpec DtypeParam() { return {"dtype", ParamKind::kDtype, "float32", {}, 0}; }
ParamSpec BoolParam(std::string name) { return {std::move(name), ParamKind::kBool, "false", {}, 0}; }

// Integer inputs accumulate in int32 so that int8 products do not overflow.
DataType AccumulatorType(DataType t) { return t.is_int() ? DataType::Int32() : t; }

StatusOr<Workload> Matmul(const OpParams& p, Canonical canonical) {
  int64_t M = p.Int("M"), N = p.Int("N"), K = p.Int("K");
  DataType t = p.Dtype("dtype"), acc = AccumulatorType(t);
  WorkloadBuilder b;
  Buffer A = b.Input("A", t, {M, K});
  Buffer B = b.Input("B", t, {K, N});
  b.Compute("C", acc, {M, N}, {K}, ReduceKind::kSum, [&](const auto& x, const auto& r) {
    return MakeCast(acc, MakeLoad(A, {x[0], r[0]})) * MakeCast(acc, MakeLoad(B, {r[0], x[1]}));
  });
  return b.BuildOp("matmul", std::move(canonical));
}

StatusOr<Workload> BatchMatmul(const OpParams& p, Canonical canonical) {
  int64_t Bt = p.Int("B"), M = p.Int("M"), N = p.Int("N"), K = p.Int("K");
  DataType t = p.Dtype("dtype"), acc = AccumulatorType(t);
  WorkloadBuilder b;
  Buffer A = b.Input("A", t, {Bt, M, K});
  Buffer B = b.Input("B", t, {Bt, K, N});
  b.Compute("C", acc, {Bt, M, N}, {K}, ReduceKind::kSum, [&](const auto& x, const auto& r) {
    return MakeCast(acc, MakeLoad(A, {x[0], x[1], r[0]})) *
           MakeCast(acc, MakeLoad(B, {x[0], r[0], x[2]}));
  });
  return b.BuildOp("batch_matmul", std::move(canonical));
}

// dense: Y[i, j] = sum_k X[i, k] * W[j, k] (+ bias[j]) (then relu): a fused multi-stage workload.
StatusOr<Workload> Dense(const OpParams& p, Canonical canonical) {
  int64_t M = p.Int("M"), N = p.Int("N"), K = p.Int("K");
  DataType t = p.Dtype("dtype"), acc = AccumulatorType(t);
  WorkloadBuilder b;
  Buffer X = b.Input("X", t, {M, K});
  Buffer W = b.Input("W", t, {N, K});
  Buffer bias = p.Bool("bias") ? b.Input("bias", acc, {N}) : nullptr;
  Buffer y = b.Compute("dense", acc, {M, N}, {K}, ReduceKind::kSum, [&](const auto& x, const auto& r) {
    return MakeCast(acc, MakeLoad(X, {x[0], r[0]})) * MakeCast(acc, MakeLoad(W, {x[1], r[0]}));
  });
  if (bias) {
    y = b.Compute("bias_add", acc, {M, N},
                  [&](const auto& x) { return MakeLoad(y, {x[0], x[1]}) + MakeLoad(bias, {x[1]}); });
  }
  if (p.Bool("relu")) {
    y = b.Compute("relu", acc, {M, N},
                  [&](const auto& x) { return Max(MakeLoad(y, {x[0], x[1]}), MakeZero(acc)); });
  }
  return b.BuildOp("dense", std::move(canonical));
}

int64_t ConvOutSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
  return (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

// Zero-padded copy of `data` along two spatial dimensions (h_dim, w_dim), as its own stage so
// that the schedule decides whether to inline it or materialise it.
Buffer PadStage(WorkloadBuilder& b, const Buffer& data, int h_dim, int w_dim, int64_t pad) {
  std::vector<int64_t> shape = data->shape;
  shape[h_dim] += 2 * pad;
  shape[w_dim] += 2 * pad;
  return b.Compute("pad", data->dtype, shape, [&](const std::vector<Expr>& x) {
    std::vector<Expr> src = x;
    src[h_dim] = x[h_dim] - pad;
    src[w_dim] = x[w_dim] - pad;
    Expr inside = (src[h_dim] >= 0) && (src[h_dim] < data->shape[h_dim]) && (src[w_dim] >= 0) &&
                  (src[w_dim] < data->shape[w_dim]);
    return MakeSelect(inside, MakeLoad(data, src), MakeZero(data->dtype));
  });
}

Status CheckConvShape(const std::string& op, int64_t out_h, int64_t out_w) {
  if (out_h <= 0 || out_w <= 0) {
    return InvalidArgumentError("workload spec " + op + ": kernel, padding and dilation give an "
                                "empty output (" + std::to_string(out_h) + "x" +
                                std::to_string(out_w) + ")");
  }
  return Status::Ok();
}

StatusOr<Workload> Conv2d(const OpParams& p, Canonical canonical, bool nhwc) {
  int64_t N = p.Int("N"), C = p.Int("C"), H = p.Int("H"), W = p.Int("W"), F = p.Int("F");
  int64_t R = p.Int("R"), S = p.Int("S"), stride = p.Int("stride"), pad = p.Int("pad");
  int64_t dil = p.Int("dilation");
  DataType t = p.Dtype("dtype"), acc = AccumulatorType(t);
  int64_t OH = ConvOutSize(H, R, stride, pad, dil), OW = ConvOutSize(W, S, stride, pad, dil);
  const std::string op = nhwc ? "conv2d_nhwc" : "conv2d_nchw";
  TUNED_RETURN_IF_ERROR(CheckConvShape(op, OH, OW));
  WorkloadBuilder b;
  Buffer data = nhwc ? b.Input("data", t, {N, H, W, C}) : b.Input("data", t, {N, C, H, W});
  Buffer weight = nhwc ? b.Input("weight", t, {R, S, C, F}) : b.Input("weight", t, {F, C, R, S});
  int h_dim = nhwc ? 1 : 2, w_dim = nhwc ? 2 : 3;
  Buffer in = pad > 0 ? PadStage(b, data, h_dim, w_dim, pad) : data;
  std::vector<int64_t> out_shape = nhwc ? std::vector<int64_t>{N, OH, OW, F}
                                        : std::vector<int64_t>{N, F, OH, OW};
  b.Compute("conv", acc, out_shape, {C, R, S}, ReduceKind::kSum, [&](const auto& x, const auto& r) {
    Expr n = x[0], f = nhwc ? x[3] : x[1], oh = x[h_dim], ow = x[w_dim];
    Expr ih = oh * stride + r[1] * dil, iw = ow * stride + r[2] * dil;
    Expr d = nhwc ? MakeLoad(in, {n, ih, iw, r[0]}) : MakeLoad(in, {n, r[0], ih, iw});
    Expr w = nhwc ? MakeLoad(weight, {r[1], r[2], r[0], f}) : MakeLoad(weight, {f, r[0], r[1], r[2]});
    return MakeCast(acc, d) * MakeCast(acc, w);
  });
  return b.BuildOp(op, std::move(canonical));
}

StatusOr<Workload> DepthwiseConv2d(const OpParams& p, Canonical canonical) {
  int64_t N = p.Int("N"), C = p.Int("C"), H = p.Int("H"), W = p.Int("W");
  int64_t R = p.Int("R"), S = p.Int("S"), stride = p.Int("stride"), pad = p.Int("pad");
  int64_t dil = p.Int("dilation");
  DataType t = p.Dtype("dtype"), acc = AccumulatorType(t);
  int64_t OH = ConvOutSize(H, R, stride, pad, dil), OW = ConvOutSize(W, S, stride, pad, dil);
  TUNED_RETURN_IF_ERROR(CheckConvShape("depthwise_conv2d", OH, OW));
  WorkloadBuilder b;
  Buffer data = b.Input("data", t, {N, C, H, W});
  Buffer weight = b.Input("weight", t, {C, R, S});
  Buffer in = pad > 0 ? PadStage(b, data, 2, 3, pad) : data;
  b.Compute("conv", acc, {N, C, OH, OW}, {R, S}, ReduceKind::kSum, [&](const auto& x, const auto& r) {
    Expr ih = x[2] * stride + r[0] * dil, iw = x[3] * stride + r[1] * dil;
    return MakeCast(acc, MakeLoad(in, {x[0], x[1], ih, iw})) *
           MakeCast(acc, MakeLoad(weight, {x[1], r[0], r[1]}));
  });
  return b.BuildOp("depthwise_conv2d", std::move(canonical));
}

StatusOr<Workload> ReduceRows(const OpParams& p, Canonical canonical) {
  int64_t M = p.Int("M"), N = p.Int("N");
  DataType t = p.Dtype("dtype");
  const std::string& kind = p.Text("kind");
  ReduceKind reduce = kind == "max" ? ReduceKind::kMax : kind == "min" ? ReduceKind::kMin : ReduceKind::kSum;
  WorkloadBuilder b;
  Buffer A = b.Input("A", t, {M, N});
  b.Compute("reduce", t, {M}, {N}, reduce,
            [&](const auto& x, const auto& r) { return MakeLoad(A, {x[0], r[0]}); });
  return b.BuildOp("reduce_rows", std::move(canonical));
}

// softmax over rows in four stages: row max, exp(x - max), row sum, normalise.
StatusOr<Workload> Softmax(const OpParams& p, Canonical canonical) {
  int64_t M = p.Int("M"), N = p.Int("N");
  DataType t = p.Dtype("dtype");
  if (!t.is_float()) return InvalidArgumentError("workload spec softmax: dtype must be a float type");
  WorkloadBuilder b;
  Buffer A = b.Input("A", t, {M, N});
  Buffer mx = b.Compute("row_max", t, {M}, {N}, ReduceKind::kMax,
                        [&](const auto& x, const auto& r) { return MakeLoad(A, {x[0], r[0]}); });
  Buffer ex = b.Compute("exp", t, {M, N}, [&](const auto& x) {
    return MakeCall(Intrinsic::kExp, {MakeLoad(A, {x[0], x[1]}) - MakeLoad(mx, {x[0]})});
  });
  Buffer sum = b.Compute("row_sum", t, {M}, {N}, ReduceKind::kSum,
                         [&](const auto& x, const auto& r) { return MakeLoad(ex, {x[0], r[0]}); });
  b.Compute("softmax", t, {M, N},
            [&](const auto& x) { return MakeLoad(ex, {x[0], x[1]}) / MakeLoad(sum, {x[0]}); });
  return b.BuildOp("softmax", std::move(canonical));
}

StatusOr<Workload> Add(const OpParams& p, Canonical canonical) {
  int64_t M = p.Int("M"), N = p.Int("N");
  DataType t = p.Dtype("dtype");
  WorkloadBuilder b;
  Buffer A = b.Input("A", t, {M, N});
  Buffer B = b.Input("B", t, {M, N});
  b.Compute("add", t, {M, N},
            [&](const auto& x) { return MakeLoad(A, {x[0], x[1]}) + MakeLoad(B, {x[0], x[1]}); });
  return b.BuildOp("add", std::move(canonical));
}

StatusOr<Workload> Relu(const OpParams& p, Canonical canonical) {
  int64_t M = p.Int("M"), N = p.Int("N");
  DataType t = p.Dtype("dtype");
  WorkloadBuilder b;
  Buffer A = b.Input("A", t, {M, N});
  b.Compute("relu", t, {M, N},
            [&](const auto& x) { return Max(MakeLoad(A, {x[0], x[1]}), MakeZero(t)); });
  return b.BuildOp("relu", std::move(canonical));
}

std::vector<ParamSpec> ConvParams(bool with_filters) {
  std::vector<ParamSpec> ps = {IntParam("N", "1"), IntParam("C"), IntParam("H"), IntParam("W")};
  if (with_filters) ps.push_back(IntParam("F"));
  for (ParamSpec extra : {IntParam("R", "3"), IntParam("S", "3"), IntParam("stride", "1"),
                          IntParam("pad", "0", 0), IntParam("dilation", "1")}) {
    ps.push_back(extra);
  }
  ps.push_back(DtypeParam());
  return ps;
}

}  // namespace

const std::vector<OpDef>& OpLibrary() {
  static const std::vector<OpDef> kOps = {
      {"matmul", "C[M,N] = A[M,K] x B[K,N]",
       {IntParam("M"), IntParam("N"), IntParam("K"), DtypeParam()}, Matmul},
      {"batch_matmul", "C[B,M,N] = A[B,M,K] x B[B,K,N]",
       {IntParam("B"), IntParam("M"), IntParam("N"), IntParam("K"), DtypeParam()}, BatchMatmul},
      {"dense", "Y[M,N] = X[M,K] x W[N,K]^T (+ bias[N]) (relu)",
       {IntParam("M"), IntParam("N"), IntParam("K"), BoolParam("bias"), BoolParam("relu"),
        DtypeParam()},
       Dense},
      {"conv2d_nchw", "2-D convolution, data NCHW, weight FCRS",
       ConvParams(true), [](const OpParams& p, Canonical c) { return Conv2d(p, std::move(c), false); }},
      {"conv2d_nhwc", "2-D convolution, data NHWC, weight RSCF",
       ConvParams(true), [](const OpParams& p, Canonical c) { return Conv2d(p, std::move(c), true); }},
      {"depthwise_conv2d", "depthwise 2-D convolution, data NCHW, weight CRS",
       ConvParams(false), DepthwiseConv2d},
      {"reduce_rows", "out[M] = reduce over N of A[M,N]",
       {IntParam("M"), IntParam("N"), {"kind", ParamKind::kChoice, "sum", {"sum", "max", "min"}, 0},
        DtypeParam()},
       ReduceRows},
      {"softmax", "row-wise softmax of A[M,N]", {IntParam("M"), IntParam("N"), DtypeParam()}, Softmax},
      {"add", "C[M,N] = A[M,N] + B[M,N]", {IntParam("M"), IntParam("N"), DtypeParam()}, Add},
      {"relu", "B[M,N] = max(A[M,N], 0)", {IntParam("M"), IntParam("N"), DtypeParam()}, Relu},
  };
  return kOps;
}

}  // namespace tuned::ir
