// Scalar types (dtypes) and PyTorch's type-promotion lattice.
#pragma once

#include <cstdint>
#include <string>

namespace kiln {

enum class ScalarType : int8_t {
  Bool = 0,
  Int32,
  Int64,
  Float32,
  Float64,
  Undefined,
};
constexpr int kNumScalarTypes = 5;

inline constexpr int64_t element_size(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return 1;
    case ScalarType::Int32: return 4;
    case ScalarType::Int64: return 8;
    case ScalarType::Float32: return 4;
    case ScalarType::Float64: return 8;
    default: return 0;
  }
}

inline constexpr bool is_floating_type(ScalarType t) {
  return t == ScalarType::Float32 || t == ScalarType::Float64;
}
inline constexpr bool is_integral_type(ScalarType t, bool include_bool) {
  return t == ScalarType::Int32 || t == ScalarType::Int64 || (include_bool && t == ScalarType::Bool);
}

// "float32" etc., as in kiln.float32 / torch.float32.
const char* scalar_type_name(ScalarType t);

// The smallest type both a and b convert to without losing their category
// (bool < integer < floating); Undefined is skipped.
ScalarType promote_types(ScalarType a, ScalarType b);

// Whether a result of type `from` may be written into a tensor of type `to`
// (no float -> int, no int -> bool), as PyTorch's canCast.
bool can_cast(ScalarType from, ScalarType to);

// The dtype used for floating results of integer inputs (torch.get_default_dtype()).
ScalarType default_dtype();
void set_default_dtype(ScalarType t);

// Calls f.template operator()<T>() with T the C++ type of `t`.
#define KILN_DTYPE_CASE(enum_value, ctype, ...) \
  case ::kiln::ScalarType::enum_value: {        \
    using scalar_t = ctype;                     \
    return __VA_ARGS__();                       \
  }

#define KILN_DISPATCH_ALL_TYPES(dtype, op_name, ...)                                   \
  [&] {                                                                                \
    switch (dtype) {                                                                   \
      KILN_DTYPE_CASE(Bool, bool, __VA_ARGS__)                                         \
      KILN_DTYPE_CASE(Int32, int32_t, __VA_ARGS__)                                     \
      KILN_DTYPE_CASE(Int64, int64_t, __VA_ARGS__)                                     \
      KILN_DTYPE_CASE(Float32, float, __VA_ARGS__)                                     \
      KILN_DTYPE_CASE(Float64, double, __VA_ARGS__)                                    \
      default:                                                                         \
        throw ::kiln::TypeError(std::string(op_name) + ": unsupported dtype " +         \
                                ::kiln::scalar_type_name(dtype));                      \
    }                                                                                  \
  }()

#define KILN_DISPATCH_NUMERIC_TYPES(dtype, op_name, ...)                               \
  [&] {                                                                                \
    switch (dtype) {                                                                   \
      KILN_DTYPE_CASE(Int32, int32_t, __VA_ARGS__)                                     \
      KILN_DTYPE_CASE(Int64, int64_t, __VA_ARGS__)                                     \
      KILN_DTYPE_CASE(Float32, float, __VA_ARGS__)                                     \
      KILN_DTYPE_CASE(Float64, double, __VA_ARGS__)                                    \
      default:                                                                         \
        throw ::kiln::TypeError(std::string(op_name) + ": not implemented for '" +      \
                                ::kiln::scalar_type_name(dtype) + "'");                \
    }                                                                                  \
  }()

#define KILN_DISPATCH_FLOATING_TYPES(dtype, op_name, ...)                              \
  [&] {                                                                                \
    switch (dtype) {                                                                   \
      KILN_DTYPE_CASE(Float32, float, __VA_ARGS__)                                     \
      KILN_DTYPE_CASE(Float64, double, __VA_ARGS__)                                    \
      default:                                                                         \
        throw ::kiln::TypeError(std::string(op_name) + ": not implemented for '" +      \
                                ::kiln::scalar_type_name(dtype) + "'");                \
    }                                                                                  \
  }()

template <typename T>
struct CppTypeToScalarType;
template <> struct CppTypeToScalarType<bool> { static constexpr ScalarType value = ScalarType::Bool; };
template <> struct CppTypeToScalarType<int32_t> { static constexpr ScalarType value = ScalarType::Int32; };
template <> struct CppTypeToScalarType<int64_t> { static constexpr ScalarType value = ScalarType::Int64; };
template <> struct CppTypeToScalarType<float> { static constexpr ScalarType value = ScalarType::Float32; };
template <> struct CppTypeToScalarType<double> { static constexpr ScalarType value = ScalarType::Float64; };

}  // namespace kiln
