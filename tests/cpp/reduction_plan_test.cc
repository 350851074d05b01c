// ReductionPlan and DimSplit (runtime/kernels/reduction_plan.h) against references computed
// here element by element from coordinates, on random shapes and dims.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/kernels/reduction_plan.h"

using kiln::DimSplit;
using kiln::DimVector;
using kiln::IntArrayRef;
using kiln::ReductionPlan;

namespace {

using Coords = std::vector<int64_t>;

// Row-major offset of `c` in `sizes` (the contiguous layout).
int64_t offset_of(const Coords& c, const std::vector<int64_t>& sizes) {
  int64_t off = 0;
  for (size_t i = 0; i < sizes.size(); ++i) off = off * sizes[i] + c[i];
  return off;
}

// Calls f(coords) for every element of `sizes`, in row-major order.
template <typename F>
void for_each_coord(const std::vector<int64_t>& sizes, F f) {
  for (int64_t s : sizes)
    if (s == 0) return;
  Coords c(sizes.size(), 0);
  while (true) {
    f(c);
    int64_t i = static_cast<int64_t>(sizes.size()) - 1;
    for (; i >= 0 && ++c[i] == sizes[i]; --i) c[i] = 0;
    if (i < 0) return;
  }
}

std::vector<int64_t> random_shape(std::mt19937& rng) {
  std::vector<int64_t> shape(rng() % 5);
  for (int64_t& s : shape) s = rng() % 4;  // 0 and 1 included: empty and degenerate dims
  return shape;
}

}  // namespace

TEST(DimSplit, LinesMatchCoordinates) {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 300; ++trial) {
    const std::vector<int64_t> sizes = random_shape(rng);
    const int64_t nd = static_cast<int64_t>(sizes.size());
    const int64_t range = nd > 0 ? nd : 1;
    const int64_t dim = static_cast<int64_t>(rng() % (2 * range)) - range;  // negative dims too
    const DimSplit s = DimSplit::around(sizes, dim, "test");
    const int64_t d = dim < 0 ? dim + range : dim;
    ASSERT_EQ(s.dim, d);
    int64_t numel = 1;
    for (int64_t v : sizes) numel *= v;
    ASSERT_EQ(s.numel(), numel);
    // Element (coords) is element c[d] of the line numbered by the other coords in row-major order.
    for_each_coord(sizes, [&](const Coords& c) {
      if (nd == 0) {
        EXPECT_EQ(s.line_start(0), 0);
        return;
      }
      Coords rest;
      std::vector<int64_t> rest_sizes;
      for (int64_t i = 0; i < nd; ++i)
        if (i != d) rest.push_back(c[i]), rest_sizes.push_back(sizes[i]);
      const int64_t line = offset_of(rest, rest_sizes);
      EXPECT_EQ(s.line_start(line) + c[d] * s.inner, offset_of(c, sizes));
    });
    DimVector kept = s.reduced_shape(sizes, true), dropped = s.reduced_shape(sizes, false);
    EXPECT_EQ(kept.size(), sizes.size());
    EXPECT_EQ(dropped.size(), nd > 0 ? sizes.size() - 1 : 0);
    const DimVector resized = s.resized_shape(sizes, 7);
    for (int64_t i = 0; i < nd; ++i) EXPECT_EQ(resized[i], i == d ? 7 : sizes[i]);
  }
}

TEST(DimSplit, WrongDimIsAnIndexError) {
  const std::vector<int64_t> sizes{2, 3};
  EXPECT_THROW(DimSplit::around(sizes, 2, "test"), kiln::IndexError);
  EXPECT_THROW(DimSplit::around(sizes, -3, "test"), kiln::IndexError);
  EXPECT_THROW(DimSplit::around({}, 1, "test"), kiln::IndexError);
  EXPECT_EQ(DimSplit::around({}, -1, "test").numel(), 1);  // a 0-dim tensor: one line of one element
}

