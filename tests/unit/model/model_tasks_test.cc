// Task extraction from real architectures (tests/models/make_models.py writes them at build
// time): the task table is checked against what each architecture is, counted here by hand.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <set>
#include <string>
#include <tuple>

#include "model/onnx_import.h"
#include "model/tasks.h"

namespace tuned::model {
namespace {

struct Loaded {
  Graph graph;
  ModelTasks tasks;
};

// Skips (saying why) when the build found no Python with the onnx package to write the models.
#define LOAD_OR_SKIP(var, name)                                                                  \
  if (std::string(TUNED_TEST_MODELS_DIR).empty()) {                                              \
    GTEST_SKIP() << "no python3 with the onnx package at configure time: test models not written"; \
  }                                                                                              \
  Loaded var = Load(name)

Loaded Load(const std::string& name) {
  StatusOr<Graph> graph = ImportOnnx(std::string(TUNED_TEST_MODELS_DIR) + "/" + name);
  EXPECT_TRUE(graph.ok()) << graph.status().message();
  if (!graph.ok()) std::abort();
  StatusOr<ModelTasks> tasks = ExtractTasks(*graph);
  EXPECT_TRUE(tasks.ok()) << tasks.status().message();
  if (!tasks.ok()) std::abort();
  return Loaded{std::move(*graph), std::move(*tasks)};
}

const Node& Anchor(const Loaded& m, int kernel) { return m.graph.nodes[m.tasks.partition.kernels[kernel].nodes[0]]; }

// (input shape, weight shape, strides, group) of a Conv node.
using ConvShape = std::tuple<std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>, int64_t>;
ConvShape ConvOf(const Loaded& m, const Node& conv) {
  return {m.graph.tensor(conv.inputs[0]).shape, m.graph.tensor(conv.inputs[1]).shape,
          conv.Ints("strides", {1, 1}), conv.Int("group", 1)};
}

std::map<std::string, int> WeightsByOps(const ModelTasks& tasks) {
  std::map<std::string, int> weights;
  for (const Task& t : tasks.tasks) weights[t.ops] += t.weight;
  return weights;
}

TEST(ModelTasks, ResNet18) {
  LOAD_OR_SKIP(m, "resnet18.onnx");
  // Stem, max pool, 4 kernels in stage 1, 5 in each later stage (its first block's 3×3 convs and
  // downsample, its second block's two convs), global pool, classifier. The downsample conv
  // comes after the block's second conv in the forward pass, so it takes the residual add.
  EXPECT_EQ(m.tasks.kernels.size(), 23u);
  EXPECT_EQ(m.tasks.tasks.size(), 21u);  // stage 1's two blocks are the same two kernels
  ASSERT_EQ(m.tasks.partition.outside.size(), 1u);
  EXPECT_EQ(m.graph.nodes[m.tasks.partition.outside[0].node].op, "Flatten");

  std::map<std::string, int> weights = WeightsByOps(m.tasks);
  EXPECT_EQ(weights["Conv+BatchNormalization+Relu"], 1 + 8);  // stem, every block's first conv
  // Stage 1's second convs; later stages' downsample and second block's second conv.
  EXPECT_EQ(weights["Conv+BatchNormalization+Add+Relu"], 2 + 2 * 3);
  EXPECT_EQ(weights["Conv+BatchNormalization"], 3);  // later stages' first block second conv
  EXPECT_EQ(weights["MaxPool"], 1);
  EXPECT_EQ(weights["GlobalAveragePool"], 1);
  EXPECT_EQ(weights["Gemm"], 1);

  // Distinct convolutions: stem; 3×3 64 at 56²; per later stage a strided 3×3, a 3×3 and a 1×1
  // downsample.
  std::set<ConvShape> distinct;
  double conv_macs = 0, conv_flops = 0;
  int convs = 0;
  for (size_t k = 0; k < m.tasks.kernels.size(); ++k) {
    const Node& anchor = Anchor(m, int(k));
    if (anchor.op != "Conv") continue;
    ++convs;
    distinct.insert(ConvOf(m, anchor));
    const auto& w = m.graph.tensor(anchor.inputs[1]).shape;
    const auto& out = m.graph.tensor(anchor.outputs[0]).shape;
    conv_macs += double(out[1] * out[2] * out[3]) * double(w[1] * w[2] * w[3]);
    conv_flops += m.tasks.kernels[k].workload->flops();
  }
  EXPECT_EQ(convs, 20);
  EXPECT_EQ(distinct.size(), 11u);
  EXPECT_EQ(conv_macs, 1813561344.0);  // ResNet-18's convolutions: 1.81 GMACs
  // A kernel's FLOPs count its multiply-adds and its epilogue.
  EXPECT_GE(conv_flops, 2 * conv_macs);
  EXPECT_LE(conv_flops, 2.02 * conv_macs);
}

TEST(ModelTasks, MobileNetV2Blocks) {
  LOAD_OR_SKIP(m, "mobilenetv2.onnx");
  // Stem; block (t=1): depthwise, project; 5 blocks of expand, depthwise, project; the last
  // 1×1 conv; pool; classifier.
  EXPECT_EQ(m.tasks.kernels.size(), 1u + 2 + 5 * 3 + 1 + 2);
  int depthwise = 0;
  std::set<ConvShape> distinct_depthwise;
  for (size_t k = 0; k < m.tasks.kernels.size(); ++k) {
    const Node& anchor = Anchor(m, int(k));
    if (anchor.op != "Conv" || anchor.Int("group", 1) == 1) continue;
    ++depthwise;
    distinct_depthwise.insert(ConvOf(m, anchor));
    EXPECT_EQ(m.tasks.kernels[k].ops, "Conv+BatchNormalization+Clip");
  }
  EXPECT_EQ(depthwise, 6);
  // 32 channels at 112²; 96 at 112² stride 2; 144 at 56²; 144 at 56² stride 2; 192 at 28² (twice).
  EXPECT_EQ(distinct_depthwise.size(), 5u);
  std::map<std::string, int> weights = WeightsByOps(m.tasks);
  EXPECT_EQ(weights["Conv+BatchNormalization+Add"], 3);  // the stride-1 blocks with equal channels
  // The last stage's second and third blocks are one set of three tasks of weight 2; and the
  // 24-channel stage's second block and the next stage's first block both expand 24 → 144
  // channels at 56².
  int weight_two = 0;
  for (const Task& t : m.tasks.tasks) weight_two += t.weight == 2;
  EXPECT_EQ(weight_two, 4);
  EXPECT_EQ(m.tasks.tasks.size(), m.tasks.kernels.size() - 4);
}

// A pointwise convolution (1x1, stride 1, one group) is computed over its image as one flat
// axis, and its epilogue reads it at its own axes (so the schedule can fuse the two); every other
// convolution keeps its spatial axes.
TEST(ModelTasks, PointwiseConvolutionsComputeTheirImageAsOneAxis) {
  LOAD_OR_SKIP(m, "mobilenetv2.onnx");
  const std::regex stage_line(R"(^(\w+)\[(\w+): \d+, (\w+): \d+, (\w+): (\d+)(, \w+: \d+)?\](.*)$)");
  int pointwise = 0;
  for (size_t k = 0; k < m.tasks.kernels.size(); ++k) {
    const Node& anchor = Anchor(m, int(k));
    if (anchor.op != "Conv") continue;
    const auto& w = m.graph.tensor(anchor.inputs[1]).shape;
    const auto& out = m.graph.tensor(anchor.outputs[0]).shape;
    bool is_pointwise = anchor.Int("group", 1) == 1 && w[2] == 1 && w[3] == 1 &&
                        anchor.Ints("strides", {1, 1}) == std::vector<int64_t>{1, 1};
    pointwise += is_pointwise;
    const KernelDefinition& def = m.tasks.kernels[k];
    std::istringstream lines(def.text);
    std::vector<std::string> kept;
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("input ", 0) != 0) kept.push_back(line);
    }
    ASSERT_GE(kept.size(), 1u) << def.text;
    std::smatch conv, last;
    ASSERT_TRUE(std::regex_match(kept.front(), conv, stage_line)) << def.text;
    ASSERT_TRUE(std::regex_match(kept.back(), last, stage_line)) << def.text;
    // Rank 3 (N, F, H*W) for a pointwise convolution, else rank 4.
    EXPECT_EQ(conv[6].matched, !is_pointwise) << def.text;
    EXPECT_EQ(last[6].matched, !is_pointwise) << def.text;
    if (!is_pointwise) continue;
    EXPECT_EQ(std::stoll(conv[5].str()), out[2] * out[3]) << def.text;
    if (kept.size() > 1) {
      // The epilogue reads the convolution at its own three axes.
      std::string own = conv[1].str() + "[" + last[2].str() + ", " + last[3].str() + ", " + last[4].str() + "]";
      EXPECT_NE(last[7].str().find(own), std::string::npos) << def.text;
    }
  }
  // The first block's projection, then each of five blocks' expansion and projection, and the
  // last 1x1 convolution.
  EXPECT_EQ(pointwise, 1 + 5 * 2 + 1);
}

