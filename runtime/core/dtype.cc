#include "runtime/core/dtype.h"

#include "runtime/core/error.h"

namespace kiln {

const char* scalar_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "bool";
    case ScalarType::UInt8: return "uint8";
    case ScalarType::Int8: return "int8";
    case ScalarType::Int16: return "int16";
    case ScalarType::Int32: return "int32";
    case ScalarType::Int64: return "int64";
    case ScalarType::Float16: return "float16";
    case ScalarType::BFloat16: return "bfloat16";
    case ScalarType::Float32: return "float32";
    case ScalarType::Float64: return "float64";
    default: return "undefined";
  }
}

void throw_unsupported_dtype(const std::string& op_name, ScalarType t, bool not_implemented) {
  if (not_implemented) throw Error(op_name + ": not implemented for '" + scalar_type_name(t) + "'");
  throw Error(op_name + ": unsupported dtype " + scalar_type_name(t));
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == ScalarType::Undefined) return b;
  if (b == ScalarType::Undefined) return a;
  // The enum is ordered along the lattice, a chain except for two pairs neither of which holds
  // the other: uint8 and int8 (int16 holds both), and the two 16-bit floats (float32 holds both).
  if (is_reduced_floating_type(a) && is_reduced_floating_type(b) && a != b) return ScalarType::Float32;
  const bool small_ints = (a == ScalarType::UInt8 || a == ScalarType::Int8) && (b == ScalarType::UInt8 || b == ScalarType::Int8);
  if (small_ints && a != b) return ScalarType::Int16;
  return static_cast<int>(a) >= static_cast<int>(b) ? a : b;
}

bool can_cast(ScalarType from, ScalarType to) {
  if (is_floating_type(from) && is_integral_type(to, /*include_bool=*/true)) return false;
  if (from != ScalarType::Bool && to == ScalarType::Bool) return false;
  return true;
}

static ScalarType g_default_dtype = ScalarType::Float32;
ScalarType default_dtype() { return g_default_dtype; }
void set_default_dtype(ScalarType t) {
  KILN_CHECK_TYPE(is_floating_type(t), "set_default_dtype(): only floating-point types are supported as the default type, got ",
                  scalar_type_name(t));
  g_default_dtype = t;
}

}  // namespace kiln
