// Questions about views that composite ops ask before choosing view or copy.
#pragma once

#include "runtime/core/tensor_base.h"

namespace kiln {

// Whether self.view(shape) would succeed (shape may hold one -1).
bool can_view(const TensorBase& self, IntArrayRef shape);

}  // namespace kiln
