// OpenCL C run for real on the device (PoCL on the CPU): a tiled matmul with __local staging
// and barriers against a float64 reference, an elementwise kernel, build errors, launches
// refused before they run, profiling-event timing.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "compiler/runtime/opencl/kernel.h"
#include "tests/unit/compiler/runtime/opencl/opencl_test_util.h"

namespace tuned::opencl {
namespace {

using ::testing::HasSubstr;

// C = A * B for n x n row-major matrices. Each work-group stages a TILE x TILE tile of A and B in
// local memory, either static arrays or (DYNAMIC_TILES) one __local argument of 2*TILE*TILE floats.
constexpr const char* kTiledMatmul = R"(
#ifdef DYNAMIC_TILES
__kernel void tiled_matmul(__global const float* a, __global const float* b, __global float* c,
                           int n, __local float* tiles) {
  __local float* a_tile = tiles;
  __local float* b_tile = tiles + TILE * TILE;
#else
__kernel void tiled_matmul(__global const float* a, __global const float* b, __global float* c, int n) {
  __local float a_tile[TILE * TILE];
  __local float b_tile[TILE * TILE];
#endif
  int tx = get_local_id(0), ty = get_local_id(1);
  int row = get_group_id(1) * TILE + ty, col = get_group_id(0) * TILE + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += TILE) {
    a_tile[ty * TILE + tx] = (row < n && k0 + tx < n) ? a[row * n + k0 + tx] : 0.0f;
    b_tile[ty * TILE + tx] = (k0 + ty < n && col < n) ? b[(k0 + ty) * n + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; ++k) acc += a_tile[ty * TILE + k] * b_tile[k * TILE + tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < n && col < n) c[row * n + col] = acc;
}
)";

constexpr const char* kAxpy = R"(
__kernel void axpy(__global const float* x, __global const float* y, __global float* out,
                   float alpha, int n) {
  int i = get_global_id(0);
  if (i < n) out[i] = alpha * x[i] + y[i];
}
)";

constexpr int kTile = 16;

std::vector<float> Random(size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& v : values) v = uniform(rng);
  return values;
}

Buffer MakeBuffer(const Device& device, const std::vector<float>& values) {
  StatusOr<Buffer> buffer = Buffer::Create(device, values.size() * sizeof(float));
  EXPECT_TRUE(buffer.ok()) << buffer.status().message();
  EXPECT_TRUE(buffer->Write(values.data(), values.size() * sizeof(float)).ok());
  return std::move(*buffer);
}

std::vector<float> ReadBack(const Buffer& buffer) {
  std::vector<float> values(buffer.bytes() / sizeof(float));
  Status read = buffer.Read(values.data(), buffer.bytes());
  EXPECT_TRUE(read.ok()) << read.message();
  return values;
}

std::unique_ptr<Kernel> BuildKernel(const Device& device, std::unique_ptr<Program>& program,
                                    const char* source, const char* name, const std::string& options) {
  StatusOr<std::unique_ptr<Program>> built = Program::Build(device, source, options);
  EXPECT_TRUE(built.ok()) << built.status().message();
  if (!built.ok()) return nullptr;
  program = std::move(*built);
  StatusOr<std::unique_ptr<Kernel>> kernel = Kernel::Create(*program, name);
  EXPECT_TRUE(kernel.ok()) << kernel.status().message();
  return kernel.ok() ? std::move(*kernel) : nullptr;
}

LaunchConfig MatmulLaunch(int n) {
  LaunchConfig config;
  int blocks = (n + kTile - 1) / kTile;
  config.grid = {blocks, blocks, 1};
  config.block = {kTile, kTile, 1};
  return config;
}

// Runs the matmul kernel on random n x n inputs and compares with a float64 reference.
void ExpectMatmulMatchesReference(const Device& device, bool dynamic_tiles, int n) {
  std::string options = "-DTILE=" + std::to_string(kTile) + (dynamic_tiles ? " -DDYNAMIC_TILES" : "");
  std::unique_ptr<Program> program;
  std::unique_ptr<Kernel> kernel = BuildKernel(device, program, kTiledMatmul, "tiled_matmul", options);
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->static_local_bytes() >= 2 * kTile * kTile * 4, !dynamic_tiles);

  std::vector<float> a = Random(n * n, 1), b = Random(n * n, 2);
  Buffer a_buf = MakeBuffer(device, a), b_buf = MakeBuffer(device, b);
  Buffer c_buf = MakeBuffer(device, std::vector<float>(n * n, NAN));
  LaunchConfig config = MatmulLaunch(n);
  std::vector<KernelArg> args = {KernelArg::Of(a_buf), KernelArg::Of(b_buf), KernelArg::Of(c_buf),
                                 KernelArg::Int32(n)};
  if (dynamic_tiles) {
    config.dynamic_shared_bytes = 2 * kTile * kTile * sizeof(float);
    args.push_back(KernelArg::DynamicShared());
  }
  Status ran = kernel->Run(config, args);
  ASSERT_TRUE(ran.ok()) << ran.message();

  std::vector<float> c = ReadBack(c_buf);
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      double expected = 0;
      for (int k = 0; k < n; ++k) expected += static_cast<double>(a[i * n + k]) * b[k * n + j];
      // float32 accumulation of n products of magnitude <= 1.
      if (!(std::abs(c[i * n + j] - expected) <= 1e-5 * n)) ++wrong;
    }
  }
  EXPECT_EQ(wrong, 0) << "of " << n * n << " elements (n=" << n << ")";
}

