// Tensor.tolist(): nested Python lists of the elements (a Python number for a 0-dim tensor), built
// straight from the tensor's memory: the NumPy round trip it replaces cost microseconds a call.
#pragma once

#include <Python.h>

namespace kiln {
namespace python {

PyObject* m_tolist(PyObject* self, PyObject* unused);

}  // namespace python
}  // namespace kiln
