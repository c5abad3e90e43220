// The importer's errors (one line naming what is wrong) and ONNX's own test cases (Debian's
// libonnx-testdata: converted PyTorch modules, and ConvTranspose's node cases) run through the
// model's kernels against their shipped outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "compiler/ir/evaluator.h"
#include "compiler/runtime/parallel.h"
#include "model/model_runner.h"
#include "model/onnx_import.h"

namespace tuned::model {
namespace {

namespace fs = std::filesystem;

std::string TestModel(const std::string& name) { return std::string(TUNED_TEST_MODELS_DIR) + "/" + name; }

#define SKIP_WITHOUT_TEST_MODELS()                                                                 \
  if (std::string(TUNED_TEST_MODELS_DIR).empty()) {                                                \
    GTEST_SKIP() << "no python3 with the onnx package at configure time: test models not written"; \
  }

void ExpectOneLineError(const Status& status, const std::string& part) {
  EXPECT_FALSE(status.ok());
  std::string message(status.message());
  EXPECT_NE(message.find(part), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(OnnxImport, OpenDimensionNamesTheInputAndTheFlag) {
  SKIP_WITHOUT_TEST_MODELS();
  ExpectOneLineError(ImportOnnx(TestModel("dynamic.onnx")).status(),
                     "input 'x' leaves dimension 0 ('N') open; give it with --input-shape x=...");
}

TEST(OnnxImport, InputShapeFixesTheOpenDimension) {
  SKIP_WITHOUT_TEST_MODELS();
  ImportOptions options;
  options.input_shapes.push_back({"x", {16, 8}});
  StatusOr<Graph> graph = ImportOnnx(TestModel("dynamic.onnx"), options);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  EXPECT_EQ(graph->tensor(graph->outputs[0]).shape, (std::vector<int64_t>{16, 4}));
  StatusOr<ModelTasks> tasks = ExtractTasks(*graph);
  ASSERT_TRUE(tasks.ok()) << tasks.status().message();
  ASSERT_EQ(tasks->tasks.size(), 1u);
  EXPECT_EQ(tasks->tasks[0].ops, "MatMul+Relu");
  EXPECT_EQ(tasks->tasks[0].workload->flops(), 16.0 * 4 * 8 * 2 + 16 * 4);
}

TEST(OnnxImport, BadInputShapesAreOneLineErrors) {
  SKIP_WITHOUT_TEST_MODELS();
  ImportOptions wrong_name;
  wrong_name.input_shapes.push_back({"y", {16, 8}});
  ExpectOneLineError(ImportOnnx(TestModel("dynamic.onnx"), wrong_name).status(),
                     "--input-shape names 'y', which is not an input of the model; its inputs: x");
  ImportOptions wrong_rank;
  wrong_rank.input_shapes.push_back({"x", {16}});
  ExpectOneLineError(ImportOnnx(TestModel("dynamic.onnx"), wrong_rank).status(), "has rank 1; the model's input has rank 2");
  ImportOptions mismatch;
  mismatch.input_shapes.push_back({"x", {16, 9}});
  ExpectOneLineError(ImportOnnx(TestModel("dynamic.onnx"), mismatch).status(), "shape inference failed");
  for (const char* text : {"x", "x=", "=4", "x=4x0", "x=4xy", "x=4x", "x=99999999999999999"}) {
    ExpectOneLineError(ParseInputShape(text).status(), "expected NAME=D1xD2x...");
  }
  StatusOr<std::pair<std::string, std::vector<int64_t>>> ok = ParseInputShape("x=1x3x224x224");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->second, (std::vector<int64_t>{1, 3, 224, 224}));
}

TEST(OnnxImport, NodesOfConstantsAreEvaluatedAtImport) {
  SKIP_WITHOUT_TEST_MODELS();
  StatusOr<Graph> graph = ImportOnnx(TestModel("constants.onnx"));
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  ASSERT_EQ(graph->nodes.size(), 1u);  // Sqrt and Div of constants are gone
  EXPECT_EQ(graph->nodes[0].op, "Add");
  const Tensor& folded = graph->tensor(graph->nodes[0].inputs[1]);
  EXPECT_TRUE(folded.is_constant);
  EXPECT_EQ(folded.values, (std::vector<double>{0.5, 1, 1.5, 2}));
  EXPECT_NE(folded.derived_from.find("of constants"), std::string::npos) << folded.derived_from;
  StatusOr<ModelTasks> tasks = ExtractTasks(*graph);
  ASSERT_TRUE(tasks.ok()) << tasks.status().message();
  StatusOr<TensorValues> out = RunModel(*graph, *tasks, {{"x", {1, 1, 1, 1, 0, 0, 0, 0}}});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(out->at(graph->outputs[0]), (std::vector<double>{1.5, 2, 2.5, 3, 0.5, 1, 1.5, 2}));
}

TEST(OnnxImport, MissingAndBrokenFilesAreOneLineErrors) {
  EXPECT_EQ(ImportOnnx("/nonexistent/model.onnx").status().code(), StatusCode::kNotFound);
  fs::path garbage = fs::path(::testing::TempDir()) / "garbage.onnx";
  std::ofstream(garbage) << "\x0a\xff\xff\xff not a protobuf";
  ExpectOneLineError(ImportOnnx(garbage.string()).status(), "not an ONNX model");
}

// ---- ONNX's test data: converted PyTorch cases and node cases ----

struct TestCase {
  Graph graph;
  ModelTasks tasks;
  TensorValues inputs, expected;
};

TestCase LoadCase(const fs::path& dir) {
  TestCase c;
  StatusOr<Graph> graph = ImportOnnx((dir / "model.onnx").string());
  EXPECT_TRUE(graph.ok()) << graph.status().message();
  if (!graph.ok()) return c;
  c.graph = std::move(*graph);
  StatusOr<ModelTasks> tasks = ExtractTasks(c.graph);
  EXPECT_TRUE(tasks.ok()) << tasks.status().message();
  if (tasks.ok()) c.tasks = std::move(*tasks);
  fs::path data = dir / "test_data_set_0";
  for (size_t i = 0; i < c.graph.inputs.size(); ++i) {
    StatusOr<Tensor> t = ReadTensorFile((data / ("input_" + std::to_string(i) + ".pb")).string());
    EXPECT_TRUE(t.ok()) << t.status().message();
    if (t.ok()) c.inputs[c.graph.inputs[i]] = t->values;
  }
  for (size_t i = 0; i < c.graph.outputs.size(); ++i) {
    StatusOr<Tensor> t = ReadTensorFile((data / ("output_" + std::to_string(i) + ".pb")).string());
    EXPECT_TRUE(t.ok()) << t.status().message();
    if (t.ok()) c.expected[c.graph.outputs[i]] = t->values;
  }
  return c;
}

class OnnxTestData : public ::testing::TestWithParam<const char*> {};

TEST_P(OnnxTestData, KernelsGiveTheShippedOutputs) {
  fs::path dir = fs::path(TUNED_ONNX_TESTDATA) / GetParam();
  if (!fs::exists(dir)) GTEST_SKIP() << dir << " is missing (Debian's libonnx-testdata)";
  TestCase c = LoadCase(dir);
  ASSERT_FALSE(HasFailure());
  EXPECT_GE(c.tasks.kernels.size(), 1u);  // every case here is tuned work, not only layout
  StatusOr<TensorValues> outputs = RunModel(c.graph, c.tasks, c.inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status().message();
  for (const auto& [name, expected] : c.expected) {
    ASSERT_EQ(outputs->at(name).size(), expected.size()) << name;
    EXPECT_LE(ir::MaxRelativeError(outputs->at(name), expected), 1e-4) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, OnnxTestData,
    ::testing::Values("pytorch-converted/test_Conv1d", "pytorch-converted/test_Conv1d_dilated",
                      "pytorch-converted/test_Conv1d_groups", "pytorch-converted/test_Conv1d_pad1",
                      "pytorch-converted/test_Conv1d_pad1size1", "pytorch-converted/test_Conv1d_pad2",
                      "pytorch-converted/test_Conv1d_pad2size1", "pytorch-converted/test_Conv1d_stride",
                      "pytorch-converted/test_Conv2d", "pytorch-converted/test_Conv2d_depthwise",
                      "pytorch-converted/test_Conv2d_depthwise_padded",
                      "pytorch-converted/test_Conv2d_depthwise_strided",
                      "pytorch-converted/test_Conv2d_depthwise_with_multiplier",
                      "pytorch-converted/test_Conv2d_dilated", "pytorch-converted/test_Conv2d_groups",
                      "pytorch-converted/test_Conv2d_groups_thnn", "pytorch-converted/test_Conv2d_no_bias",
                      "pytorch-converted/test_Conv2d_padding", "pytorch-converted/test_Conv2d_strided",
                      "pytorch-converted/test_Conv3d", "pytorch-converted/test_Conv3d_dilated",
                      "pytorch-converted/test_Conv3d_dilated_strided",
                      "pytorch-converted/test_Conv3d_groups", "pytorch-converted/test_Conv3d_no_bias",
                      "pytorch-converted/test_Conv3d_stride", "pytorch-converted/test_Conv3d_stride_padding",
                      "pytorch-converted/test_ConvTranspose2d", "pytorch-converted/test_ConvTranspose2d_no_bias",
                      "pytorch-converted/test_Linear", "pytorch-converted/test_Linear_no_bias",
                      "pytorch-converted/test_AvgPool1d", "pytorch-converted/test_AvgPool1d_stride",
                      "pytorch-converted/test_AvgPool2d", "pytorch-converted/test_AvgPool2d_stride",
                      "pytorch-converted/test_AvgPool3d", "pytorch-converted/test_AvgPool3d_stride",
                      "pytorch-converted/test_AvgPool3d_stride1_pad0_gpu_input",
                      "pytorch-converted/test_MaxPool1d", "pytorch-converted/test_MaxPool1d_stride",
                      "pytorch-converted/test_MaxPool1d_stride_padding_dilation",
                      "pytorch-converted/test_MaxPool2d",
                      "pytorch-converted/test_MaxPool2d_stride_padding_dilation",
                      "pytorch-converted/test_MaxPool3d", "pytorch-converted/test_MaxPool3d_stride",
                      "pytorch-converted/test_MaxPool3d_stride_padding",
                      "pytorch-converted/test_BatchNorm1d_3d_input_eval",
                      "pytorch-converted/test_BatchNorm2d_eval",
                      "pytorch-converted/test_BatchNorm2d_momentum_eval",
                      "pytorch-converted/test_BatchNorm3d_eval",
                      "pytorch-converted/test_BatchNorm3d_momentum_eval", "pytorch-converted/test_ReLU",
                      "pytorch-converted/test_Sigmoid", "pytorch-converted/test_Tanh",
                      "pytorch-converted/test_ELU", "pytorch-converted/test_LeakyReLU",
                      "pytorch-converted/test_LeakyReLU_with_negval", "pytorch-converted/test_PReLU_1d",
                      "pytorch-converted/test_PReLU_1d_multiparam", "pytorch-converted/test_PReLU_2d",
                      "pytorch-converted/test_PReLU_2d_multiparam", "pytorch-converted/test_PReLU_3d",
                      "pytorch-converted/test_PReLU_3d_multiparam", "pytorch-converted/test_SELU",
                      "pytorch-converted/test_Softsign", "pytorch-converted/test_Softplus",
                      "pytorch-converted/test_Softmax", "pytorch-converted/test_LogSoftmax",
                      "pytorch-converted/test_log_softmax_dim3",
                      "pytorch-converted/test_log_softmax_lastdim",
                      "pytorch-converted/test_softmax_functional_dim3",
                      "pytorch-converted/test_softmax_lastdim", "pytorch-converted/test_Softmin",
                      "node/test_convtranspose", "node/test_convtranspose_1d", "node/test_convtranspose_3d",
                      "node/test_convtranspose_autopad_same", "node/test_convtranspose_dilations",
                      "node/test_convtranspose_kernel_shape", "node/test_convtranspose_output_shape",
                      "node/test_convtranspose_pad", "node/test_convtranspose_pads"),
    [](const ::testing::TestParamInfo<const char*>& info) {
      std::string name = info.param;
      name = name.substr(name.find("/test_") + 6);
      return (std::string(info.param).rfind("node/", 0) == 0 ? "node_" : "") + name;
    });

// The float32 run compiled kernels use: every tensor a kernel gets is aligned as generated code
// assumes, and the model computes what the float64 run computes, up to float32 rounding.
TEST(ModelRunner, Float32RunGivesKernelsAlignedTensorsAndTheFloat64Outputs) {
  SKIP_WITHOUT_TEST_MODELS();
  StatusOr<Graph> graph = ImportOnnx(TestModel("tiny_cnn.onnx"));
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  StatusOr<ModelTasks> tasks = ExtractTasks(*graph);
  ASSERT_TRUE(tasks.ok()) << tasks.status().message();
  ASSERT_FALSE(tasks->partition.outside.empty());  // Flatten runs outside the kernels
  TensorValues inputs;
  const std::string& x = graph->inputs.at(0);
  for (int64_t i = 0; i < graph->tensor(x).elements(); ++i) inputs[x].push_back(double(float(std::sin(0.37 * i))));

  StatusOr<TensorValues> reference = RunModel(*graph, *tasks, inputs);
  ASSERT_TRUE(reference.ok()) << reference.status().message();
  int calls = 0, misaligned = 0;
  KernelExecutorOf<Float32Values> executor = [&](const KernelDefinition& kernel,
                                                 const std::vector<const Float32Values*>& args)
      -> StatusOr<Float32Values> {
    ++calls;
    std::vector<std::vector<double>> doubles;
    std::vector<const std::vector<double>*> pointers;
    for (const Float32Values* a : args) {
      misaligned += reinterpret_cast<uintptr_t>(a->data()) % runtime::kBufferAlignment != 0;
      doubles.emplace_back(a->begin(), a->end());
    }
    for (const auto& d : doubles) pointers.push_back(&d);
    TUNED_ASSIGN_OR_RETURN(std::vector<double> out, ReferenceExecutor()(kernel, pointers));
    return Float32Values(out.begin(), out.end());
  };
  StatusOr<Float32Tensors> run = RunModel(*graph, *tasks, ConstantsOf<Float32Values>(*graph),
                                          Converted<Float32Values>(inputs), executor);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(calls, int(tasks->kernels.size()));
  EXPECT_EQ(misaligned, 0);
  TensorValues outputs = Converted<std::vector<double>>(*run);
  for (const auto& [name, expected] : *reference) {
    ASSERT_EQ(outputs.at(name).size(), expected.size()) << name;
    EXPECT_LE(ir::MaxRelativeError(outputs.at(name), expected), ir::ToleranceFor(ir::DataType::Float32())) << name;
    EXPECT_TRUE(std::any_of(expected.begin(), expected.end(), [](double v) { return v != 0; })) << name;
  }
}

}  // namespace
}  // namespace tuned::model
