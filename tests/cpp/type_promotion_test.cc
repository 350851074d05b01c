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

TEST(TypePromotion, SmallIntegers) {
  // torch.promote_types: uint8 and int8 meet in int16; each narrow type yields to a wider one.
  EXPECT_EQ(kiln::promote_types(ScalarType::UInt8, ScalarType::Int8), ScalarType::Int16);
  EXPECT_EQ(kiln::promote_types(ScalarType::Int8, ScalarType::UInt8), ScalarType::Int16);
  EXPECT_EQ(kiln::promote_types(ScalarType::UInt8, ScalarType::Int16), ScalarType::Int16);
  EXPECT_EQ(kiln::promote_types(ScalarType::Bool, ScalarType::UInt8), ScalarType::UInt8);
  EXPECT_EQ(kiln::promote_types(ScalarType::Int16, ScalarType::Int32), ScalarType::Int32);
  EXPECT_EQ(kiln::promote_types(ScalarType::UInt8, ScalarType::Float16), ScalarType::Float16);
  EXPECT_EQ(kiln::api::add(ones(ScalarType::UInt8), ones(ScalarType::Int8)).dtype(), ScalarType::Int16);
  EXPECT_EQ(kiln::api::add(ones(ScalarType::UInt8), 300).dtype(), ScalarType::UInt8);
  EXPECT_EQ(kiln::api::add(ones(ScalarType::Int8), scalar(2, ScalarType::Int64)).dtype(), ScalarType::Int8);
  EXPECT_EQ(ones(ScalarType::UInt8).sum().dtype(), ScalarType::Int64);
}

TEST(TypePromotion, SmallIntegersWrapAndConvertAsTorch) {
  // uint8 255 + 1 wraps to 0; floats convert through int32 and keep the low bits (-1.0 -> 255).
  EXPECT_EQ(kiln::api::add(kiln::api::full({}, 255, ScalarType::UInt8), 1).item<int64_t>(), 0);
  EXPECT_EQ(kiln::api::full({}, -1.0, ScalarType::Float32).to(ScalarType::UInt8).item<int64_t>(), 255);
  EXPECT_EQ(kiln::api::full({}, 300.0, ScalarType::Float64).to(ScalarType::Int8).item<int64_t>(), 44);
  EXPECT_EQ(kiln::api::full({}, 1e10, ScalarType::Float32).to(ScalarType::Int16).item<int64_t>(), 0);
  EXPECT_EQ(kiln::api::full({}, -128, ScalarType::Int8).neg().item<int64_t>(), -128);
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
