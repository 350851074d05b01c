// The tables of generated bindings (generated/python/bindings.cc): what the module (kiln._C)
// and the tensor type (kiln._C.TensorBase) add to their hand-written functions and methods.
// Hand-written and stable, so adding an op does not recompile the files that include it.
#pragma once

#include <Python.h>

namespace kiln {
namespace python {

extern PyMethodDef generated_functions[];
extern PyMethodDef generated_methods[];

}  // namespace python
}  // namespace kiln
