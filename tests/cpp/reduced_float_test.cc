// float16 and bfloat16: bit-level conversions (against the IEEE formats worked by hand),
// type promotion (PyTorch's) and float32 accumulation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "tests/cpp/test_helpers.h"

using kiln::BFloat16;
using kiln::Half;
using kiln::ScalarType;

namespace {
uint16_t half_bits(float f) { return Half(f).x; }
uint16_t bf16_bits(float f) { return BFloat16(f).x; }
float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
}  // namespace

TEST(Half, EveryPatternRoundTripsThroughFloat) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const Half h = Half::from_bits(static_cast<uint16_t>(b));
    const float f = h;
    const bool nan = (b & 0x7C00) == 0x7C00 && (b & 0x3FF) != 0;
    ASSERT_EQ(std::isnan(f), nan) << b;
    if (!nan) ASSERT_EQ(Half(f).x, b) << b;
  }
}

TEST(Half, KnownValues) {
  EXPECT_EQ(half_bits(1.0f), 0x3C00);
  EXPECT_EQ(half_bits(-2.0f), 0xC000);
  EXPECT_EQ(half_bits(65504.0f), 0x7BFF);      // the largest finite half
  EXPECT_EQ(half_bits(65519.0f), 0x7BFF);      // below the halfway point to 65536
  EXPECT_EQ(half_bits(65520.0f), 0x7C00);      // the halfway point rounds to even: infinity
  EXPECT_EQ(half_bits(std::ldexp(1.0f, -24)), 0x0001);      // the smallest subnormal
  EXPECT_EQ(half_bits(std::ldexp(1.0f, -25)), 0x0000);      // half of it: ties to even (0)
  EXPECT_EQ(half_bits(std::ldexp(3.0f, -25)), 0x0002);      // 1.5 steps: ties to even (2)
  EXPECT_EQ(half_bits(std::ldexp(1.0f, -14)), 0x0400);      // the smallest normal
  EXPECT_EQ(half_bits(1.0f + std::ldexp(1.0f, -11)), 0x3C00);  // tie between 1 and 1+2^-10: even
  EXPECT_EQ(half_bits(1.0f + std::ldexp(3.0f, -11)), 0x3C02);  // tie between 1+2^-10 and 1+2^-9: even
  EXPECT_EQ(half_bits(-0.0f), 0x8000);
  EXPECT_EQ(half_bits(INFINITY), 0x7C00);
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(NAN))));
  EXPECT_FLOAT_EQ(static_cast<float>(Half::from_bits(0x3555)), 0.333251953125f);
}

TEST(BFloat16, KnownValues) {
  EXPECT_EQ(bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(bf16_bits(from_bits(0x3F808000)), 0x3F80);  // tie, even stays
  EXPECT_EQ(bf16_bits(from_bits(0x3F818000)), 0x3F82);  // tie, odd rounds up
  EXPECT_EQ(bf16_bits(from_bits(0x3F808001)), 0x3F81);  // above the tie
  EXPECT_EQ(bf16_bits(from_bits(0x7F7FFFFF)), 0x7F80);  // float32's max rounds to infinity
  EXPECT_EQ(bf16_bits(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(from_bits(0x7F800001)))));  // a NaN that would round to inf
  EXPECT_EQ(static_cast<float>(BFloat16::from_bits(0x4049)), 3.140625f);
}

TEST(ReducedFloat, Promotion) {
  const kiln::api::Tensor h = kiln::api::ones({3}, ScalarType::Float16), b = kiln::api::ones({3}, ScalarType::BFloat16);
  EXPECT_EQ(kiln::api::add(h, b).dtype(), ScalarType::Float32);  // neither holds the other
  EXPECT_EQ(kiln::api::add(h, h).dtype(), ScalarType::Float16);
  EXPECT_EQ(kiln::api::add(h, kiln::api::ones({3}, ScalarType::Int64)).dtype(), ScalarType::Float16);
  EXPECT_EQ(kiln::api::add(h, kiln::api::ones({3}, ScalarType::Float32)).dtype(), ScalarType::Float32);
  EXPECT_EQ(kiln::api::add(h, kiln::api::full({}, 2.0, ScalarType::Float64)).dtype(), ScalarType::Float16);  // 0-dim
  EXPECT_EQ(kiln::api::mul(b, 2.5).dtype(), ScalarType::BFloat16);
  EXPECT_EQ(kiln::api::div(kiln::api::ones({3}, ScalarType::Int64), kiln::api::full({}, 2.0, ScalarType::Float16)).dtype(),
            ScalarType::Float16);
}

TEST(ReducedFloat, ArithmeticRoundsOnceFromFloat32) {
  // 2049 is not a half: 2048 + 1 computed in float32 is 2049, rounded once to even: 2048.
  kiln::api::Tensor a = kiln::api::full({1}, 2048.0, ScalarType::Float16);
  EXPECT_EQ(kiln_test::values(kiln::api::add(a, 1.0))[0], 2048.0f);
  EXPECT_EQ(kiln_test::values(kiln::api::add(a, 3.0))[0], 2052.0f);  // 2051: tie, to even (2052)
  // The half nearest 1/3 is 0.333251953125; times 3 in float32 gives 0.999755859375 = 1 - 2^-12,
  // halfway between the halves 1 - 2^-11 and 1: ties to even give 1.
  kiln::api::Tensor third = kiln::api::full({1}, 1.0 / 3.0, ScalarType::Float16);
  EXPECT_EQ(kiln_test::values(kiln::api::mul(third, 3.0))[0], 1.0f);
  EXPECT_EQ(kiln_test::values(kiln::api::mul(third, 5.0))[0], 1.666015625f);  // 1.66625976..: nearest half
}

TEST(ReducedFloat, SumsAccumulateInFloat32) {
  // A half accumulator stops at 2048 (2048 + 1 rounds back to 2048).
  EXPECT_EQ(kiln::api::ones({4096}, ScalarType::Float16).sum().item<double>(), 4096.0);
  EXPECT_EQ(kiln::api::ones({1000}, ScalarType::BFloat16).sum().item<double>(), 1000.0);  // bf16 holds 1000
  EXPECT_EQ(kiln::api::ones({4096}, ScalarType::Float16).sum().dtype(), ScalarType::Float16);
}