TEST(OpenclKernel, TiledMatmulWithStaticLocalTilesMatchesFloat64Reference) {
  TUNED_OPEN_OPENCL_OR_SKIP(device, "opencl");
  ExpectMatmulMatchesReference(*device, /*dynamic_tiles=*/false, 64);
  ExpectMatmulMatchesReference(*device, /*dynamic_tiles=*/false, 37);  // partial edge tiles
}

TEST(OpenclKernel, TiledMatmulWithDynamicSharedTilesMatchesFloat64Reference) {
  TUNED_OPEN_OPENCL_OR_SKIP(device, "opencl");
  ExpectMatmulMatchesReference(*device, /*dynamic_tiles=*/true, 48);
}

TEST(OpenclKernel, ElementwiseKernelCoversEveryElementOnce) {
  TUNED_OPEN_OPENCL_OR_SKIP(device, "opencl");
  std::unique_ptr<Program> program;
  std::unique_ptr<Kernel> kernel = BuildKernel(*device, program, kAxpy, "axpy", "");
  ASSERT_NE(kernel, nullptr);
  const int n = 1000;  // not a multiple of the block: the guard matters
  std::vector<float> x = Random(n, 3), y = Random(n, 4);
  Buffer x_buf = MakeBuffer(*device, x), y_buf = MakeBuffer(*device, y);
  Buffer out_buf = MakeBuffer(*device, std::vector<float>(n, NAN));
  LaunchConfig config;
  config.block = {128, 1, 1};
  config.grid = {(n + 127) / 128, 1, 1};
  Status ran = kernel->Run(config, {KernelArg::Of(x_buf), KernelArg::Of(y_buf), KernelArg::Of(out_buf),
                                    KernelArg::Float32(2.5f), KernelArg::Int32(n)});
  ASSERT_TRUE(ran.ok()) << ran.message();
  std::vector<float> out = ReadBack(out_buf);
  for (int i = 0; i < n; ++i) {
    // The device may contract to an FMA: one float32 rounding of the float64 result.
    double expected = 2.5 * x[i] + y[i];
    ASSERT_NEAR(out[i], expected, 1e-6 * (std::abs(2.5 * x[i]) + std::abs(y[i]))) << "element " << i;
  }
}

TEST(OpenclKernel, BuildErrorIsOneLineNamingTheLine) {
  TUNED_OPEN_OPENCL_OR_SKIP(device, "opencl");
  const char* source =
      "__kernel void broken(__global float* x) {\n"
      "  x[get_global_id(0)] = undefined_value;\n"
      "}\n";
  StatusOr<std::unique_ptr<Program>> program = Program::Build(*device, source);
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(program.status().message(), HasSubstr(":2:"));
  EXPECT_THAT(program.status().message(), HasSubstr("error:"));
  EXPECT_THAT(program.status().message(), HasSubstr("undefined_value"));
  EXPECT_EQ(program.status().message().find('\n'), std::string::npos);
}

TEST(OpenclKernel, MissingKernelNameIsNotFound) {
  TUNED_OPEN_OPENCL_OR_SKIP(device, "opencl");
  StatusOr<std::unique_ptr<Program>> program = Program::Build(*device, kAxpy);
  ASSERT_TRUE(program.ok()) << program.status().message();
  StatusOr<std::unique_ptr<Kernel>> kernel = Kernel::Create(**program, "gemm");
  ASSERT_FALSE(kernel.ok());
  EXPECT_THAT(kernel.status().message(), HasSubstr("no kernel 'gemm'"));
}

// The output buffer keeps its sentinel: a refused launch never ran.
void ExpectRefusedBeforeRunning(Kernel& kernel, const Device& device, const LaunchConfig& config,
                                bool dynamic_tiles, const std::string& message) {
  const int n = 32;
  Buffer a = MakeBuffer(device, Random(n * n, 5)), b = MakeBuffer(device, Random(n * n, 6));
  Buffer c = MakeBuffer(device, std::vector<float>(n * n, -7.0f));
  std::vector<KernelArg> args = {KernelArg::Of(a), KernelArg::Of(b), KernelArg::Of(c), KernelArg::Int32(n)};
  if (dynamic_tiles) args.push_back(KernelArg::DynamicShared());
  Status ran = kernel.Run(config, args);
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(ran.message(), HasSubstr(message));
  EXPECT_EQ(ran.message().find('\n'), std::string::npos);
  EXPECT_EQ(kernel.CheckLaunch(config).message(), ran.message());
  for (float v : ReadBack(c)) ASSERT_EQ(v, -7.0f);
}

