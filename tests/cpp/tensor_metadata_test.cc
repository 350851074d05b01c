// Sizes, strides, dtypes and the checks on them.
#include <gtest/gtest.h>

#include <cstdint>

#include "tests/cpp/test_helpers.h"

using kiln::ScalarType;
using kiln::api::Tensor;

TEST(TensorMetadata, FreshTensorIsRowMajor) {
  Tensor t = kiln::api::empty({2, 3, 4}, ScalarType::Float64);
  EXPECT_EQ(t.dim(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.strides()[0], 12);
  EXPECT_EQ(t.strides()[1], 4);
  EXPECT_EQ(t.strides()[2], 1);
  EXPECT_EQ(t.storage_offset(), 0);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.element_size(), 8);
}

TEST(TensorMetadata, ElementSizes) {
  EXPECT_EQ(kiln::element_size(ScalarType::Bool), 1);
  EXPECT_EQ(kiln::element_size(ScalarType::Int32), 4);
  EXPECT_EQ(kiln::element_size(ScalarType::Int64), 8);
  EXPECT_EQ(kiln::element_size(ScalarType::Float32), 4);
  EXPECT_EQ(kiln::element_size(ScalarType::Float64), 8);
}

TEST(TensorMetadata, NegativeSizeIsRejected) {
  try {
    kiln::api::empty({2, -1});
    FAIL() << "expected an error";
  } catch (const kiln::Error& e) {
    EXPECT_NE(std::string(e.what()).find("negative dimension -1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos) << e.what();
  }
}

TEST(TensorMetadata, NumelOverflowIsRejected) {
  const int64_t big = int64_t(1) << 40;
  EXPECT_THROW(kiln::api::empty({big, big}), kiln::Error);
  // Fits int64 elements but not int64 bytes.
  EXPECT_THROW(kiln::api::empty({int64_t(1) << 62}, ScalarType::Float64), kiln::Error);
}

TEST(TensorMetadata, DimOutOfRangeNamesTheOp) {
  Tensor t = kiln::api::zeros({2, 3});
  try {
    t.transpose(0, 5);
    FAIL() << "expected an error";
  } catch (const kiln::IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("transpose"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Dimension out of range"), std::string::npos) << e.what();
  }
}

TEST(TensorMetadata, ItemOfOneElement) {
  EXPECT_DOUBLE_EQ(kiln::api::full({1}, 2.5).item<double>(), 2.5);
  EXPECT_THROW(kiln::api::zeros({2}).item(), kiln::Error);
}
