// Merged dimensions (KernelValue::compute_shape): an index into the merged shape expands into the
// full shape's with floordiv/floormod, and flattens back to the variable it came from.
#include <gtest/gtest.h>

#include "model/definition_writer.h"

namespace tuned::model {
namespace {

TEST(DefinitionWriter, AMergedIndexExpandsAndFlattensBackToItsVariable) {
  const std::vector<int64_t> shape = {1, 64, 7, 8, 9}, merged = {1, 64, 504};
  Index expanded = ExpandIndex(shape, merged, {"n", "f", "p"});
  EXPECT_EQ(expanded, (Index{"n", "f", "floordiv(p, 72)", "floormod(floordiv(p, 9), 8)", "floormod(p, 9)"}));
  EXPECT_EQ(FlattenIndex(shape, merged, expanded), (Index{"n", "f", "p"}));
  // Any other index is flattened row-major.
  EXPECT_EQ(FlattenIndex(shape, merged, {"n", "f", "d", "h", "w"}), (Index{"n", "f", "(((d) * 8 + h) * 9 + w)"}));
  // Components that only look like an expansion are not taken for one.
  EXPECT_EQ(FlattenIndex(shape, merged, {"n", "f", "floordiv(q, 72)", "floormod(floordiv(p, 9), 8)", "floormod(p, 9)"}),
            (Index{"n", "f", "(((floordiv(q, 72)) * 8 + floormod(floordiv(p, 9), 8)) * 9 + floormod(p, 9))"}));
}

TEST(DefinitionWriter, TrailingExtentsOfOneBelongToTheLastMergedDimension) {
  // A pointwise convolution of an image one pixel wide, and of a 1 x 1 image.
  EXPECT_EQ(ExpandIndex({1, 4, 3, 1}, {1, 4, 3}, {"n", "f", "p"}), (Index{"n", "f", "p", "floormod(p, 1)"}));
  EXPECT_EQ(ExpandIndex({1, 4, 1, 1}, {1, 4, 1}, {"n", "f", "p"}), (Index{"n", "f", "p", "floormod(p, 1)"}));
  EXPECT_EQ(FlattenIndex({1, 4, 3, 1}, {1, 4, 3}, {"n", "f", "p", "floormod(p, 1)"}), (Index{"n", "f", "p"}));
  EXPECT_EQ(FlattenIndex({1, 4, 3, 1}, {1, 4, 3}, {"n", "f", "h", "w"}), (Index{"n", "f", "((h) * 1 + w)"}));
}

TEST(DefinitionWriter, AMaterializedValueIsAStageOverItsMergedShapeReadAsTheFullShape) {
  DefinitionWriter w;
  KernelValue value{{1, 4, 2, 3}, [](const Index& a) { return "x[" + a[1] + ", " + a[2] + ", " + a[3] + "]"; }, "",
                    {1, 4, 6}};
  KernelValue stage = w.Materialize("t", value);
  EXPECT_EQ(w.Text(), "t[a0: 1, a1: 4, a2: 6] = x[a1, floordiv(a2, 3), floormod(a2, 3)]\n");
  EXPECT_EQ(stage.shape, (std::vector<int64_t>{1, 4, 2, 3}));
  EXPECT_EQ(stage.stage, "t");
  EXPECT_EQ(stage.at({"i", "j", "h", "w"}), "t[i, j, ((h) * 3 + w)]");
}

}  // namespace
}  // namespace tuned::model
