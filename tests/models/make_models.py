#!/usr/bin/env python3
"""Writes the test models: real architectures with random weights, built with the `onnx` package.

    make_models.py OUT_DIR

resnet18.onnx     ResNet-18 (torchvision's layout), input 1x3x224x224
mobilenetv2.onnx  a MobileNetV2 stem, six inverted-residual blocks, head; input 1x3x224x224
bert.onnx         a 2-layer BERT-base encoder (hidden 768, 12 heads, FFN 3072, GELU by Erf),
                  input 1x128x768 (sequence 128)
dynamic.onnx      relu(x @ w) with x of shape Nx8, N left open (`--input-shape x=...` sets it)
tiny_cnn.onnx     a residual CNN small enough to tune whole in the test suite, input 1x3x16x16
constants.onnx    x + sqrt(c) / 2 with c a constant: the constant chain is folded at import

Node order follows each model's forward pass, as an exporter writes it. Weights are seeded, so
the files are the same on every run.
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, base):
        self.count += 1
        return f"{base}_{self.count}"

    def const(self, base, array):
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def weight(self, base, shape, fan_in):
        return self.const(base, (self.rng.standard_normal(shape) * math.sqrt(2.0 / fan_in)).astype(np.float32))

    def node(self, op, inputs, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def conv(self, x, cin, cout, k, stride=1, groups=1):
        w = self.weight("w", (cout, cin // groups, k, k), cin // groups * k * k)
        return self.node("Conv", [x, w], kernel_shape=[k, k], strides=[stride, stride],
                         pads=[k // 2] * 4, group=groups)

    def bn(self, x, c):
        r = self.rng
        gamma = (1 + 0.1 * r.standard_normal(c)).astype(np.float32)
        beta = (0.1 * r.standard_normal(c)).astype(np.float32)
        mean = (0.1 * r.standard_normal(c)).astype(np.float32)
        var = (1 + 0.1 * r.random(c)).astype(np.float32)
        ins = [x] + [self.const(n, v) for n, v in (("gamma", gamma), ("beta", beta), ("mean", mean), ("var", var))]
        return self.node("BatchNormalization", ins, epsilon=1e-5)

    def linear(self, x, k, n, bias=True):
        y = self.node("MatMul", [x, self.weight("w", (k, n), k)])
        return self.node("Add", [y, self.const("b", (0.02 * self.rng.standard_normal(n)).astype(np.float32))]) if bias else y

    def model(self, name, inputs, output, out_shape):
        graph = helper.make_graph(
            self.nodes, name,
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
            [helper.make_tensor_value_info(output, TensorProto.FLOAT, out_shape)], self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


def head(b, x, c, classes):
    x = b.node("GlobalAveragePool", [x])
    x = b.node("Flatten", [x], axis=1)
    fc = b.weight("fc", (classes, c), c)
    return b.node("Gemm", [x, fc, b.const("fc_b", np.zeros(classes, np.float32))], transB=1)


def resnet18():
    b = Builder(18)
    x = b.node("Relu", [b.bn(b.conv("input", 3, 64, 7, stride=2), 64)])
    x = b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, cout in enumerate((64, 128, 256, 512)):
        for block in range(2):
            stride = 2 if stage > 0 and block == 0 else 1
            y = b.node("Relu", [b.bn(b.conv(x, cin, cout, 3, stride), cout)])
            y = b.bn(b.conv(y, cout, cout, 3), cout)
            identity = x if stride == 1 and cin == cout else b.bn(b.conv(x, cin, cout, 1, stride), cout)
            x = b.node("Relu", [b.node("Add", [y, identity])])
            cin = cout
    return b.model("resnet18", [("input", [1, 3, 224, 224])], head(b, x, 512, 1000), [1, 1000])


def mobilenetv2():
    b = Builder(2)
    six = (b.const("zero", np.array(0, np.float32)), b.const("six", np.array(6, np.float32)))
    relu6 = lambda v: b.node("Clip", [v, *six])
    x = relu6(b.bn(b.conv("input", 3, 32, 3, stride=2), 32))
    cin = 32
    for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2)):
        for i in range(n):
            stride, hidden = (s if i == 0 else 1), cin * t
            y = x if t == 1 else relu6(b.bn(b.conv(x, cin, hidden, 1), hidden))
            y = relu6(b.bn(b.conv(y, hidden, hidden, 3, stride, groups=hidden), hidden))
            y = b.bn(b.conv(y, hidden, c, 1), c)
            x = b.node("Add", [x, y]) if stride == 1 and cin == c else y
            cin = c
    x = relu6(b.bn(b.conv(x, cin, 1280, 1), 1280))
    return b.model("mobilenetv2", [("input", [1, 3, 224, 224])], head(b, x, 1280, 1000), [1, 1000])


def bert(layers=2, seq=128, hidden=768, heads=12, ffn=3072):
    b = Builder(7)
    d = hidden // heads
    split = b.const("split", np.array([1, seq, heads, d], np.int64))
    merge = b.const("merge", np.array([1, seq, hidden], np.int64))
    x = "hidden"
    for _ in range(layers):
        def heads_of(perm):
            return b.node("Transpose", [b.node("Reshape", [b.linear(x, hidden, hidden), split])], perm=perm)
        q, k, v = heads_of([0, 2, 1, 3]), heads_of([0, 2, 3, 1]), heads_of([0, 2, 1, 3])
        scores = b.node("Div", [b.node("MatMul", [q, k]), b.const("scale", np.array(math.sqrt(d), np.float32))])
        ctx = b.node("MatMul", [b.node("Softmax", [scores], axis=-1), v])
        ctx = b.node("Reshape", [b.node("Transpose", [ctx], perm=[0, 2, 1, 3]), merge])

        def norm(v):
            gamma = b.const("ln_g", (1 + 0.1 * b.rng.standard_normal(hidden)).astype(np.float32))
            beta = b.const("ln_b", (0.1 * b.rng.standard_normal(hidden)).astype(np.float32))
            return b.node("LayerNormalization", [v, gamma, beta], axis=-1, epsilon=1e-12)
        h = norm(b.node("Add", [b.linear(ctx, hidden, hidden), x]))
        f = b.linear(h, hidden, ffn)
        erf = b.node("Erf", [b.node("Div", [f, b.const("sqrt2", np.array(math.sqrt(2), np.float32))])])
        gelu = b.node("Mul", [b.node("Mul", [f, b.node("Add", [erf, b.const("one", np.array(1, np.float32))])]),
                              b.const("half", np.array(0.5, np.float32))])
        x = norm(b.node("Add", [b.linear(gelu, ffn, hidden), h]))
    return b.model("bert", [("hidden", [1, seq, hidden])], x, [1, seq, hidden])


def dynamic():
    b = Builder(1)
    y = b.node("Relu", [b.node("MatMul", ["x", b.weight("w", (8, 4), 8)])])
    return b.model("dynamic", [("x", ["N", 8])], y, ["N", 4])


def tiny_cnn():
    b = Builder(3)
    x = b.node("Relu", [b.bn(b.conv("input", 3, 8, 3), 8)])
    x = b.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    y = b.bn(b.conv(x, 8, 8, 3), 8)
    x = b.node("Relu", [b.node("Add", [y, x])])
    return b.model("tiny_cnn", [("input", [1, 3, 16, 16])], head(b, x, 8, 10), [1, 10])


def constants():
    b = Builder(4)
    c = b.node("Div", [b.node("Sqrt", [b.const("c", np.array([1, 4, 9, 16], np.float32))]),
                       b.const("two", np.array(2, np.float32))])
    return b.model("constants", [("x", [2, 4])], b.node("Add", ["x", c]), [2, 4])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, make in (("resnet18", resnet18), ("mobilenetv2", mobilenetv2), ("bert", bert), ("dynamic", dynamic), ("tiny_cnn", tiny_cnn),
                       ("constants", constants)):
        onnx.save(make(), os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
