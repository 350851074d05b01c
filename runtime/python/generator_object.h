// kiln.Generator: the Python object of a kiln::Generator (runtime/core/generator.h), and
// kiln.default_generator, the process-wide one. A Python Generator shares ownership of its
// C++ generator, so an op may keep drawing from it while the GIL is released.
#pragma once

#include <Python.h>

#include "runtime/core/generator.h"

namespace kiln {
namespace python {

extern PyTypeObject GeneratorType;

inline bool is_generator(PyObject* obj) { return PyObject_TypeCheck(obj, &GeneratorType); }
// The C++ generator of a kiln.Generator (is_generator(obj) must hold).
Generator* unpack_generator(PyObject* obj);
// Adds Generator and default_generator to the module.
bool add_generator_type(PyObject* module);

}  // namespace python
}  // namespace kiln
