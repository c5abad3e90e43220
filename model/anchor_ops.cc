// Anchor ONNX operators: the stages that start a fused kernel (operators.h).
#include <algorithm>
#include <map>
#include <numeric>

#include "model/operators.h"
#include "model/operators_internal.h"

namespace tuned::model {
namespace {

using Shape = std::vector<int64_t>;
using Emitter = std::function<StatusOr<KernelValue>(const Graph&, const Node&, DefinitionWriter&)>;

Status Unsupported(const Node& node, const std::string& why) {
  return InvalidArgumentError(node.op + " node '" + node.name + "': " + why);
}

// Every present input and the first output are float32; other outputs are absent.
Status CheckFloat32(const Graph& g, const Node& node, size_t data_inputs) {
  for (size_t i = 0; i < std::min(data_inputs, node.inputs.size()); ++i) {
    const std::string& in = node.inputs[i];
    if (!in.empty() && g.tensor(in).dtype != "float32") {
      return Unsupported(node, "input '" + in + "' is " + g.tensor(in).dtype + ", not float32");
    }
  }
  if (node.outputs.empty() || g.tensor(node.outputs[0]).dtype != "float32") {
    return Unsupported(node, "output is not float32");
  }
  for (size_t i = 1; i < node.outputs.size(); ++i) {
    if (!node.outputs[i].empty()) return Unsupported(node, "output " + std::to_string(i) + " is used");
  }
  return Status::Ok();
}

// `var * coeff + offset` without the parts that do nothing.
std::string Affine(const std::string& var, int64_t coeff, int64_t offset = 0) {
  std::string text = coeff == 0 ? "" : coeff == 1 ? var : var + " * " + std::to_string(coeff);
  if (offset == 0) return text.empty() ? "0" : text;
  if (text.empty()) return std::to_string(offset);
  return text + (offset > 0 ? " + " : " - ") + std::to_string(offset > 0 ? offset : -offset);
}

std::string Conjunction(const std::vector<std::string>& terms) {
  std::string text;
  for (const std::string& t : terms) text += (text.empty() ? "" : " && ") + t;
  return text;
}

int64_t Product(const Shape& s) { return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>()); }

// A negative axis counts from the end.
StatusOr<int64_t> NormalizeAxis(const Node& node, int64_t axis, size_t rank) {
  if (axis < 0) axis += int64_t(rank);
  if (axis < 0 || axis >= int64_t(rank)) return Unsupported(node, "axis out of range");
  return axis;
}

// The window geometry of convolution and pooling: per spatial dimension, stride, dilation and
// the padding at each end (auto_pad resolved as ONNX defines it).
struct Window {
  Shape kernel, strides, dilations, pad_begin, pad_end;
};

StatusOr<Window> WindowOf(const Node& node, const Shape& input, const Shape& kernel) {
  size_t k = kernel.size();
  Window w;
  w.kernel = kernel;
  w.strides = node.Ints("strides", Shape(k, 1));
  w.dilations = node.Ints("dilations", Shape(k, 1));
  Shape pads = node.Ints("pads", Shape(2 * k, 0));
  if (w.strides.size() != k || w.dilations.size() != k || pads.size() != 2 * k) {
    return Unsupported(node, "strides, dilations or pads do not match the spatial rank");
  }
  std::string auto_pad = node.String("auto_pad", "NOTSET");
  for (size_t i = 0; i < k; ++i) {
    int64_t in = input[2 + i], begin = pads[i], end = pads[k + i];
    if (auto_pad == "VALID") {
      begin = end = 0;
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t out = (in + w.strides[i] - 1) / w.strides[i];
      int64_t total = std::max<int64_t>((out - 1) * w.strides[i] + (kernel[i] - 1) * w.dilations[i] + 1 - in, 0);
      begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end = total - begin;
    } else if (auto_pad != "NOTSET") {
      return Unsupported(node, "auto_pad " + auto_pad);
    }
    if (begin < 0 || end < 0 || w.strides[i] < 1 || w.dilations[i] < 1) {
      return Unsupported(node, "negative padding or a stride or dilation below 1");
    }
    w.pad_begin.push_back(begin);
    w.pad_end.push_back(end);
  }
  return w;
}

// Spatial input position read by output position `out` and window offset `r` in dimension i,
// `shift` before the start of the unpadded input.
std::string WindowPosition(const Window& w, size_t i, const std::string& out, const std::string& r,
                           int64_t shift) {
  std::string pos = Affine(out, w.strides[i]) + " + " + Affine(r, w.dilations[i]);
  return shift > 0 ? pos + " - " + std::to_string(shift) : pos;
}

// Whether a window of dimension i can reach outside [0, in) for an output extent `out`.
bool WindowLeaves(const Window& w, size_t i, int64_t in, int64_t out) {
  return w.pad_begin[i] > 0 || (out - 1) * w.strides[i] + (w.kernel[i] - 1) * w.dilations[i] - w.pad_begin[i] >= in;
}

// The convolutions' last stage: the sum of `body` over `reduce` (a plain stage when there is
// nothing to reduce), plus the optional bias (input 2) per output channel. The stage is
// computed over `compute` (dimensions of `out` merged, KernelValue::compute_shape; empty: `out`).
StatusOr<KernelValue> SumWithBias(const Graph& g, const Node& n, DefinitionWriter& w, const std::string& stage,
                                  const Shape& out, const Shape& reduce,
                                  const std::function<std::string(const Index&, const Index&)>& body,
                                  const Shape& compute = {}) {
  std::string name = w.FreshName(stage);
  const Shape& stage_shape = compute.empty() ? out : compute;
  auto stage_body = [&](const Index& a, const Index& r) { return body(ExpandIndex(out, stage_shape, a), r); };
  KernelValue sum = ViewAs(reduce.empty() ? w.Stage(name, stage_shape, [&](const Index& a) { return stage_body(a, {}); })
                                          : w.Reduction(name, stage_shape, "sum", reduce, stage_body),
                           out);
  if (n.Input(2).empty()) return sum;
  std::string bias = w.Input(g.tensor(n.Input(2)), "bias");
  return KernelValue{out, [sum, bias](const Index& a) { return "(" + sum.at(a) + " + " + bias + "[" + a[1] + "])"; }, "",
                     sum.compute_shape};
}

// A pointwise convolution (a 1x1 window at stride 1, unpadded, one group) is a matrix product
// over its image: it is computed over the spatial dimensions merged into one, whose whole
// vectors tile a 56 x 56 image as 196 x 16 where its 56-wide rows would leave a masked tail.
// Returns the merged shape [N, F, H*W...], or none for another convolution.
Shape PointwiseComputeShape(const Shape& out, const Window& win, int64_t groups) {
  if (groups != 1 || out.size() < 4) return {};
  for (size_t i = 0; i < win.kernel.size(); ++i) {
    if (win.kernel[i] != 1 || win.strides[i] != 1 || win.pad_begin[i] != 0 || win.pad_end[i] != 0) return {};
  }
  return {out[0], out[1], Product(Shape(out.begin() + 2, out.end()))};
}

// Conv: an optional zero-padded copy (its own stage, as the library's convolutions), then the
// reduction over input channels of the group and the window; bias added per output channel.
StatusOr<KernelValue> Conv(const Graph& g, const Node& n, DefinitionWriter& w) {
  TUNED_RETURN_IF_ERROR(CheckFloat32(g, n, 3));
  const Tensor& x = g.tensor(n.Input(0));
  const Tensor& weight = g.tensor(n.Input(1));
  const Shape& out = g.tensor(n.outputs[0]).shape;
  if (x.shape.size() < 3 || weight.shape.size() != x.shape.size()) return Unsupported(n, "input rank below 3");
  size_t k = x.shape.size() - 2;
  int64_t groups = n.Int("group", 1), C = x.shape[1], F = weight.shape[0];
  if (groups < 1 || C % groups != 0 || F % groups != 0 || weight.shape[1] != C / groups) {
    return Unsupported(n, "group does not divide the channels");
  }
  TUNED_ASSIGN_OR_RETURN(Window win, WindowOf(n, x.shape, Shape(weight.shape.begin() + 2, weight.shape.end())));
  std::string data = w.Input(x, "data");
  std::string filter = w.Input(weight, "weight");
  bool padded = false;
  for (size_t i = 0; i < k; ++i) padded |= win.pad_begin[i] > 0 || win.pad_end[i] > 0;
  std::string source = data;
  if (padded) {
    Shape shape = x.shape;
    for (size_t i = 0; i < k; ++i) shape[2 + i] += win.pad_begin[i] + win.pad_end[i];
    source = w.FreshName("pad");
    w.Stage(source, shape, [&](const Index& a) {
      std::vector<std::string> inside;
      Index src{a[0], a[1]};
      for (size_t i = 0; i < k; ++i) {
        const std::string& h = a[2 + i];
        if (win.pad_begin[i] > 0) inside.push_back(h + " >= " + std::to_string(win.pad_begin[i]));
        if (win.pad_end[i] > 0) inside.push_back(h + " < " + std::to_string(x.shape[2 + i] + win.pad_begin[i]));
        src.push_back(Affine(h, 1, -win.pad_begin[i]));
      }
      return "select(" + Conjunction(inside) + ", " + Access(data, src) + ", 0.0)";
    });
  }
  int64_t group_in = C / groups, group_out = F / groups;
  Shape reduce;
  if (group_in > 1) reduce.push_back(group_in);
  for (size_t i = 0; i < k; ++i) reduce.push_back(win.kernel[i]);
  auto body = [&](const Index& a, const Index& r) {
    size_t next = 0;
    std::string c = group_in > 1 ? r[next++] : "0";
    std::string group_base = groups == 1 ? "" : group_out == 1 ? a[1] : "(" + a[1] + " / " + std::to_string(group_out) + ")";
    std::string channel = group_base.empty() ? c
                          : group_in == 1    ? group_base
                          : c == "0"         ? Affine(group_base, group_in)
                                             : Affine(group_base, group_in) + " + " + c;
    Index in{a[0], channel}, wt{a[1], c};
    for (size_t i = 0; i < k; ++i, ++next) {
      in.push_back(WindowPosition(win, i, a[2 + i], r[next], 0));
      wt.push_back(r[next]);
    }
    return Access(source, in) + " * " + Access(filter, wt);
  };
  return SumWithBias(g, n, w, "conv", out, reduce, body, PointwiseComputeShape(out, win, groups));
}

// ConvTranspose: each output position gathers the input positions whose window reaches it,
// o = i · stride − pad + r · dilation, so i = (o + pad − r · dilation) / stride where that
// divides and lands inside the input (a guarded read; nothing else is touched).
StatusOr<KernelValue> ConvTranspose(const Graph& g, const Node& n, DefinitionWriter& w) {
  TUNED_RETURN_IF_ERROR(CheckFloat32(g, n, 3));
  const Tensor& x = g.tensor(n.Input(0));
  const Tensor& weight = g.tensor(n.Input(1));
  const Shape& out = g.tensor(n.outputs[0]).shape;
  if (x.shape.size() < 3 || weight.shape.size() != x.shape.size()) return Unsupported(n, "input rank below 3");
  size_t k = x.shape.size() - 2;
  int64_t groups = n.Int("group", 1), C = x.shape[1];
  if (groups < 1 || C % groups != 0 || weight.shape[0] != C) return Unsupported(n, "group does not divide the channels");
  int64_t group_in = C / groups, group_out = weight.shape[1];
  Shape kernel(weight.shape.begin() + 2, weight.shape.end());
  Shape strides = n.Ints("strides", Shape(k, 1)), dilations = n.Ints("dilations", Shape(k, 1));
  Shape pads = n.Ints("pads", Shape(2 * k, 0)), output_padding = n.Ints("output_padding", Shape(k, 0));
  if (strides.size() != k || dilations.size() != k || pads.size() != 2 * k || output_padding.size() != k) {
    return Unsupported(n, "strides, dilations, pads or output_padding do not match the spatial rank");
  }
  std::string auto_pad = n.String("auto_pad", "NOTSET");
  bool given_shape = n.Find("output_shape") != nullptr;
  for (size_t i = 0; i < k; ++i) {
    if (strides[i] < 1 || dilations[i] < 1) return Unsupported(n, "a stride or dilation below 1");
    if (!given_shape && auto_pad == "NOTSET") continue;
    // ONNX's rule: the padding that gives the output size, the odd unit at the end (SAME_UPPER)
    // or at the start.
    int64_t total = strides[i] * (x.shape[2 + i] - 1) + output_padding[i] + (kernel[i] - 1) * dilations[i] + 1 - out[2 + i];
    int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);  // rounded down, as ONNX's reference does
    pads[i] = auto_pad == "SAME_UPPER" ? half : total - half;
  }
  std::string data = w.Input(x, "data");
  std::string filter = w.Input(weight, "weight");
  Shape reduce;
  if (group_in > 1) reduce.push_back(group_in);
  for (size_t i = 0; i < k; ++i) reduce.push_back(kernel[i]);
  auto body = [&](const Index& a, const Index& r) {
    size_t next = 0;
    std::string c = group_in > 1 ? r[next++] : "0";
    std::string group = groups == 1 ? "" : "(" + a[1] + " / " + std::to_string(group_out) + ")";
    std::string channel = group.empty() ? c : c == "0" ? Affine(group, group_in) : Affine(group, group_in) + " + " + c;
    std::string local = groups == 1 ? a[1] : a[1] + " - " + Affine(group, group_out);
    Index in{a[0], channel}, wt{channel, local};
    std::vector<std::string> inside;
    for (size_t i = 0; i < k; ++i, ++next) {
      std::string reach = Affine(a[2 + i], 1, pads[i]) + " - " + Affine(r[next], dilations[i]);
      in.push_back(strides[i] == 1 ? reach : "floordiv(" + reach + ", " + std::to_string(strides[i]) + ")");
      wt.push_back(r[next]);
      inside.push_back(reach + " >= 0");
      if (strides[i] > 1) inside.push_back("floormod(" + reach + ", " + std::to_string(strides[i]) + ") == 0");
      inside.push_back(in.back() + " < " + std::to_string(x.shape[2 + i]));
    }
    return "select(" + Conjunction(inside) + ", " + Access(data, in) + " * " + Access(filter, wt) + ", 0.0)";
  };
  return SumWithBias(g, n, w, "conv_transpose", out, reduce, body);
}

