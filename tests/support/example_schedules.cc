#include "tests/support/example_schedules.h"

#include <gtest/gtest.h>

namespace tuned::testing {

schedule::Schedule TiledMatmul(std::shared_ptr<const ir::Workload> w) {
  schedule::Schedule sch(w, 42);
  schedule::BlockRV c = *sch.GetBlock("C");
  auto loops = *sch.GetLoops(c);
  auto tiles = *sch.SamplePerfectTile(loops[0], 2, 8);
  auto i = *sch.Split(loops[0], {tiles[0], tiles[1]});
  auto j = *sch.Split(loops[1], {std::monostate{}, int64_t(4)});
  EXPECT_TRUE(sch.Reorder({i[0], j[0], i[1], j[1]}).ok());
  schedule::BlockRV wb = *sch.CacheWrite(c, "local");
  EXPECT_TRUE(sch.ReverseComputeAt(wb, j[0]).ok());
  EXPECT_TRUE(sch.Parallel(i[0]).ok());
  return sch;
}

}  // namespace tuned::testing
