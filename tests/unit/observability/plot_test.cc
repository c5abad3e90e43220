#include "observability/plot/plot.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "tests/support/text_count.h"

namespace tuned::observability {
namespace {

using ::testing::HasSubstr;

TuningCurve Curve(const std::string& task, int trials) {
  TuningCurve curve;
  curve.task_id = task;
  curve.workload_key = "matmul(M=64,N=64,K=64,dtype=float32)";
  curve.target = "llvm -mcpu=znver3";
  double best = 0;
  for (int i = 1; i <= trials; ++i) {
    CurvePoint point;
    point.trial = i;
    point.seconds = 0.5 * i;
    point.status = i % 5 == 0 ? v1::MEASURE_STATUS_COMPILE_ERROR : v1::MEASURE_STATUS_OK;
    point.gflops = point.status == v1::MEASURE_STATUS_OK ? 3.0 + (i * 7 % 11) : 0;
    best = std::max(best, point.gflops);
    point.best_gflops = best;
    curve.points.push_back(point);
  }
  curve.best_gflops = best;  // no re-measures: the task's best is its trials' best
  return curve;
}

using tuned::testing::CountMatches;

TEST(Plot, SvgHasOnePathPerCurveAxisLabelsAndADotPerTrial) {
  PlotOptions options;
  const auto svg = PlotSvg({Curve("task-one-1234", 20), Curve("task-two-5678", 12)}, options);
  ASSERT_TRUE(svg.ok()) << svg.status().message();
  EXPECT_EQ(CountMatches(*svg, "<path "), 2);
  EXPECT_EQ(CountMatches(*svg, "<circle class=\"trial\""), 32);
  EXPECT_EQ(CountMatches(*svg, "data-status=\"COMPILE_ERROR\""), 4 + 2);
  EXPECT_THAT(*svg, HasSubstr(">trials measured</text>"));
  EXPECT_THAT(*svg, HasSubstr(">best so far (GFLOP/s)</text>"));
  EXPECT_THAT(*svg, HasSubstr("task task-one (best 13.0 GFLOP/s)"));
  EXPECT_THAT(*svg, HasSubstr("width=\"900\" height=\"540\""));
  options.x_axis = PlotAxis::kSeconds;
  const auto by_time = PlotSvg({Curve("t", 4)}, options);
  ASSERT_TRUE(by_time.ok());
  EXPECT_THAT(*by_time, HasSubstr("time since the first trial (s)"));
}

TEST(Plot, RefusesNothingToPlotAndAbsurdSizes) {
  EXPECT_EQ(PlotSvg({}, {}).status().code(), StatusCode::kInvalidArgument);
  PlotOptions tiny;
  tiny.width = 10;
  const auto refused = PlotSvg({Curve("t", 3)}, tiny);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("outside [200, 8000]"));
}

// Width and height from a PNG's IHDR chunk (big-endian, bytes 16..23).
std::pair<uint32_t, uint32_t> PngSize(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char header[24] = {};
  in.read(reinterpret_cast<char*>(header), sizeof(header));
  auto word = [&](int at) {
    return uint32_t(header[at]) << 24 | uint32_t(header[at + 1]) << 16 |
           uint32_t(header[at + 2]) << 8 | header[at + 3];
  };
  if (std::string(reinterpret_cast<char*>(header + 1), 3) != "PNG") return {0, 0};
  return {word(16), word(20)};
}

TEST(Plot, PngHasTheRequestedSize) {
  if (!PngSupported()) GTEST_SKIP() << "this build has no cairo (libcairo2-dev): PNG is refused";
  PlotOptions options;
  options.width = 640;
  options.height = 360;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("tuned_plot_test_" + std::to_string(getpid()) + ".png")).string();
  ASSERT_TRUE(PlotPng({Curve("t", 30)}, options, path).ok());
  EXPECT_EQ(PngSize(path), std::make_pair(640u, 360u));
  EXPECT_GT(std::filesystem::file_size(path), 2000u);  // drawn, not blank
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tuned::observability
