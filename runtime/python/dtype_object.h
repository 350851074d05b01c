// kiln.float32 and friends: one immortal Python object per dtype.
#pragma once

#include <Python.h>

#include "runtime/core/dtype.h"

namespace kiln {
namespace python {

bool is_dtype(PyObject* obj);
ScalarType dtype_value(PyObject* obj);
PyObject* dtype_object(ScalarType t);  // borrowed
// Adds the dtype type and the objects (float32, float, int64, long, ...) to the module.
bool add_dtypes(PyObject* module);

}  // namespace python
}  // namespace kiln