// MatMul with numpy semantics: batch dimensions broadcast, a 1-D operand promoted and dropped.
StatusOr<KernelValue> MatMul(const Graph& g, const Node& n, DefinitionWriter& w) {
  TUNED_RETURN_IF_ERROR(CheckFloat32(g, n, 2));
  const Tensor& a = g.tensor(n.Input(0));
  const Tensor& b = g.tensor(n.Input(1));
  const Shape& out = g.tensor(n.outputs[0]).shape;
  bool a_vector = a.shape.size() == 1, b_vector = b.shape.size() == 1;
  if (a.shape.empty() || b.shape.empty()) return Unsupported(n, "a rank-0 operand");
  int64_t K = a.shape.back();
  size_t batch_rank = out.size() - (a_vector ? 0 : 1) - (b_vector ? 0 : 1);
  Shape batch(out.begin(), out.begin() + batch_rank);
  std::string A = w.Input(a, "A"), B = w.Input(b, "B");
  return w.Reduction(w.FreshName("matmul"), out, "sum", {K}, [&](const Index& o, const Index& r) {
    Index batch_index(o.begin(), o.begin() + batch_rank);
    Index ia, ib;
    if (!a_vector) {
      Shape a_batch(a.shape.begin(), a.shape.end() - 2);
      ia = BroadcastIndex(a_batch, batch, batch_index);
      ia.push_back(o[batch_rank]);
    }
    ia.push_back(r[0]);
    if (!b_vector) {
      Shape b_batch(b.shape.begin(), b.shape.end() - 2);
      ib = BroadcastIndex(b_batch, batch, batch_index);
      ib.push_back(r[0]);
      ib.push_back(o.back());
    } else {
      ib.push_back(r[0]);
    }
    return Access(A, ia) + " * " + Access(B, ib);
  });
}

