// The argument checks every upsample op shares (torch's upsample_Nd_common_check), forward and
// backward, plain and antialiased.
#pragma once

#include "runtime/core/array_ref.h"
#include "runtime/core/dtype.h"
#include "runtime/core/error.h"
#include "runtime/core/tensor_base.h"

namespace kiln {
namespace cpu {
namespace upsample {

// torch's upsample_Nd_common_check: sizes of the right lengths, every input and output
// spatial size positive.
inline void check_sizes(const char* op, size_t d, IntArrayRef output_size, IntArrayRef input_size) {
  KILN_CHECK(output_size.size() == d, op, "(): It is expected output_size equals to ", d, ", but got size ",
             output_size.size());
  KILN_CHECK(input_size.size() == d + 2, op, "(): It is expected input_size equals to ", d + 2, ", but got size ",
             input_size.size());
  bool ok = true;
  for (size_t i = 0; i < d; ++i) ok = ok && input_size[i + 2] > 0 && output_size[i] > 0;
  KILN_CHECK(ok, op, "(): Input and output sizes should be greater than 0, but got input spatial sizes ",
             shape_str(IntArrayRef(input_size.data() + 2, d)), " and output_size ", shape_str(output_size));
}

// `uint8_ok`: nearest modes, which also take uint8 input.
inline void check_input(const char* op, size_t d, const TensorBase& self, IntArrayRef output_size,
                        bool uint8_ok = false) {
  KILN_CHECK(self.dim() == static_cast<int64_t>(d + 2), op, "(): Non-empty ", d + 2,
             "D data tensor expected but got a tensor with sizes ", shape_str(self.sizes()));
  check_sizes(op, d, output_size, self.sizes());
  // an empty batch is fine, no channels is not (torch's check, after the sizes')
  int64_t per_sample = 1;
  for (size_t i = 1; i < d + 2; ++i) per_sample *= self.sizes()[i];
  KILN_CHECK(per_sample != 0, op, "(): Non-empty ", d + 2, "D data tensor expected but got a tensor with sizes ",
             shape_str(self.sizes()));
  KILN_CHECK(is_floating_type(self.dtype()) || (uint8_ok && self.dtype() == ScalarType::UInt8), op, "(): \"", op,
             "\" not implemented for '", scalar_type_name(self.dtype()), "'");
}

// A backward op's grad_output: floating, the output's shape (N and C of input_size).
inline void check_grad_output(const char* op, size_t d, const TensorBase& grad_output, IntArrayRef output_size,
                              IntArrayRef input_size) {
  check_sizes(op, d, output_size, input_size);
  KILN_CHECK(is_floating_type(grad_output.dtype()), op, "(): \"", op, "\" not implemented for '",
             scalar_type_name(grad_output.dtype()), "'");
  KILN_CHECK(grad_output.dim() == static_cast<int64_t>(d + 2), op, "(): Expected grad_output to be a tensor of dimension ",
             d + 2, " but got: dimension ", grad_output.dim());
  for (size_t i = 0; i < d + 2; ++i) {
    const int64_t want = i < 2 ? input_size[i] : output_size[i - 2];
    KILN_CHECK(grad_output.sizes()[i] == want, op, "(): Expected grad_output to have the same shape as output; output.size(",
               i, ") = ", want, " but got grad_output.size(", i, ") = ", grad_output.sizes()[i]);
  }
}

}  // namespace upsample
}  // namespace cpu
}  // namespace kiln
