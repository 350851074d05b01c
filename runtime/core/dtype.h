// Scalar types (dtypes) and PyTorch's type-promotion lattice.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/core/half.h"

namespace kiln {

// In the order of the promotion lattice (promote_types): bool, then the integers by width (uint8 and
// int8 side by side: neither holds the other, both fit in int16), then the floats.
enum class ScalarType : int8_t {
  Bool = 0,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Undefined,
};
constexpr int kNumScalarTypes = 10;

inline constexpr int64_t element_size(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return 1;
    case ScalarType::UInt8: return 1;
    case ScalarType::Int8: return 1;
    case ScalarType::Int16: return 2;
    case ScalarType::Int32: return 4;
    case ScalarType::Int64: return 8;
    case ScalarType::Float16: return 2;
    case ScalarType::BFloat16: return 2;
    case ScalarType::Float32: return 4;
    case ScalarType::Float64: return 8;
    default: return 0;
  }
}

inline constexpr bool is_reduced_floating_type(ScalarType t) {
  return t == ScalarType::Float16 || t == ScalarType::BFloat16;
}
inline constexpr bool is_floating_type(ScalarType t) {
  return t == ScalarType::Float32 || t == ScalarType::Float64 || is_reduced_floating_type(t);
}
// The type kernels compute in: float32 for the 16-bit floats (which are storage formats
// only, rounded once when the result is written), the type itself otherwise.
inline constexpr ScalarType opmath_type(ScalarType t) {
  return is_reduced_floating_type(t) ? ScalarType::Float32 : t;
}
inline constexpr bool is_integral_type(ScalarType t, bool include_bool) {
  return (t >= ScalarType::UInt8 && t <= ScalarType::Int64) || (include_bool && t == ScalarType::Bool);
}
// The largest and smallest values of an integer type (bool: 1 and 0; other types: 0).
inline constexpr int64_t integer_type_max(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return 1;
    case ScalarType::UInt8: return 255;
    case ScalarType::Int8: return 127;
    case ScalarType::Int16: return 32767;
    case ScalarType::Int32: return 2147483647;
    case ScalarType::Int64: return 9223372036854775807;
    default: return 0;
  }
}
inline constexpr int64_t integer_type_min(ScalarType t) {
  switch (t) {
    case ScalarType::Int8: return -128;
    case ScalarType::Int16: return -32768;
    case ScalarType::Int32: return -2147483647 - 1;
    case ScalarType::Int64: return -9223372036854775807 - 1;
    default: return 0;
  }
}
// The integer types an index tensor may have (index_select, index_add, ...): int32 and int64.
inline constexpr bool is_index_type(ScalarType t) { return t == ScalarType::Int32 || t == ScalarType::Int64; }

// "float32" etc., as in kiln.float32 / torch.float32.
const char* scalar_type_name(ScalarType t);

// The smallest type both a and b convert to without losing their category
// (bool < integer < floating); Undefined is skipped. float16 with bfloat16 gives float32.
ScalarType promote_types(ScalarType a, ScalarType b);

// Whether a result of type `from` may be written into a tensor of type `to`
// (no float -> int, no int -> bool), as PyTorch's canCast.
bool can_cast(ScalarType from, ScalarType to);

// The dtype used for floating results of integer inputs (torch.get_default_dtype()).
ScalarType default_dtype();
void set_default_dtype(ScalarType t);

// KILN_DISPATCH_*(dtype, op_name, lambda) calls the lambda with `scalar_t` the C++
// type of `dtype`, for the dtypes the macro's name lists; others throw a TypeError.
#define KILN_DTYPE_CASE(enum_value, ctype, ...) \
  case ::kiln::ScalarType::enum_value: {        \
    using scalar_t = ctype;                     \
    return __VA_ARGS__();                       \
  }

#define KILN_INTEGER_CASES(...)                       \
  KILN_DTYPE_CASE(UInt8, uint8_t, __VA_ARGS__)        \
  KILN_DTYPE_CASE(Int8, int8_t, __VA_ARGS__)          \
  KILN_DTYPE_CASE(Int16, int16_t, __VA_ARGS__)        \
  KILN_DTYPE_CASE(Int32, int32_t, __VA_ARGS__)        \
  KILN_DTYPE_CASE(Int64, int64_t, __VA_ARGS__)
#define KILN_FLOATING_CASES(...)                      \
  KILN_DTYPE_CASE(Float32, float, __VA_ARGS__)        \
  KILN_DTYPE_CASE(Float64, double, __VA_ARGS__)
#define KILN_REDUCED_FLOATING_CASES(...)              \
  KILN_DTYPE_CASE(Float16, ::kiln::Half, __VA_ARGS__) \
  KILN_DTYPE_CASE(BFloat16, ::kiln::BFloat16, __VA_ARGS__)