TEST(ReductionPlan, RowsMatchCoordinates) {
  std::mt19937 rng(2);
  for (int trial = 0; trial < 300; ++trial) {
    const std::vector<int64_t> sizes = random_shape(rng);
    const int64_t nd = static_cast<int64_t>(sizes.size());
    std::vector<int64_t> dims;  // a random subset, some written negative
    for (int64_t i = 0; i < nd; ++i)
      if (rng() % 2) dims.push_back(rng() % 2 ? i : i - nd);
    const bool keepdim = rng() % 2;
    const bool all = dims.empty();
    const ReductionPlan p = ReductionPlan::over_dims(sizes, IntArrayRef(dims), keepdim, "test");
    std::vector<bool> reduced(nd, all);
    for (int64_t d : dims) reduced[d < 0 ? d + nd : d] = true;
    ASSERT_EQ(p.reduced, reduced);
    // Reference shapes, counts and suffix flag from the mask.
    std::vector<int64_t> out, keep, kept_sizes, perm;
    int64_t count = 1, n_out = 1;
    for (int64_t i = 0; i < nd; ++i) {
      keep.push_back(reduced[i] ? 1 : sizes[i]);
      if (!reduced[i] || keepdim) out.push_back(reduced[i] ? 1 : sizes[i]);
      (reduced[i] ? count : n_out) *= sizes[i];
      if (!reduced[i]) kept_sizes.push_back(sizes[i]), perm.push_back(i);
    }
    for (int64_t i = 0; i < nd; ++i)
      if (reduced[i]) perm.push_back(i);
    EXPECT_EQ(IntArrayRef(p.out_shape), IntArrayRef(out));
    EXPECT_EQ(IntArrayRef(p.keep_shape), IntArrayRef(keep));
    EXPECT_EQ(IntArrayRef(p.permutation), IntArrayRef(perm));
    EXPECT_EQ(p.count, count);
    EXPECT_EQ(p.n_out, n_out);
    // reduced_suffix promises: every element of output o is in row o of the contiguous input
    // as it is. (It may say no where that holds anyway: reduced dims of size 1.)
    // reduced_block promises: every element of output o is on line o of block() (its start plus
    // k * inner, k < count), read in place.
    // kept_block promises: every element of output o is on one of the lines
    // (k * n_out + o) * reduced_inner, k < reduced_outer, of reduced_inner elements.
    bool suffix = true, block = true, kept_lines = true;
    const DimSplit b = p.block();
    for_each_coord(sizes, [&](const Coords& c) {
      Coords kept;
      for (int64_t i = 0; i < nd; ++i)
        if (!reduced[i]) kept.push_back(c[i]);
      const int64_t row = offset_of(kept, kept_sizes);
      const int64_t off = offset_of(c, sizes);
      if (off / p.rows().n != row) suffix = false;
      const int64_t from_line = off - b.line_start(row);
      if (from_line < 0 || from_line % b.inner != 0 || from_line / b.inner >= count) block = false;
      const int64_t line = off / p.reduced_inner;
      if (line % n_out != row || line / n_out >= p.reduced_outer) kept_lines = false;
    });
    if (p.reduced_suffix) EXPECT_TRUE(suffix);
    if (p.reduced_block) {
      EXPECT_TRUE(block);
      if (n_out > 0 && count > 0) EXPECT_EQ(b.lines(), n_out);
    }
    if (p.reduced_suffix) EXPECT_TRUE(p.reduced_block);
    if (p.kept_block && n_out > 0) {
      EXPECT_TRUE(kept_lines);
      EXPECT_EQ(p.reduced_outer * p.reduced_inner, count);
    }
    EXPECT_EQ(p.rows().lines(), n_out);
  }
}

TEST(ReductionPlan, ReducedSuffix) {
  auto suffix = [](std::vector<int64_t> sizes, std::vector<int64_t> dims) {
    return ReductionPlan::over_dims(sizes, IntArrayRef(dims), false, "test").reduced_suffix;
  };
  EXPECT_TRUE(suffix({2, 3, 4}, {1, 2}));
  EXPECT_TRUE(suffix({2, 3, 4}, {}));
  EXPECT_TRUE(suffix({2, 3, 1}, {1}));  // a size-1 kept dim after the reduced ones is no gap
  EXPECT_FALSE(suffix({2, 3, 4}, {1}));
  EXPECT_FALSE(suffix({2, 3, 4}, {0, 2}));
}

