// The GPU runners' timing protocol (runner_loop.h), with a pass whose device time is given:
// warm-up, runs per repeat doubled to min_repeat_seconds, a flush before each repeat, errors.

#include "worker/gpu_runner/runner_loop.h"

#include <gtest/gtest.h>

#include <vector>

namespace tuned::worker::gpu {
namespace {

v1::GpuRunnerRequest::Run Request(uint32_t warmup, uint32_t repeats, double min_repeat_seconds) {
  v1::GpuRunnerRequest::Run run;
  run.set_warmup(warmup);
  run.set_repeats(repeats);
  run.set_number(1);
  run.set_min_repeat_seconds(min_repeat_seconds);
  return run;
}

TEST(TimeRepeats, GrowsRunsPerRepeatToTheMinimumAndFlushesBeforeEachRepeat) {
  std::vector<uint32_t> passes;  // the `number` of each pass, in order
  std::vector<size_t> flushed_before;  // passes done when each flush ran
  auto pass = [&](uint32_t number) -> StatusOr<double> {
    passes.push_back(number);
    return 0.001 * double(passes.size());  // a device that slows down: repeats differ
  };
  auto flush = [&]() -> Status {
    flushed_before.push_back(passes.size());
    return Status::Ok();
  };
  v1::GpuRunnerReply reply;
  ASSERT_TRUE(TimeRepeats(Request(2, 3, 0.02), pass, flush, reply).ok());
  // 2 warm-up passes, 1 to size the repeats (3 ms: 8 runs reach 20 ms), then 3 repeats of 8.
  EXPECT_EQ(passes, (std::vector<uint32_t>{1, 1, 1, 8, 8, 8}));
  EXPECT_EQ(flushed_before, (std::vector<size_t>{3, 4, 5}));
  EXPECT_EQ(reply.number(), 8u);
  ASSERT_EQ(reply.repeat_seconds_size(), 3);
  EXPECT_DOUBLE_EQ(reply.repeat_seconds(0), 0.004);
  EXPECT_DOUBLE_EQ(reply.repeat_seconds(2), 0.006);
  EXPECT_NEAR(reply.kernel_seconds(), 0.001 + 0.002 + 0.003 + 8 * (0.004 + 0.005 + 0.006), 1e-12);
}

TEST(TimeRepeats, AFailingPassOrFlushStopsTheProtocolWithItsError) {
  int calls = 0;
  auto failing_third = [&](uint32_t) -> StatusOr<double> {
    if (++calls == 3) return InternalError("launching: CUDA_ERROR_ILLEGAL_ADDRESS");
    return 0.001;
  };
  v1::GpuRunnerReply reply;
  Status failed = TimeRepeats(Request(1, 5, 0), failing_third, {}, reply);
  EXPECT_EQ(failed.message(), "launching: CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_EQ(reply.repeat_seconds_size(), 0);  // warm-up, sizing, then the first repeat failed
  auto ok = [](uint32_t) -> StatusOr<double> { return 0.001; };
  auto flush_fails = []() -> Status { return InternalError("flushing the L2: out of memory"); };
  EXPECT_EQ(TimeRepeats(Request(0, 2, 0), ok, flush_fails, reply).message(), "flushing the L2: out of memory");
}

}  // namespace
}  // namespace tuned::worker::gpu