// The RuntimeError (torch's class) of a dispatch: "<op>: unsupported dtype <t>", or with `not_implemented`
// torch's "<op>: not implemented for '<t>'".
[[noreturn]] void throw_unsupported_dtype(const std::string& op_name, ScalarType t, bool not_implemented);

#define KILN_DISPATCH_SWITCH(dtype, op_name, not_implemented, CASES)      \
  [&] {                                                                   \
    switch (dtype) {                                                      \
      CASES                                                               \
      default:                                                            \
        ::kiln::throw_unsupported_dtype(op_name, dtype, not_implemented); \
    }                                                                     \
  }()

#define KILN_DISPATCH_ALL_TYPES(dtype, op_name, ...)                                            \
  KILN_DISPATCH_SWITCH(dtype, op_name, false,                                                   \
                       KILN_DTYPE_CASE(Bool, bool, __VA_ARGS__) KILN_INTEGER_CASES(__VA_ARGS__) \
                           KILN_FLOATING_CASES(__VA_ARGS__))
#define KILN_DISPATCH_NUMERIC_TYPES(dtype, op_name, ...)                                        \
  KILN_DISPATCH_SWITCH(dtype, op_name, true, KILN_INTEGER_CASES(__VA_ARGS__) KILN_FLOATING_CASES(__VA_ARGS__))
#define KILN_DISPATCH_FLOATING_TYPES(dtype, op_name, ...)                                       \
  KILN_DISPATCH_SWITCH(dtype, op_name, true, KILN_FLOATING_CASES(__VA_ARGS__))
#define KILN_DISPATCH_INTEGRAL_TYPES(dtype, op_name, ...)                                       \
  KILN_DISPATCH_SWITCH(dtype, op_name, true, KILN_DTYPE_CASE(Bool, bool, __VA_ARGS__) KILN_INTEGER_CASES(__VA_ARGS__))

// The same plus float16 and bfloat16, for kernels that only move, compare or convert
// elements (copies, gathers, sorts, fills): their arithmetic-free bodies work on the
// 16-bit types directly. Arithmetic goes through float32 instead (opmath_type).
#define KILN_DISPATCH_ALL_TYPES_AND_REDUCED(dtype, op_name, ...)                                \
  KILN_DISPATCH_SWITCH(dtype, op_name, false,                                                   \
                       KILN_DTYPE_CASE(Bool, bool, __VA_ARGS__) KILN_INTEGER_CASES(__VA_ARGS__) \
                           KILN_FLOATING_CASES(__VA_ARGS__) KILN_REDUCED_FLOATING_CASES(__VA_ARGS__))
#define KILN_DISPATCH_NUMERIC_TYPES_AND_REDUCED(dtype, op_name, ...)                            \
  KILN_DISPATCH_SWITCH(dtype, op_name, true,                                                    \
                       KILN_INTEGER_CASES(__VA_ARGS__) KILN_FLOATING_CASES(__VA_ARGS__)         \
                           KILN_REDUCED_FLOATING_CASES(__VA_ARGS__))
#define KILN_DISPATCH_FLOATING_TYPES_AND_REDUCED(dtype, op_name, ...)                           \
  KILN_DISPATCH_SWITCH(dtype, op_name, true,                                                    \
                       KILN_FLOATING_CASES(__VA_ARGS__) KILN_REDUCED_FLOATING_CASES(__VA_ARGS__))

template <typename T>
struct CppTypeToScalarType;
template <> struct CppTypeToScalarType<bool> { static constexpr ScalarType value = ScalarType::Bool; };
template <> struct CppTypeToScalarType<uint8_t> { static constexpr ScalarType value = ScalarType::UInt8; };
template <> struct CppTypeToScalarType<int8_t> { static constexpr ScalarType value = ScalarType::Int8; };
template <> struct CppTypeToScalarType<int16_t> { static constexpr ScalarType value = ScalarType::Int16; };
template <> struct CppTypeToScalarType<int32_t> { static constexpr ScalarType value = ScalarType::Int32; };
template <> struct CppTypeToScalarType<int64_t> { static constexpr ScalarType value = ScalarType::Int64; };
template <> struct CppTypeToScalarType<Half> { static constexpr ScalarType value = ScalarType::Float16; };
template <> struct CppTypeToScalarType<BFloat16> { static constexpr ScalarType value = ScalarType::BFloat16; };
template <> struct CppTypeToScalarType<float> { static constexpr ScalarType value = ScalarType::Float32; };
template <> struct CppTypeToScalarType<double> { static constexpr ScalarType value = ScalarType::Float64; };

}  // namespace kiln
