// The importer's errors (one line naming what is wrong) and ONNX's own converted PyTorch cases
// (Debian's libonnx-testdata) run through the model's kernels against their shipped outputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "compiler/ir/evaluator.h"
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

TEST(OnnxImport, MissingAndBrokenFilesAreOneLineErrors) {
  EXPECT_EQ(ImportOnnx("/nonexistent/model.onnx").status().code(), StatusCode::kNotFound);
  fs::path garbage = fs::path(::testing::TempDir()) / "garbage.onnx";
  std::ofstream(garbage) << "\x0a\xff\xff\xff not a protobuf";
  ExpectOneLineError(ImportOnnx(garbage.string()).status(), "not an ONNX model");
}

// ---- ONNX's converted PyTorch cases ----

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

class PytorchConverted : public ::testing::TestWithParam<const char*> {};

TEST_P(PytorchConverted, KernelsGiveTheShippedOutputs) {
  fs::path dir = fs::path(TUNED_ONNX_TESTDATA) / "pytorch-converted" / GetParam();
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
    Cases, PytorchConverted,
    ::testing::Values("test_Conv1d", "test_Conv1d_dilated", "test_Conv1d_groups", "test_Conv1d_pad1",
                      "test_Conv1d_pad1size1", "test_Conv1d_pad2", "test_Conv1d_pad2size1", "test_Conv1d_stride",
                      "test_Conv2d", "test_Conv2d_depthwise", "test_Conv2d_depthwise_padded",
                      "test_Conv2d_depthwise_strided", "test_Conv2d_depthwise_with_multiplier",
                      "test_Conv2d_dilated", "test_Conv2d_groups", "test_Conv2d_groups_thnn", "test_Conv2d_no_bias",
                      "test_Conv2d_padding", "test_Conv2d_strided", "test_Conv3d", "test_Conv3d_dilated",
                      "test_Conv3d_dilated_strided", "test_Conv3d_groups", "test_Conv3d_no_bias", "test_Conv3d_stride",
                      "test_Conv3d_stride_padding", "test_Linear", "test_Linear_no_bias", "test_AvgPool1d",
                      "test_AvgPool1d_stride", "test_AvgPool2d", "test_AvgPool2d_stride", "test_AvgPool3d",
                      "test_AvgPool3d_stride", "test_AvgPool3d_stride1_pad0_gpu_input", "test_MaxPool1d",
                      "test_MaxPool1d_stride", "test_MaxPool1d_stride_padding_dilation", "test_MaxPool2d",
                      "test_MaxPool2d_stride_padding_dilation", "test_MaxPool3d", "test_MaxPool3d_stride",
                      "test_MaxPool3d_stride_padding", "test_BatchNorm1d_3d_input_eval", "test_BatchNorm2d_eval",
                      "test_BatchNorm2d_momentum_eval", "test_BatchNorm3d_eval", "test_BatchNorm3d_momentum_eval",
                      "test_ReLU", "test_Sigmoid", "test_Tanh", "test_ELU", "test_LeakyReLU",
                      "test_LeakyReLU_with_negval", "test_PReLU_1d", "test_PReLU_1d_multiparam", "test_PReLU_2d",
                      "test_PReLU_2d_multiparam", "test_PReLU_3d", "test_PReLU_3d_multiparam", "test_SELU",
                      "test_Softsign", "test_Softplus", "test_Softmax", "test_LogSoftmax",
                      "test_log_softmax_dim3", "test_log_softmax_lastdim", "test_softmax_functional_dim3",
                      "test_softmax_lastdim", "test_Softmin"),
    [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param).substr(5); });

}  // namespace
}  // namespace tuned::model