TEST(ReductionPlan, ReducedBlock) {
  auto plan = [](std::vector<int64_t> sizes, std::vector<int64_t> dims) {
    return ReductionPlan::over_dims(sizes, IntArrayRef(dims), false, "test");
  };
  const ReductionPlan middle = plan({2, 3, 4}, {1});
  EXPECT_TRUE(middle.reduced_block);
  EXPECT_EQ(middle.block().outer, 2);
  EXPECT_EQ(middle.block().n, 3);
  EXPECT_EQ(middle.block().inner, 4);
  EXPECT_TRUE(plan({2, 3, 4, 5}, {1, 2}).reduced_block);
  EXPECT_EQ(plan({2, 3, 4, 5}, {0, 1}).block().inner, 20);
  EXPECT_TRUE(plan({2, 3, 1, 4}, {1, 3}).reduced_block);  // a size-1 kept dim between is no gap
  EXPECT_FALSE(plan({2, 3, 4}, {0, 2}).reduced_block);
  EXPECT_FALSE(plan({2, 3, 4, 5}, {1, 3}).reduced_block);
  EXPECT_EQ(plan({2, 3, 4}, {}).block().inner, 1);
}

TEST(ReductionPlan, DimErrorsAsTorch) {
  const std::vector<int64_t> sizes{2, 3, 4};
  const std::vector<int64_t> twice{1, -2}, out_of_range{0, 3};
  EXPECT_THROW(ReductionPlan::over_dims(sizes, IntArrayRef(twice), false, "sum"), kiln::Error);
  EXPECT_THROW(ReductionPlan::over_dims(sizes, IntArrayRef(out_of_range), false, "sum"), kiln::IndexError);
  try {
    ReductionPlan::over_dims(sizes, IntArrayRef(twice), false, "sum");
  } catch (const kiln::Error& e) {
    EXPECT_STREQ(e.what(), "sum(): dim 1 appears multiple times in the list of dims");
  }
  // No dims or an empty list: everything; a 0-dim tensor reduces its one element.
  EXPECT_EQ(ReductionPlan::over_dims(sizes, std::nullopt, true, "sum").out_shape.size(), 3u);
  EXPECT_EQ(ReductionPlan::over_dims(sizes, IntArrayRef(), false, "sum").count, 24);
  EXPECT_EQ(ReductionPlan::over_dims({}, std::nullopt, false, "sum").count, 1);
}

TEST(ReductionPlan, ParallelismChoice) {
  using kiln::LineParallelism;
  const int64_t big = kiln::kSplitLineGrainSize;
  EXPECT_EQ(kiln::choose_parallelism(DimSplit::rows(1, big), 4, true), LineParallelism::kWithinLine);
  EXPECT_EQ(kiln::choose_parallelism(DimSplit::rows(1, big), 4, false), LineParallelism::kSerial);
  EXPECT_EQ(kiln::choose_parallelism(DimSplit::rows(1, big), 1, true), LineParallelism::kSerial);
  EXPECT_EQ(kiln::choose_parallelism(DimSplit::rows(1, big - 1), 4, true), LineParallelism::kSerial);
  EXPECT_EQ(kiln::choose_parallelism(DimSplit::rows(2, kiln::kLineGrainSize / 2), 4), LineParallelism::kOverLines);
  EXPECT_EQ(kiln::choose_parallelism(DimSplit::rows(2, 100), 4), LineParallelism::kSerial);
}

TEST(ReductionPlan, KeptBlock) {
  auto plan = [](std::vector<int64_t> sizes, std::vector<int64_t> dims) {
    return ReductionPlan::over_dims(sizes, IntArrayRef(dims), false, "test");
  };
  const ReductionPlan bias = plan({8, 16, 5, 5}, {0, 2, 3});  // a conv bias gradient
  EXPECT_TRUE(bias.kept_block);
  EXPECT_EQ(bias.reduced_outer, 8);
  EXPECT_EQ(bias.reduced_inner, 25);
  EXPECT_TRUE(plan({2, 3, 1, 4}, {0, 2}).kept_block);  // a size-1 reduced dim between is no gap
  EXPECT_FALSE(plan({2, 3, 4, 5}, {0, 2}).kept_block);
  EXPECT_TRUE(plan({2, 3, 4}, {0}).kept_block);
  EXPECT_EQ(plan({2, 3, 4}, {0}).reduced_inner, 1);
}