TEST(ModelTasks, BertEncoder) {
  LOAD_OR_SKIP(m, "bert.onnx");
  // Per layer: Q, K, V projections (one task), scores with the 1/√d scale, softmax, context,
  // output projection with the residual, layer norm (twice), FFN up with GELU, FFN down with
  // the residual; the head split and merge (Reshape, Transpose) stay outside.
  EXPECT_EQ(m.tasks.kernels.size(), 2u * 11);
  EXPECT_EQ(m.tasks.tasks.size(), 8u);
  EXPECT_EQ(m.tasks.partition.outside.size(), 2u * 8);
  for (const OutsideNode& o : m.tasks.partition.outside) {
    const std::string& op = m.graph.nodes[o.node].op;
    EXPECT_TRUE(op == "Reshape" || op == "Transpose") << op;
  }
  std::map<std::string, int> weights = WeightsByOps(m.tasks);
  EXPECT_EQ(weights["MatMul+Add"], 6);
  EXPECT_EQ(weights["MatMul+Div"], 2);
  EXPECT_EQ(weights["Softmax"], 2);
  EXPECT_EQ(weights["MatMul"], 2);
  EXPECT_EQ(weights["MatMul+Add+Add"], 4);  // output projection and FFN down, with the residual
  EXPECT_EQ(weights["LayerNormalization"], 4);
  EXPECT_EQ(weights["MatMul+Add+Div+Erf+Add+Mul+Mul"], 2);  // FFN up with its whole GELU
  // MatMul multiply-adds of one layer: 4 projections, scores and context, the FFN.
  const double layer_macs = 4.0 * 128 * 768 * 768 + 2.0 * 12 * 128 * 128 * 64 + 2.0 * 128 * 768 * 3072;
  double matmul_flops = 0;
  for (const Task& t : m.tasks.tasks) {
    if (t.ops.rfind("MatMul", 0) == 0) matmul_flops += t.weight * t.workload->flops();
  }
  EXPECT_GE(matmul_flops, 2 * 2 * layer_macs);
  EXPECT_LE(matmul_flops, 1.01 * 2 * 2 * layer_macs);
  EXPECT_GT(m.tasks.flops(), matmul_flops);
}

TEST(ModelTasks, KeysAreTheSameOnEveryImport) {
  LOAD_OR_SKIP(a, "resnet18.onnx");
  Loaded b = Load("resnet18.onnx");
  ASSERT_EQ(a.tasks.tasks.size(), b.tasks.tasks.size());
  for (size_t i = 0; i < a.tasks.tasks.size(); ++i) {
    EXPECT_EQ(a.tasks.tasks[i].workload->key(), b.tasks.tasks[i].workload->key());
  }
  // Keys never carry the model's tensor names (the generator's are `<op>_<number>`).
  for (const Task& t : a.tasks.tasks) {
    for (const auto& [name, tensor] : a.graph.tensors) {
      if (name.find('_') == std::string::npos) continue;
      EXPECT_EQ(t.workload->key().find(name), std::string::npos) << name;
    }
  }
}

}  // namespace
}  // namespace tuned::model
