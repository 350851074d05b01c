// kiln.from_numpy: a tensor sharing a NumPy array's memory (read through the
// buffer protocol, so no NumPy headers are needed). Tensor -> NumPy goes the other
// way through Tensor.__array_interface__ (tensor_object.cc).
#pragma once

#include <Python.h>

#include "generated/api/tensor.h"

namespace kiln {
namespace python {

Tensor tensor_from_numpy(PyObject* array);

}  // namespace python
}  // namespace kiln