// Gemm: alpha * A' B' + beta * C, with C broadcast to the result.
StatusOr<KernelValue> Gemm(const Graph& g, const Node& n, DefinitionWriter& w) {
  TUNED_RETURN_IF_ERROR(CheckFloat32(g, n, 3));
  const Tensor& a = g.tensor(n.Input(0));
  const Tensor& b = g.tensor(n.Input(1));
  const Shape& out = g.tensor(n.outputs[0]).shape;
  if (a.shape.size() != 2 || b.shape.size() != 2) return Unsupported(n, "operands are not matrices");
  bool ta = n.Int("transA", 0) != 0, tb = n.Int("transB", 0) != 0;
  int64_t K = ta ? a.shape[0] : a.shape[1];
  double alpha = n.Float("alpha", 1.0), beta = n.Float("beta", 1.0);
  std::string A = w.Input(a, "A"), B = w.Input(b, "B");
  KernelValue gemm = w.Reduction(w.FreshName("gemm"), out, "sum", {K}, [&](const Index& o, const Index& r) {
    Index ia = ta ? Index{r[0], o[0]} : Index{o[0], r[0]};
    Index ib = tb ? Index{o[1], r[0]} : Index{r[0], o[1]};
    return Access(A, ia) + " * " + Access(B, ib);
  });
  bool has_c = !n.Input(2).empty() && beta != 0;
  if (alpha == 1 && !has_c) return gemm;
  std::string C = has_c ? w.Input(g.tensor(n.Input(2)), "C") : "";
  Shape c_shape = has_c ? g.tensor(n.Input(2)).shape : Shape{};
  return KernelValue{out, [=](const Index& o) {
                       std::string v = alpha == 1 ? gemm.at(o) : FloatLiteral(alpha) + " * " + gemm.at(o);
                       if (!has_c) return v;
                       std::string c = Access(C, BroadcastIndex(c_shape, out, o));
                       return "(" + v + " + " + (beta == 1 ? c : FloatLiteral(beta) + " * " + c) + ")";
                     },
                     ""};
}

