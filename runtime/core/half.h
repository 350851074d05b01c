// The two 16-bit floating types, as storage formats: kernels read them into float,
// compute in float, and round the result back once (round to nearest even).
//
// Half is IEEE binary16 (5 exponent bits, 10 mantissa bits, max 65504); BFloat16 is
// the top half of a float32 (8 exponent bits, 7 mantissa bits, float32's range).
// Both convert implicitly to and from float, so a kernel template instantiated with
// them computes in float without further changes (`+=` rounds after each addition:
// accumulating kernels sum in float32 instead, see opmath_type).
#pragma once

#include <cstdint>
#include <cstring>

namespace kiln {

namespace detail {
inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  if (exp == 0x1F) return bits_float(sign | 0x7F800000 | (man << 13));  // inf, NaN (payload kept)
  if (exp != 0) return bits_float(sign | ((exp + 112) << 23) | (man << 13));
  // Zero or subnormal: man * 2^-24, exact in float.
  const float mag = static_cast<float>(man) * bits_float(0x33800000);  // 2^-24
  return sign ? -mag : mag;
}

inline uint16_t float_to_half_bits(float f) {
  const uint32_t u = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  const uint32_t abs = u & 0x7FFFFFFF;
  if (abs > 0x7F800000) return sign | 0x7E00 | static_cast<uint16_t>((abs >> 13) & 0x3FF);  // NaN stays NaN
  if (abs >= 0x477FF000) return sign | 0x7C00;  // rounds to >= 65520: infinity
  if (abs < 0x38800000) {
    // Below half's smallest normal (2^-14): subnormal steps of 2^-24. Adding 0.5 lets the
    // float adder do the round-to-nearest-even; the result's low mantissa bits are the half.
    const float rounded = bits_float(abs) + 0.5f;
    return sign | static_cast<uint16_t>(float_bits(rounded) - 0x3F000000);
  }
  // Normal: rebias the exponent (127 -> 15) and round away 13 mantissa bits, ties to even.
  const uint32_t odd = (abs >> 13) & 1;
  return sign | static_cast<uint16_t>((abs - (112u << 23) + 0xFFF + odd) >> 13);
}

// Branch-free (a select), so loops of it vectorize (reduced_float_convert.cc).
inline uint16_t float_to_bfloat16_bits(float f) {
  const uint32_t u = float_bits(f);
  const uint16_t quiet_nan = static_cast<uint16_t>((u >> 16) | 0x40);
  const uint16_t rounded = static_cast<uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16);  // ties to even
  return (u & 0x7FFFFFFF) > 0x7F800000 ? quiet_nan : rounded;
}
}  // namespace detail

struct Half {
  uint16_t x;
  Half() = default;
  Half(float f) : x(detail::float_to_half_bits(f)) {}
  operator float() const { return detail::half_bits_to_float(x); }
  Half& operator+=(float v) { return *this = Half(float(*this) + v); }
  static Half from_bits(uint16_t bits) {
    Half h;
    h.x = bits;
    return h;
  }
};

struct BFloat16 {
  uint16_t x;
  BFloat16() = default;
  BFloat16(float f) : x(detail::float_to_bfloat16_bits(f)) {}
  operator float() const { return detail::bits_float(static_cast<uint32_t>(x) << 16); }
  BFloat16& operator+=(float v) { return *this = BFloat16(float(*this) + v); }
  static BFloat16 from_bits(uint16_t bits) {
    BFloat16 b;
    b.x = bits;
    return b;
  }
};

}  // namespace kiln
