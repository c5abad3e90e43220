// The drift rule alone: figures in, verdicts out.

#include "server/dispatch/calibration_drift.h"

#include <gtest/gtest.h>

namespace tuned::dispatch {
namespace {

TEST(CalibrationDrift, TheFirstFigureIsTheBaselineAndAMoveBeyondTheThresholdDriftsOnASteadyMachine) {
  CalibrationDrift drift(0.10);
  CalibrationDrift::Verdict first = drift.Add(1e-3);
  EXPECT_TRUE(first.first);
  EXPECT_FALSE(first.drifted);
  for (double s : {1.01e-3, 0.99e-3, 1.005e-3, 1.0e-3}) EXPECT_FALSE(drift.Add(s).drifted);
  // Four changes of about 1% are known: the jitter is small and the threshold decides.
  EXPECT_GT(drift.jitter(), 0);
  EXPECT_LT(drift.jitter(), 0.02);
  CalibrationDrift::Verdict moved = drift.Add(1.2e-3);
  EXPECT_TRUE(moved.drifted);
  EXPECT_DOUBLE_EQ(moved.baseline_seconds, 1e-3);
  EXPECT_NEAR(moved.drift, 0.2, 1e-9);
  EXPECT_DOUBLE_EQ(moved.band, 0.10);
  // A lasting change: the drifted figure is the new baseline, so the next batch stands.
  EXPECT_DOUBLE_EQ(drift.baseline_seconds(), 1.2e-3);
  CalibrationDrift::Verdict steady = drift.Add(1.21e-3);
  EXPECT_FALSE(steady.drifted);
  EXPECT_NEAR(steady.drift, 0.01 / 1.2, 1e-9);
}

TEST(CalibrationDrift, AMachineThatJumpsBetweenTwoLevelsEveryBatchStopsDriftingOnceItsJitterIsKnown) {
  CalibrationDrift drift(0.10);
  int drifts = 0;
  // 1.5 ms and 1.9 ms alternating (seen on a shared 2-core VM): every change is about 25%.
  for (int i = 0; i < 5; ++i) drifts += drift.Add(i % 2 ? 1.9e-3 : 1.5e-3).drifted;
  EXPECT_GT(drifts, 0);  // before the jitter is known, the threshold alone decides
  EXPECT_GT(drift.jitter(), 0.2);
  int later = 0;
  for (int i = 5; i < 25; ++i) {
    CalibrationDrift::Verdict v = drift.Add(i % 2 ? 1.9e-3 : 1.5e-3);
    later += v.drifted;
    EXPECT_GT(v.band, 0.4);
  }
  EXPECT_EQ(later, 0);
  // A move far beyond that noise still counts.
  EXPECT_TRUE(drift.Add(4e-3).drifted);
}

TEST(CalibrationDrift, ASpikeDoesNotWidenItsOwnBandAndZeroTurnsDetectionOff) {
  CalibrationDrift drift(0.10);
  for (int i = 0; i < 9; ++i) drift.Add(1e-3);
  CalibrationDrift::Verdict spike = drift.Add(1.5e-3);
  EXPECT_TRUE(spike.drifted);
  EXPECT_DOUBLE_EQ(spike.band, 0.10);  // the history before it was flat
  // The return to the old level is a move from the spike's figure beyond a band that the one
  // jump did not widen (the jitter is a median).
  CalibrationDrift::Verdict back = drift.Add(1e-3);
  EXPECT_TRUE(back.drifted);
  EXPECT_DOUBLE_EQ(drift.baseline_seconds(), 1e-3);

  CalibrationDrift off(0);
  off.Add(1e-3);
  CalibrationDrift::Verdict v = off.Add(5e-3);
  EXPECT_FALSE(v.drifted);
  EXPECT_NEAR(v.drift, 4.0, 1e-9);
}

}  // namespace
}  // namespace tuned::dispatch