// MaxPool / AveragePool: a window reduction; positions outside the input are skipped (max) or
// count as zeros that the divisor leaves out unless count_include_pad (average).
StatusOr<KernelValue> Pool(const Graph& g, const Node& n, DefinitionWriter& w) {
  TUNED_RETURN_IF_ERROR(CheckFloat32(g, n, 1));
  const Tensor& x = g.tensor(n.Input(0));
  const Shape& out = g.tensor(n.outputs[0]).shape;
  if (x.shape.size() < 3) return Unsupported(n, "input rank below 3");
  size_t k = x.shape.size() - 2;
  Shape kernel = n.Ints("kernel_shape", {});
  if (kernel.size() != k) return Unsupported(n, "kernel_shape does not match the spatial rank");
  bool is_max = n.op == "MaxPool";
  if (!is_max && n.Find("dilations") != nullptr) return Unsupported(n, "dilations");
  TUNED_ASSIGN_OR_RETURN(Window win, WindowOf(n, x.shape, kernel));
  std::string data = w.Input(x, "data");
  bool guarded = false;
  for (size_t i = 0; i < k; ++i) guarded |= WindowLeaves(win, i, x.shape[2 + i], out[2 + i]);
  std::string lowest = FloatLiteral(-3.4028234663852886e38);
  KernelValue pool = w.Reduction(w.FreshName(is_max ? "max_pool" : "pool_sum"), out, is_max ? "max" : "sum",
                                 kernel, [&](const Index& a, const Index& r) {
    Index src{a[0], a[1]};
    std::vector<std::string> inside;
    for (size_t i = 0; i < k; ++i) {
      std::string p = WindowPosition(win, i, a[2 + i], r[i], win.pad_begin[i]);
      src.push_back(p);
      if (WindowLeaves(win, i, x.shape[2 + i], out[2 + i])) {
        inside.push_back(p + " >= 0 && " + p + " < " + std::to_string(x.shape[2 + i]));
      }
    }
    if (!guarded) return Access(data, src);
    return "select(" + Conjunction(inside) + ", " + Access(data, src) + ", " + (is_max ? lowest : "0.0") + ")";
  });
  if (is_max) return pool;
  bool include_pad = n.Int("count_include_pad", 0) != 0;
  auto divisor = [=](const Index& a) {
    if (!guarded) return FloatLiteral(double(Product(kernel)));
    std::string count;
    for (size_t i = 0; i < k; ++i) {
      std::string start = Affine(a[2 + i], win.strides[i], -win.pad_begin[i]);
      int64_t limit = x.shape[2 + i] + (include_pad ? win.pad_end[i] : 0);
      std::string end = "min(" + Affine(a[2 + i], win.strides[i], kernel[i] - win.pad_begin[i]) + ", " +
                        std::to_string(limit) + ")";
      std::string first = include_pad ? "(" + start + ")" : "max(" + start + ", 0)";
      count += (count.empty() ? "" : " * ") + std::string("(") + end + " - " + first + ")";
    }
    return "float32(" + count + ")";
  };
  return KernelValue{out, [pool, divisor](const Index& a) { return "(" + pool.at(a) + " / " + divisor(a) + ")"; }, ""};
}

