"""The sweep's shapes: one ONNX model of a single MatMul or Conv (float32, batch 1, the weights
constant initializers), or of a memory-bound op over rows, each with the arguments of
tuned_onednn_op for the same op.

Built with the test models' Builder (tests/models/make_models.py), so opset, IR version and
weight initialisation are theirs.
"""
import os
import sys

import numpy as np
from dataclasses import dataclass

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "models"))
from make_models import Builder  # noqa: E402


@dataclass
class MatMul:
    name: str
    m: int
    k: int
    n: int

    def macs(self):
        return self.m * self.n * self.k

    def bytes(self):
        """fp32 bytes an op must move at least: every input, weight and output once."""
        return 4 * (self.m * self.k + self.k * self.n + self.m * self.n)

    def onednn_args(self):
        return ["matmul", self.m, self.n, self.k]

    def model(self):
        b = Builder(1)
        y = b.node("MatMul", ["x", b.weight("w", (self.k, self.n), self.k)])
        return b.model(self.name, [("x", [self.m, self.k])], y, [self.m, self.n])


@dataclass
class Conv:
    name: str
    c: int
    hw: int
    f: int
    k: int
    stride: int = 1
    groups: int = 1

    def out_hw(self):
        return (self.hw + 2 * (self.k // 2) - self.k) // self.stride + 1

    def macs(self):
        return self.f * self.out_hw() ** 2 * (self.c // self.groups) * self.k * self.k

    def bytes(self):
        """fp32 bytes an op must move at least: every input, weight and output once."""
        return 4 * (self.c * self.hw ** 2 + self.f * (self.c // self.groups) * self.k ** 2 + self.f * self.out_hw() ** 2)

    def onednn_args(self):
        return ["conv", 1, self.c, self.hw, self.hw, self.f, self.k, self.k, self.stride, self.k // 2, self.groups]

    def model(self):
        b = Builder(1)
        y = b.conv("x", self.c, self.f, self.k, self.stride, self.groups)  # pads k // 2
        return b.model(self.name, [("x", [1, self.c, self.hw, self.hw])], y, [1, self.f, self.out_hw(), self.out_hw()])


@dataclass
class RowOp:
    """A memory-bound op over a [rows, cols] tensor: softmax, layer norm and a mean along the
    rows, the sum of the whole tensor (one output: its reduction is split across the cores), the
    sum over the rows (one output per column, a bias's gradient over a batch), GELU (erf form, as
    BERT's exporters write it), an added second tensor with ReLU. Its
    roofline is its bytes at the triad bandwidth where it writes as much as it reads (STREAM's
    convention: the write-allocate is not counted), else at the read bandwidth. Its "MACs" are
    its elements, a nominal figure."""
    name: str
    op: str  # "softmax", "layer_norm", "reduce_mean", "reduce_sum", "reduce_cols", "gelu" or "add_relu"
    rows: int
    cols: int

    def macs(self):
        return self.rows * self.cols

    def bytes(self):
        tensors = {"softmax": 2, "layer_norm": 2, "reduce_mean": 1, "reduce_sum": 1, "reduce_cols": 1, "gelu": 2,
                   "add_relu": 3}[self.op]
        return 4 * (tensors * self.rows * self.cols + (self.rows if self.op == "reduce_mean" else 0))

    def bandwidth(self):
        return "read" if self.op.startswith("reduce") else "triad"

    def onednn_args(self):
        return [self.op, self.rows, self.cols]

    def model(self):
        b = Builder(1)
        shape = [self.rows, self.cols]
        inputs = [("x", shape)]
        if self.op == "softmax":
            y, out = b.node("Softmax", ["x"], axis=-1), shape
        elif self.op == "reduce_mean":
            y, out = b.node("ReduceMean", ["x"], axes=[1], keepdims=1), [self.rows, 1]
        elif self.op == "reduce_sum":
            y, out = b.node("ReduceSum", ["x"], keepdims=1), [1, 1]
        elif self.op == "reduce_cols":
            axes = b.const("axes", np.array([0], dtype=np.int64))
            y, out = b.node("ReduceSum", ["x", axes], keepdims=1), [1, self.cols]
        elif self.op == "layer_norm":
            scale = b.const("scale", (1 + 0.1 * b.rng.standard_normal(self.cols)).astype(np.float32))
            shift = b.const("shift", (0.1 * b.rng.standard_normal(self.cols)).astype(np.float32))
            y, out = b.node("LayerNormalization", ["x", scale, shift], axis=-1, epsilon=1e-5), shape
        elif self.op == "gelu":
            half = b.node("Div", ["x", b.const("sqrt2", np.array(np.sqrt(2.0), dtype=np.float32))])
            erf = b.node("Add", [b.node("Erf", [half]), b.const("one", np.array(1.0, dtype=np.float32))])
            y = b.node("Mul", [b.node("Mul", ["x", erf]), b.const("half", np.array(0.5, dtype=np.float32))])
            out = shape
        else:
            inputs.append(("y", shape))
            y, out = b.node("Relu", [b.node("Add", ["x", "y"])]), shape
        return b.model(self.name, inputs, y, out)


SHAPES = [
    MatMul("gemm_257x263x269", 257, 263, 269),       # odd and prime extents: no tile divides them
    MatMul("gemm_383x479x127", 383, 479, 127),
    MatMul("gemm_1000", 1000, 1000, 1000),
    MatMul("gemm_1024", 1024, 1024, 1024),           # the large power-of-two GEMM: % of peak
    MatMul("gemv_4096", 1, 4096, 4096),              # memory bound: 64 MB of weights per call
    Conv("conv_stem_7x7s2", 3, 224, 64, 7, stride=2),  # ResNet stem
    Conv("conv3x3_64x56", 64, 56, 64, 3),            # ResNet 3x3 stages
    Conv("conv3x3_128x28", 128, 28, 128, 3),
    Conv("conv3x3_256x14", 256, 14, 256, 3),
    Conv("conv3x3_512x7", 512, 7, 512, 3),
    Conv("conv3x3s2_64to128x56", 64, 56, 128, 3, stride=2),  # ResNet's downsampling 3x3
    Conv("conv1x1_256to64x56", 256, 56, 64, 1),      # ResNet-50 bottleneck reduction
    Conv("dwconv3x3_32x112", 32, 112, 32, 3, groups=32),             # MobileNetV2 depthwise
    Conv("dwconv3x3s2_144x56", 144, 56, 144, 3, stride=2, groups=144),
    MatMul("bert_128x768x768", 128, 768, 768),       # BERT-base attention projection
    MatMul("bert_128x768x3072", 128, 768, 3072),     # BERT-base FFN up-projection
    RowOp("softmax_4096x4096", "softmax", 4096, 4096),   # 64 MB in, 64 MB out: memory bound
    RowOp("reduce_mean_4096x4096", "reduce_mean", 4096, 4096),
    RowOp("reduce_sum_4096x4096", "reduce_sum", 4096, 4096),   # one output: a loss, a norm
    RowOp("reduce_cols_262144x64", "reduce_cols", 262144, 64),   # a bias's gradient over a batch
    RowOp("add_relu_4096x4096", "add_relu", 4096, 4096),
    RowOp("layer_norm_128x768", "layer_norm", 128, 768),  # BERT-base's, in cache
    RowOp("gelu_128x3072", "gelu", 128, 3072),            # BERT-base's FFN activation
]
