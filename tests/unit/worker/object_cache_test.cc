// The worker's cache of built objects: found by key, least recently used evicted past the
// capacity, test builders' native functions never kept.

#include <gtest/gtest.h>

#include <string>

#include "worker/object_cache.h"

namespace tuned::worker {
namespace {

CompiledCandidate Object(char fill, size_t bytes) {
  CompiledCandidate compiled;
  compiled.object = std::string(bytes, fill);
  compiled.kernel_name = "k";
  compiled.num_args = 3;
  return compiled;
}

TEST(ObjectCache, FindsWhatWasPutUnderItsKey) {
  ObjectCache cache(1 << 20);
  EXPECT_FALSE(cache.Find("a").has_value());
  cache.Put("a", Object('a', 100));
  std::optional<CompiledCandidate> found = cache.Find("a");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->object, std::string(100, 'a'));
  EXPECT_EQ(found->kernel_name, "k");
  EXPECT_EQ(found->num_args, 3u);
  EXPECT_FALSE(cache.Find("b").has_value());
}

TEST(ObjectCache, EvictsTheLeastRecentlyUsedPastItsCapacity) {
  ObjectCache cache(2500);  // two 1000-byte objects and their keys, not three
  cache.Put("a", Object('a', 1000));
  cache.Put("b", Object('b', 1000));
  ASSERT_TRUE(cache.Find("a").has_value());  // "a" is now the most recently used
  cache.Put("c", Object('c', 1000));
  EXPECT_TRUE(cache.Find("a").has_value());
  EXPECT_FALSE(cache.Find("b").has_value());
  EXPECT_TRUE(cache.Find("c").has_value());
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_LE(cache.bytes(), 2500u);
}

TEST(ObjectCache, ReplacesAKeyAndKeepsNothingTooLargeOrNative) {
  ObjectCache cache(2000);
  cache.Put("a", Object('a', 100));
  cache.Put("a", Object('z', 200));
  EXPECT_EQ(cache.Find("a")->object, std::string(200, 'z'));
  EXPECT_EQ(cache.size(), 1u);
  cache.Put("big", Object('b', 5000));
  EXPECT_FALSE(cache.Find("big").has_value());
  CompiledCandidate native;
  native.native = [](void* const*) {};
  cache.Put("native", native);
  EXPECT_FALSE(cache.Find("native").has_value());
  EXPECT_EQ(cache.size(), 1u);
}

}  // namespace
}  // namespace tuned::worker