// GlobalAveragePool / GlobalMaxPool: a reduction over every spatial dimension.
StatusOr<KernelValue> GlobalPool(const Graph& g, const Node& n, DefinitionWriter& w) {
  TUNED_RETURN_IF_ERROR(CheckFloat32(g, n, 1));
  const Tensor& x = g.tensor(n.Input(0));
  const Shape& out = g.tensor(n.outputs[0]).shape;
  if (x.shape.size() < 3) return Unsupported(n, "input rank below 3");
  Shape spatial(x.shape.begin() + 2, x.shape.end());
  bool is_max = n.op == "GlobalMaxPool";
  std::string data = w.Input(x, "data");
  KernelValue pool = w.Reduction(w.FreshName(is_max ? "global_max" : "global_sum"), out, is_max ? "max" : "sum",
                                 spatial, [&](const Index& a, const Index& r) {
    Index src{a[0], a[1]};
    src.insert(src.end(), r.begin(), r.end());
    return Access(data, src);
  });
  if (is_max) return pool;
  std::string count = FloatLiteral(double(Product(spatial)));
  return KernelValue{out, [pool, count](const Index& a) { return "(" + pool.at(a) + " / " + count + ")"; }, ""};
}

// The dimensions a reduction of `rank` dimensions covers, kept as extent-1 dimensions in its
// stages, and the index that reads such a stage at a full index.
Shape KeptShape(const Shape& shape, const std::vector<bool>& reduced) {
  Shape kept = shape;
  for (size_t i = 0; i < shape.size(); ++i) if (reduced[i]) kept[i] = 1;
  return kept;
}
Index Collapsed(const Index& index, const std::vector<bool>& reduced) {
  Index c = index;
  for (size_t i = 0; i < c.size(); ++i) if (reduced[i]) c[i] = "0";
  return c;
}
Shape ReducedExtents(const Shape& shape, const std::vector<bool>& reduced) {
  Shape r;
  for (size_t i = 0; i < shape.size(); ++i) if (reduced[i]) r.push_back(shape[i]);
  return r;
}
// `index` with the reduced dimensions replaced by the reduction axes, in order.
Index Spread(const Index& index, const std::vector<bool>& reduced, const Index& raxes) {
  Index s = index;
  size_t next = 0;
  for (size_t i = 0; i < s.size(); ++i) if (reduced[i]) s[i] = raxes[next++];
  return s;
}