TEST(OpenclKernel, BlockBeyondTheWorkGroupLimitIsRefusedBeforeLaunch) {
  TUNED_OPEN_OPENCL_OR_SKIP(device, "opencl -max-work-group-size=128");
  std::unique_ptr<Program> program;
  std::unique_ptr<Kernel> kernel =
      BuildKernel(*device, program, kTiledMatmul, "tiled_matmul", "-DTILE=16");
  ASSERT_NE(kernel, nullptr);
  ExpectRefusedBeforeRunning(*kernel, *device, MatmulLaunch(32), false,
                             "kernel 'tiled_matmul': block 16x16x1 has 256 threads, beyond the "
                             "target's maximum work-group size of 128");

  // The device's own limit, with the target leaving it to the device.
  TUNED_OPEN_OPENCL_OR_SKIP(full, "opencl");
  std::unique_ptr<Program> full_program;
  std::unique_ptr<Kernel> full_kernel =
      BuildKernel(*full, full_program, kTiledMatmul, "tiled_matmul", "-DTILE=16");
  ASSERT_NE(full_kernel, nullptr);
  LaunchConfig huge;
  huge.block = {full->info().max_work_item_sizes[0], 2, 1};
  EXPECT_THAT(full_kernel->CheckLaunch(huge).message(), HasSubstr("threads, beyond the "));
}

TEST(OpenclKernel, LocalMemoryBeyondTheLimitIsRefusedBeforeLaunch) {
  // Static tiles: 2 KiB of the kernel's own against a 1 KiB target.
  TUNED_OPEN_OPENCL_OR_SKIP(small, "opencl -local-memory-bytes=1024");
  std::unique_ptr<Program> program;
  std::unique_ptr<Kernel> kernel = BuildKernel(*small, program, kTiledMatmul, "tiled_matmul", "-DTILE=16");
  ASSERT_NE(kernel, nullptr);
  ExpectRefusedBeforeRunning(*kernel, *small, MatmulLaunch(32), false,
                             " static + 0 dynamic) exceed the target's 1024");

  // Dynamic tiles: one byte more than the device has.
  TUNED_OPEN_OPENCL_OR_SKIP(device, "opencl");
  std::unique_ptr<Program> dynamic_program;
  std::unique_ptr<Kernel> dynamic =
      BuildKernel(*device, dynamic_program, kTiledMatmul, "tiled_matmul", "-DTILE=16 -DDYNAMIC_TILES");
  ASSERT_NE(dynamic, nullptr);
  LaunchConfig config = MatmulLaunch(32);
  config.dynamic_shared_bytes = device->info().local_memory_bytes + 1;
  ExpectRefusedBeforeRunning(*dynamic, *device, config, true,
                             "dynamic) exceed the target's " + std::to_string(device->info().local_memory_bytes));
}

TEST(OpenclKernel, TimingGivesPositiveMediansOfEveryRun) {
  TUNED_OPEN_OPENCL_OR_SKIP(device, "opencl");
  std::unique_ptr<Program> program;
  std::unique_ptr<Kernel> kernel = BuildKernel(*device, program, kTiledMatmul, "tiled_matmul", "-DTILE=16");
  ASSERT_NE(kernel, nullptr);
  const int n = 64;
  Buffer a = MakeBuffer(*device, Random(n * n, 7)), b = MakeBuffer(*device, Random(n * n, 8));
  Buffer c = MakeBuffer(*device, std::vector<float>(n * n, 0.0f));
  std::vector<KernelArg> args = {KernelArg::Of(a), KernelArg::Of(b), KernelArg::Of(c), KernelArg::Int32(n)};
  StatusOr<KernelTiming> timing = kernel->Time(MatmulLaunch(n), args, 5);
  ASSERT_TRUE(timing.ok()) << timing.status().message();
  ASSERT_EQ(timing->seconds.size(), 5u);
  for (double s : timing->seconds) EXPECT_GT(s, 0);
  EXPECT_GT(timing->median_seconds, 0);
  EXPECT_LT(timing->median_seconds, 10);
  EXPECT_GE(timing->median_seconds, *std::min_element(timing->seconds.begin(), timing->seconds.end()));
  EXPECT_LE(timing->median_seconds, *std::max_element(timing->seconds.begin(), timing->seconds.end()));
  EXPECT_THAT(kernel->Time(MatmulLaunch(n), args, 0).status().message(), HasSubstr("at least one run"));
}

TEST(OpenclBuffer, TransfersBeyondTheBufferAreRefused) {
  TUNED_OPEN_OPENCL_OR_SKIP(device, "opencl");
  StatusOr<Buffer> buffer = Buffer::Create(*device, 16);
  ASSERT_TRUE(buffer.ok()) << buffer.status().message();
  std::vector<char> bytes(32);
  EXPECT_THAT(buffer->Write(bytes.data(), 32).message(), HasSubstr("does not fit a buffer of 16"));
  EXPECT_THAT(buffer->Read(bytes.data(), 17).message(), HasSubstr("does not fit a buffer of 16"));
  EXPECT_FALSE(Buffer::Create(*device, 0).ok());
}

}  // namespace
}  // namespace tuned::opencl
