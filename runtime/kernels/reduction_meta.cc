#include "runtime/kernels/reduction_meta.h"

#include "runtime/core/error.h"

namespace kiln {

ScalarType accumulating_result_dtype(const TensorBase& self, const std::optional<ScalarType>& dtype,
                                     const TensorBase& out) {
  if (dtype) return *dtype;
  if (out.defined()) return out.dtype();
  return is_integral_type(self.dtype(), /*include_bool=*/true) ? ScalarType::Int64 : self.dtype();
}

ScalarType scan_result_dtype(const TensorBase& self, const std::optional<ScalarType>& dtype, const TensorBase& out,
                             const char* op_name) {
  const ScalarType result = accumulating_result_dtype(self, dtype, out);
  KILN_CHECK(result != ScalarType::Bool, "\"", op_name, "_out_cpu\" not implemented for 'Bool'");  // (torch has no bool scan)
  return result;
}

ScalarType mean_result_dtype(const TensorBase& self, const std::optional<ScalarType>& dtype, const TensorBase& out) {
  const ScalarType in_dtype = dtype ? *dtype : self.dtype();
  KILN_CHECK(is_floating_type(in_dtype),
             "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
             "Got: ", scalar_type_name(in_dtype));
  KILN_CHECK(!out.defined() || can_cast(in_dtype, out.dtype()), "mean(): result type ", scalar_type_name(in_dtype),
             " can't be cast to the desired output type ", scalar_type_name(out.dtype()));
  return dtype ? *dtype : out.defined() ? out.dtype() : self.dtype();
}

void check_extremum_args(const TensorBase& self, IntArrayRef dim, const TensorBase& out, const char* op_name) {
  KILN_CHECK(!out.defined() || out.dtype() == self.dtype(), "Expected the dtype for input and out to match, but got ",
             scalar_type_name(self.dtype()), " for input's dtype and ", scalar_type_name(out.dtype()),
             " for out's dtype.");
  // An empty input needs named dims (RuntimeError); an empty named dim is an IndexError.
  KILN_CHECK(!dim.empty() || self.numel() != 0, op_name,
             "(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the "
             "'dim' argument.");
}

void check_reduced_dims_not_empty(const TensorBase& self, const std::vector<bool>& reduced, const char* op_name) {
  for (int64_t i = 0; i < self.dim(); ++i)
    KILN_CHECK_INDEX(!reduced[i] || self.sizes()[i] != 0, op_name, "(): Expected reduction dim ", i,
                     " to have non-zero size.");
}

void check_arg_reduce_dtype(const TensorBase& self, const char* op_name) {
  KILN_CHECK(self.dtype() != ScalarType::Bool || self.numel() == 0, "\"", op_name, "_cpu\" not implemented for 'bool'");
}

}  // namespace kiln