// Softmax / LogSoftmax: max, exp of the difference, sum, normalise. Opset 13 reduces one axis;
// earlier opsets every axis from `axis` on.
StatusOr<KernelValue> Softmax(const Graph& g, const Node& n, DefinitionWriter& w) {
  TUNED_RETURN_IF_ERROR(CheckFloat32(g, n, 1));
  const Tensor& x = g.tensor(n.Input(0));
  if (x.shape.empty()) return Unsupported(n, "a rank-0 input");
  bool opset13 = g.opset >= 13;
  TUNED_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(n, n.Int("axis", opset13 ? -1 : 1), x.shape.size()));
  std::vector<bool> reduced(x.shape.size(), false);
  for (size_t i = 0; i < x.shape.size(); ++i) reduced[i] = opset13 ? int64_t(i) == axis : int64_t(i) >= axis;
  Shape kept = KeptShape(x.shape, reduced), extents = ReducedExtents(x.shape, reduced);
  std::string data = w.Input(x, "data");
  KernelValue mx = w.Reduction(w.FreshName("row_max"), kept, "max", extents, [&](const Index& a, const Index& r) {
    return Access(data, Spread(a, reduced, r));
  });
  KernelValue ex = w.Stage(w.FreshName("exp"), x.shape, [&](const Index& a) {
    return "exp(" + Access(data, a) + " - " + mx.at(Collapsed(a, reduced)) + ")";
  });
  KernelValue sum = w.Reduction(w.FreshName("row_sum"), kept, "sum", extents, [&](const Index& a, const Index& r) {
    return ex.at(Spread(a, reduced, r));
  });
  if (n.op == "LogSoftmax") {
    return KernelValue{x.shape, [=](const Index& a) {
                         Index c = Collapsed(a, reduced);
                         return "(" + Access(data, a) + " - " + mx.at(c) + " - log(" + sum.at(c) + "))";
                       },
                       ""};
  }
  return KernelValue{x.shape, [=](const Index& a) { return "(" + ex.at(a) + " / " + sum.at(Collapsed(a, reduced)) + ")"; }, ""};
}

