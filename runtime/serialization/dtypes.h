// The one table of safetensors dtype codes: what each is called in a header, its size, and
// the kiln dtype it loads as. Supporting a new kiln dtype (float16, bfloat16) is one edit of
// its row in dtypes.cc.
#pragma once

#include <string>
#include <string_view>

#include "runtime/core/dtype.h"

namespace kiln {
namespace serialization {

struct DtypeInfo {
  const char* code;      // as written in the header: "F32"
  int bits;              // per element (F4 and F6 are smaller than a byte)
  ScalarType kiln_type;  // Undefined: a dtype of the format that kiln cannot hold yet
};

// nullptr when `code` is not a safetensors dtype at all.
const DtypeInfo* find_dtype(std::string_view code);
// nullptr when kiln's dtype has no safetensors code.
const DtypeInfo* dtype_for(ScalarType t);
// Position in the reference library's `Dtype` enum: its writer lays tensors out by it.
int dtype_rank(const DtypeInfo* d);
// "BOOL, I32, F32, F64, I64": the codes kiln loads, for messages.
std::string supported_dtype_codes();

}  // namespace serialization
}  // namespace kiln
