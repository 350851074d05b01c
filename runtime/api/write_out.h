// out= of a CompositeImplicit op (a schema `family: [out]` on it): the functional op's result
// written into `out` with torch's out= rules, so composite ops get their out= forms from the
// schema alone.
#pragma once

#include "generated/api/tensor.h"

namespace kiln {

// Which out dtypes an op writes: any the result casts to safely, or only the result's own
// (schema `out_dtype: exact`, torch's rule for mm, addmm, mv, dot).
enum class OutDtype { Castable, Exact };

// No autograd through out= (RuntimeError when the result requires grad, as torch), out's dtype
// checked by `rule`, and out resized when its shape differs. The result was computed before out
// is touched, so out may alias an input.
const Tensor& write_out(const Tensor& out, const Tensor& result, const char* op_name,
                        OutDtype rule = OutDtype::Castable);

}  // namespace kiln