// ReduceSum / ReduceMean / ReduceMax / ReduceMin over the axes of an attribute or a constant
// input, keeping the reduced dimensions as 1 or dropping them.
StatusOr<KernelValue> Reduce(const Graph& g, const Node& n, DefinitionWriter& w) {
  TUNED_RETURN_IF_ERROR(CheckFloat32(g, n, 1));
  const Tensor& x = g.tensor(n.Input(0));
  const Shape& out = g.tensor(n.outputs[0]).shape;
  std::vector<int64_t> axes = n.Ints("axes", {});
  if (!n.Input(1).empty()) {
    if (!g.IsConstant(n.Input(1))) return Unsupported(n, "axes are not a constant");
    for (double a : g.tensor(n.Input(1)).values) axes.push_back(int64_t(a));
  }
  std::vector<bool> reduced(x.shape.size(), axes.empty());
  if (axes.empty() && n.Int("noop_with_empty_axes", 0) != 0) return Unsupported(n, "noop_with_empty_axes");
  for (int64_t a : axes) {
    TUNED_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(n, a, x.shape.size()));
    reduced[axis] = true;
  }
  bool keep = n.Int("keepdims", 1) != 0;
  Shape extents = ReducedExtents(x.shape, reduced);
  const std::map<std::string, std::string> kinds = {
      {"ReduceSum", "sum"}, {"ReduceMean", "sum"}, {"ReduceMax", "max"}, {"ReduceMin", "min"}};
  std::string data = w.Input(x, "data");
  KernelValue red = w.Reduction(w.FreshName("reduce"), out, kinds.at(n.op), extents, [&](const Index& o, const Index& r) {
    Index full(x.shape.size());
    size_t next_out = 0, next_r = 0;
    for (size_t i = 0; i < x.shape.size(); ++i) {
      if (reduced[i]) {
        full[i] = r[next_r++];
        if (keep) ++next_out;
      } else {
        full[i] = o[next_out++];
      }
    }
    return Access(data, full);
  });
  if (n.op != "ReduceMean") return red;
  std::string count = FloatLiteral(double(Product(extents)));
  return KernelValue{out, [red, count](const Index& a) { return "(" + red.at(a) + " / " + count + ")"; }, ""};
}

