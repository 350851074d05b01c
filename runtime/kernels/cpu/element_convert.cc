#include "runtime/kernels/cpu/element_convert.h"

#include <cstring>
#include <type_traits>

#include "generated/pointwise/_to_copy.h"
#include "runtime/core/convert.h"
#include "runtime/kernels/cpu/fill_run.h"
#include "runtime/kernels/cpu/reduced_float_convert.h"

namespace kiln {
namespace cpu {
namespace {

// One element: the cast formula's functor (schema `_to_copy`), float16 and bfloat16 through float.
template <typename To, typename From>
inline To cast_element(From v) {
  if constexpr (is_reduced_float_v<To> || is_reduced_float_v<From>) {
    return convert<To>(v);
  } else {
    return formulas::_to_copy<From, To>()(v);
  }
}

template <typename To, typename From>
void convert_typed(const char* src, int64_t src_stride, char* dst, int64_t dst_stride, int64_t n) {
  if (src_stride == 0 && dst_stride == sizeof(To)) {
    // one broadcast value (an expanded gradient made contiguous): converted once, then a fill
    fill_serial(reinterpret_cast<To*>(dst), n, cast_element<To>(*reinterpret_cast<const From*>(src)));
  } else if (src_stride == sizeof(From) && dst_stride == sizeof(To)) {
    const From* x = reinterpret_cast<const From*>(src);
    To* o = reinterpret_cast<To*>(dst);
    if constexpr (std::is_same_v<To, From>) {
      std::memcpy(o, x, n * sizeof(To));
    } else if constexpr ((std::is_same_v<To, float> && is_reduced_float_v<From>) ||
                         (is_reduced_float_v<To> && std::is_same_v<From, float>)) {
      convert_run(x, o, n);  // the 16-bit floats' way in and out of float32, vectorized
    } else {
#pragma omp simd  // one conversion per element: the same values in vectors
      for (int64_t i = 0; i < n; ++i) o[i] = cast_element<To>(x[i]);
    }
  } else {
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<To*>(dst + i * dst_stride) = cast_element<To>(*reinterpret_cast<const From*>(src + i * src_stride));
  }
}

}  // namespace

void convert_elements(ScalarType from, const char* src, int64_t src_stride, ScalarType to, char* dst,
                      int64_t dst_stride, int64_t n) {
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(to, "copy_", [&] {
    using To = scalar_t;
    KILN_DISPATCH_ALL_TYPES_AND_REDUCED(from, "copy_", [&] {
      convert_typed<To, scalar_t>(src, src_stride, dst, dst_stride, n);
    });
  });
}

}  // namespace cpu
}  // namespace kiln
