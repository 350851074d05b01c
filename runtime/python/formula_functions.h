// kiln._C functions over the pointwise formula table (runtime/jit/formula.h), for tests and tools:
//   _pointwise_formulas() -> [(op, schema overload name, formula text, tensor args, Scalar args), ...]
//   _evaluate_formula(op, [tensors], [numbers]) -> the formula interpreted element by element
#pragma once

#include <Python.h>

namespace kiln {
namespace python {

PyObject* py_pointwise_formulas(PyObject* module, PyObject* unused);
PyObject* py_evaluate_formula(PyObject* module, PyObject* args);

}  // namespace python
}  // namespace kiln
