// The device-neutral rules of the reductions and scans: result dtypes and torch's argument
// errors, checked here once before any backend's loop (the shapes are the reduction plan's).
#pragma once

#include <optional>
#include <vector>

#include "runtime/core/tensor_base.h"

namespace kiln {

// sum, prod, cumsum, cumprod: dtype= when given, else out='s, else int64 for bool and integer
// inputs (torch's accumulating ops), else the input's.
ScalarType accumulating_result_dtype(const TensorBase& self, const std::optional<ScalarType>& dtype,
                                     const TensorBase& out);
// cumsum/cumprod: as accumulating_result_dtype, refusing bool.
ScalarType scan_result_dtype(const TensorBase& self, const std::optional<ScalarType>& dtype, const TensorBase& out,
                             const char* op_name);
// mean: the input (or dtype=) must be floating, and an out= must be able to hold it.
ScalarType mean_result_dtype(const TensorBase& self, const std::optional<ScalarType>& dtype, const TensorBase& out);
// amax/amin: out= has the input's dtype (checked before the dims, as torch); an empty input
// needs named dims.
void check_extremum_args(const TensorBase& self, IntArrayRef dim, const TensorBase& out, const char* op_name);
// amax/amin/argmax...: every reduced dim has elements (IndexError, as torch).
void check_reduced_dims_not_empty(const TensorBase& self, const std::vector<bool>& reduced, const char* op_name);
// argmax/argmin: no bool kernel (an empty tensor reaches the empty-dim check first).
void check_arg_reduce_dtype(const TensorBase& self, const char* op_name);

}  // namespace kiln
