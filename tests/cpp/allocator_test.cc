// The CPU caching allocator hands large blocks out again.
#include <gtest/gtest.h>

#include <cstdint>

#include "runtime/core/allocator.h"
#include "tests/cpp/test_helpers.h"

TEST(Allocator, LargeBlocksAreReused) {
  const int64_t n = 16 * 1024 * 1024;  // 64 MB of float32
  void* first;
  {
    kiln::api::Tensor a = kiln::api::empty({n});
    first = a.data_ptr();
  }
  const auto before = kiln::cpu_allocator_stats();
  EXPECT_GE(before.cached_bytes, n * 4);
  kiln::api::Tensor b = kiln::api::empty({n});
  const auto after = kiln::cpu_allocator_stats();
  EXPECT_EQ(after.cache_hits, before.cache_hits + 1);
  EXPECT_EQ(b.data_ptr(), first);
}

TEST(Allocator, DataIsAligned) {
  for (int64_t n : {1, 3, 1000, 300000}) {
    kiln::api::Tensor t = kiln::api::empty({n});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64, 0u);
  }
}

TEST(Allocator, EmptyCacheReleasesBlocks) {
  { kiln::api::Tensor a = kiln::api::empty({int64_t(1) << 20}); }
  EXPECT_GT(kiln::cpu_allocator_stats().cached_bytes, 0);
  kiln::cpu_allocator_empty_cache();
  EXPECT_EQ(kiln::cpu_allocator_stats().cached_bytes, 0);
}

// The list of views split/chunk/unbind return grows with an argument, not with any storage (a
// zero-size tensor can have a dim of any size): under a limit it fails like a big allocation.
TEST(Allocator, HugeListsOfViewsRespectTheLimit) {
  kiln::set_cpu_allocation_limit(size_t(1) << 28);
  const int64_t huge = int64_t(1) << 40;
  EXPECT_THROW(kiln::api::chunk(kiln::api::empty({0}), huge), kiln::Error);
  EXPECT_THROW(kiln::api::unbind(kiln::api::empty({huge, 0}), 0), kiln::Error);
  EXPECT_THROW(kiln::api::split(kiln::api::empty({huge, 0}), 1, 0), kiln::Error);
  EXPECT_EQ(kiln::api::chunk(kiln::api::empty({0}), 3).size(), 3u);  // small lists still work
  kiln::set_cpu_allocation_limit(0);
}
