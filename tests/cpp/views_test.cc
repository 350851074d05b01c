// Views share storage and the version counter; their strides are hand-computed here.
#include <gtest/gtest.h>

#include "tests/cpp/test_helpers.h"

using kiln::api::Tensor;
using kiln_test::floats;
using kiln_test::values;

namespace {
char* bytes(const Tensor& t) { return static_cast<char*>(t.data_ptr()); }
}  // namespace

TEST(Views, TransposeSwapsStrides) {
  Tensor base = kiln::api::zeros({2, 3});
  Tensor t = base.transpose(0, 1);
  EXPECT_EQ(t.sizes()[0], 3);
  EXPECT_EQ(t.strides()[0], 1);
  EXPECT_EQ(t.strides()[1], 3);
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(bytes(t), bytes(base));
}

TEST(Views, SelectAndSliceOffsets) {
  Tensor base = floats({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  Tensor row = base.select(0, 2);  // elements 8..11
  EXPECT_EQ(row.storage_offset(), 8);
  EXPECT_EQ(bytes(row), bytes(base) + 8 * 4);
  Tensor cols = kiln::api::slice(base, 1, 1, std::nullopt, 2);  // columns 1 and 3
  EXPECT_EQ(cols.sizes()[1], 2);
  EXPECT_EQ(cols.strides()[1], 2);
  EXPECT_EQ(cols.storage_offset(), 1);
  EXPECT_EQ(values(cols), (std::vector<float>{1, 3, 5, 7, 9, 11}));
  Tensor neg = kiln::api::slice(base, 0, -2, std::nullopt, 1);  // last two rows
  EXPECT_EQ(neg.storage_offset(), 4);
}

TEST(Views, ExpandUsesStrideZero) {
  Tensor base = floats({1, 2, 3}, {3});
  Tensor e = base.expand({4, 3});
  EXPECT_EQ(e.strides()[0], 0);
  EXPECT_EQ(e.strides()[1], 1);
  EXPECT_EQ(values(e), (std::vector<float>{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}));
  EXPECT_THROW(base.expand({4, 2}), kiln::Error);
}

TEST(Views, ViewOfNonContiguousNeedsCompatibleStrides) {
  Tensor t = kiln::api::zeros({2, 3}).transpose(0, 1);
  EXPECT_THROW(t.view({6}), kiln::Error);
  Tensor ok = kiln::api::zeros({2, 3, 4}).view({6, -1});
  EXPECT_EQ(ok.sizes()[1], 4);
}

TEST(Views, WritesThroughAViewBumpTheSharedVersion) {
  Tensor base = kiln::api::zeros({3});
  Tensor v = base.select(0, 1);
  const uint32_t before = base._version();
  v.fill_(7);
  EXPECT_EQ(base._version(), before + 1);
  EXPECT_EQ(values(base), (std::vector<float>{0, 7, 0}));
}

TEST(Views, SelectOutOfRangeIsIndexError) {
  Tensor t = kiln::api::zeros({3});
  EXPECT_THROW(t.select(0, 3), kiln::IndexError);
  EXPECT_THROW(t.select(0, -4), kiln::IndexError);
  EXPECT_NO_THROW(t.select(0, -3));
}

TEST(Views, AsStridedChecksBounds) {
  Tensor t = kiln::api::zeros({4});
  EXPECT_THROW(kiln::api::as_strided(t, {2, 2}, {2, 2}, 0), kiln::Error);  // needs 5 elements
  Tensor ok = kiln::api::as_strided(t, {2, 2}, {1, 2}, 0);
  EXPECT_EQ(ok.strides()[1], 2);
}
