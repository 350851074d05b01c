#include "runtime/kernels/scalar_convert.h"

namespace kiln {

void check_scalar_fits(const Scalar& value, ScalarType dtype, const char* op_name) {
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(dtype, op_name, [&] { checked_convert<scalar_t>(value, op_name); });
}

}  // namespace kiln
