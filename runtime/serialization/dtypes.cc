#include "runtime/serialization/dtypes.h"

namespace kiln {
namespace serialization {
namespace {

constexpr ScalarType kNone = ScalarType::Undefined;

// In the order of the reference library's `Dtype` enum (safetensors/src/tensor.rs): its writer
// lays tensors out by descending position, and kiln writes the same bytes.
constexpr DtypeInfo kDtypes[] = {
    {"BOOL", 8, ScalarType::Bool},
    {"F4", 4, kNone},
    {"F6_E2M3", 6, kNone},
    {"F6_E3M2", 6, kNone},
    {"U8", 8, ScalarType::UInt8},
    {"I8", 8, ScalarType::Int8},
    {"F8_E5M2", 8, kNone},
    {"F8_E4M3", 8, kNone},
    {"F8_E8M0", 8, kNone},
    {"F8_E4M3FNUZ", 8, kNone},
    {"F8_E5M2FNUZ", 8, kNone},
    {"I16", 16, ScalarType::Int16},
    {"U16", 16, kNone},
    {"F16", 16, ScalarType::Float16},
    {"BF16", 16, ScalarType::BFloat16},
    {"I32", 32, ScalarType::Int32},
    {"U32", 32, kNone},
    {"F32", 32, ScalarType::Float32},
    {"C64", 64, kNone},
    {"F64", 64, ScalarType::Float64},
    {"I64", 64, ScalarType::Int64},
    {"U64", 64, kNone},
};

}  // namespace

const DtypeInfo* find_dtype(std::string_view code) {
  for (const DtypeInfo& d : kDtypes)
    if (code == d.code) return &d;
  return nullptr;
}

int dtype_rank(const DtypeInfo* d) { return static_cast<int>(d - kDtypes); }

const DtypeInfo* dtype_for(ScalarType t) {
  for (const DtypeInfo& d : kDtypes)
    if (d.kiln_type == t && t != kNone) return &d;
  return nullptr;
}

std::string supported_dtype_codes() {
  std::string s;
  for (const DtypeInfo& d : kDtypes)
    if (d.kiln_type != kNone) s += (s.empty() ? "" : ", ") + std::string(d.code);
  return s;
}

}  // namespace serialization
}  // namespace kiln