// LayerNormalization (opset 17): mean, centred values, variance over the dimensions from `axis`
// on; then scale and bias.
StatusOr<KernelValue> LayerNorm(const Graph& g, const Node& n, DefinitionWriter& w) {
  TUNED_RETURN_IF_ERROR(CheckFloat32(g, n, 3));
  const Tensor& x = g.tensor(n.Input(0));
  if (x.shape.empty()) return Unsupported(n, "a rank-0 input");
  TUNED_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(n, n.Int("axis", -1), x.shape.size()));
  std::vector<bool> reduced(x.shape.size(), false);
  for (size_t i = size_t(axis); i < x.shape.size(); ++i) reduced[i] = true;
  Shape kept = KeptShape(x.shape, reduced), extents = ReducedExtents(x.shape, reduced);
  std::string count = FloatLiteral(double(Product(extents)));
  std::string eps = FloatLiteral(n.Float("epsilon", 1e-5));
  std::string data = w.Input(x, "X");
  Shape scale_shape = g.tensor(n.Input(1)).shape;
  std::string scale = w.Input(g.tensor(n.Input(1)), "scale");
  bool has_bias = !n.Input(2).empty();
  Shape bias_shape = has_bias ? g.tensor(n.Input(2)).shape : Shape{};
  std::string bias = has_bias ? w.Input(g.tensor(n.Input(2)), "bias") : "";
  KernelValue sum = w.Reduction(w.FreshName("mean_sum"), kept, "sum", extents, [&](const Index& a, const Index& r) {
    return Access(data, Spread(a, reduced, r));
  });
  KernelValue centered = w.Stage(w.FreshName("centered"), x.shape, [&](const Index& a) {
    return Access(data, a) + " - " + sum.at(Collapsed(a, reduced)) + " / " + count;
  });
  KernelValue square = w.Reduction(w.FreshName("square_sum"), kept, "sum", extents, [&](const Index& a, const Index& r) {
    std::string c = centered.at(Spread(a, reduced, r));
    return c + " * " + c;
  });
  const Shape& shape = x.shape;
  return KernelValue{shape, [=](const Index& a) {
                       std::string v = "(" + centered.at(a) + " / sqrt(" + square.at(Collapsed(a, reduced)) +
                                       " / " + count + " + " + eps + ") * " +
                                       Access(scale, BroadcastIndex(scale_shape, shape, a));
                       if (has_bias) v += " + " + Access(bias, BroadcastIndex(bias_shape, shape, a));
                       return v + ")";
                     },
                     ""};
}

const std::map<std::string, Emitter>& Emitters() {
  static const std::map<std::string, Emitter> kOps = {
      {"Conv", Conv},
      {"ConvTranspose", ConvTranspose},
      {"MatMul", MatMul},
      {"Gemm", Gemm},
      {"MaxPool", Pool},
      {"AveragePool", Pool},
      {"GlobalAveragePool", GlobalPool},
      {"GlobalMaxPool", GlobalPool},
      {"Softmax", Softmax},
      {"LogSoftmax", Softmax},
      {"ReduceSum", Reduce},
      {"ReduceMean", Reduce},
      {"ReduceMax", Reduce},
      {"ReduceMin", Reduce},
      {"LayerNormalization", LayerNorm},
  };
  return kOps;
}

}  // namespace

bool IsAnchorOp(const std::string& op) { return Emitters().count(op) > 0; }

StatusOr<KernelValue> EmitAnchor(const Graph& graph, const Node& node, DefinitionWriter& writer) {
  auto it = Emitters().find(node.op);
  if (it == Emitters().end()) return Unsupported(node, "not an anchor operator");
  for (const std::string& out : node.outputs) {
    if (!out.empty() && Product(graph.tensor(out).shape) == 0) return Unsupported(node, "an empty output");
  }
  return it->second(graph, node, writer);
}

}  // namespace tuned::model
