// Python classes defined in python/kiln/ that C++ creates instances of
// (kiln.Tensor, kiln.Size, kiln.device); registered once by kiln/__init__.py.
#pragma once

#include <Python.h>

#include "runtime/core/array_ref.h"
#include "runtime/core/device.h"

namespace kiln {
namespace python {

// _C._register_classes(tensor=..., size=..., device=...)
PyObject* register_classes(PyObject* module, PyObject* args, PyObject* kwargs);
PyObject* make_size(IntArrayRef sizes);  // kiln.Size (a tuple)
PyObject* make_device(Device d);         // kiln.device

}  // namespace python
}  // namespace kiln
