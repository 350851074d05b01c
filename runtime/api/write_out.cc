#include "runtime/api/write_out.h"

#include "generated/api/copy.h"
#include "runtime/dispatch/grad_mode.h"
#include "runtime/core/error.h"
#include "runtime/core/warning.h"

namespace kiln {

const Tensor& write_out(const Tensor& out, const Tensor& result, const char* op_name, OutDtype rule) {
  KILN_CHECK(!result.requires_grad() && !out.requires_grad(), op_name,
             "(): functions with out=... arguments don't support automatic differentiation, but one of the "
             "arguments requires grad.");
  KILN_CHECK(rule == OutDtype::Castable || out.dtype() == result.dtype(), op_name,
             "(): Expected out tensor to have dtype ", scalar_type_name(result.dtype()), ", but got ",
             scalar_type_name(out.dtype()), " instead");
  KILN_CHECK(can_cast(result.dtype(), out.dtype()), op_name, "(): result type ", scalar_type_name(result.dtype()),
             " can't be cast to the desired output type ", scalar_type_name(out.dtype()));
  warn_if_out_resized(out.sizes(), result.sizes());
  if (!(out.sizes() == result.sizes())) out.impl()->set_sizes_contiguous(result.sizes());
  NoGradGuard no_grad;
  out.copy_(result);
  return out;
}

}  // namespace kiln
