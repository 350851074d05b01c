// Runs of elements converted from one dtype to another on the CPU: the loop behind copy_ and
// to(dtype), and the chunk-at-a-time conversions of the parallel loop (parallel_loop.h).
#pragma once

#include <cstdint>

#include "runtime/core/dtype.h"

namespace kiln {
namespace cpu {

// dst[i * dst_stride] = src[i * src_stride] as `to`, for i < n (strides in bytes).
void convert_elements(ScalarType from, const char* src, int64_t src_stride, ScalarType to, char* dst,
                      int64_t dst_stride, int64_t n);

}  // namespace cpu
}  // namespace kiln
