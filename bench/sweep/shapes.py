"""The sweep's shapes: one ONNX model of a single MatMul or Conv each (float32, batch 1, the
weights constant initializers), with the arguments of tuned_onednn_op for the same op.

Built with the test models' Builder (tests/models/make_models.py), so opset, IR version and
weight initialisation are theirs.
"""
import os
import sys
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
]
