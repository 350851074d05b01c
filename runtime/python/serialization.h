// kiln._C's safetensors functions (runtime/serialization/), used by python/kiln/serialization.py.
#pragma once

#include <Python.h>

namespace kiln {
namespace python {

// Null-terminated; module.cc adds them to kiln._C.
extern PyMethodDef serialization_functions[];

}  // namespace python
}  // namespace kiln
