// PyTorch's type promotion, case by case (expected dtypes are PyTorch's).
#include <gtest/gtest.h>

#include "tests/cpp/test_helpers.h"

using kiln::ScalarType;
using kiln::api::Tensor;

namespace {
Tensor ones(ScalarType t) { return kiln::api::ones({3}, t); }
Tensor scalar(double v, ScalarType t) { return kiln::api::full({}, v, t); }
}  // namespace

TEST(TypePromotion, PythonNumbers) {
  EXPECT_EQ(kiln::api::add(ones(ScalarType::Int64), 1.5).dtype(), ScalarType::Float32);
  EXPECT_EQ(kiln::api::mul(ones(ScalarType::Int64), 2).dtype(), ScalarType::Int64);
  EXPECT_EQ(kiln::api::div(ones(ScalarType::Int64), 2).dtype(), ScalarType::Float32);
  EXPECT_EQ(kiln::api::add(ones(ScalarType::Bool), 1).dtype(), ScalarType::Int64);
  EXPECT_EQ(kiln::api::add(ones(ScalarType::Bool), 1.5).dtype(), ScalarType::Float32);
  EXPECT_EQ(kiln::api::pow(ones(ScalarType::Int64), 0.5).dtype(), ScalarType::Float32);
}

TEST(TypePromotion, Tensors) {
  EXPECT_EQ(kiln::api::add(ones(ScalarType::Int32), ones(ScalarType::Int64)).dtype(), ScalarType::Int64);
  EXPECT_EQ(kiln::api::mul(ones(ScalarType::Float32), scalar(2, ScalarType::Float64)).dtype(), ScalarType::Float32);
  EXPECT_EQ(kiln::api::add(ones(ScalarType::Int32), scalar(2, ScalarType::Float64)).dtype(), ScalarType::Float64);
  EXPECT_EQ(kiln::api::add(ones(ScalarType::Int32), scalar(2, ScalarType::Int64)).dtype(), ScalarType::Int32);
}

TEST(TypePromotion, InPlaceKeepsSelfDtype) {
  EXPECT_THROW(ones(ScalarType::Int64).add_(1.5), kiln::Error);
  Tensor f = ones(ScalarType::Float32);
  f.add_(ones(ScalarType::Float64));
  EXPECT_EQ(f.dtype(), ScalarType::Float32);
  EXPECT_EQ(kiln_test::values(f), (std::vector<float>{2, 2, 2}));
}

TEST(TypePromotion, Reductions) {
  EXPECT_EQ(ones(ScalarType::Int32).sum().dtype(), ScalarType::Int64);
  EXPECT_EQ(ones(ScalarType::Int32).sum().item<int64_t>(), 3);
  EXPECT_EQ(ones(ScalarType::Int64).exp().dtype(), ScalarType::Float32);
}
