// kiln._C functions over the pointwise formula table (runtime/jit/formula.h), for tests and tools:
//   _pointwise_formulas() -> [(op, schema overload name, formula text, tensor args, Scalar args, dtypes), ...]
//   _evaluate_formula(op, [tensors], [numbers]) -> the formula interpreted element by element
#pragma once

#include <Python.h>

namespace kiln {
namespace python {

PyObject* py_pointwise_formulas(PyObject* module, PyObject* unused);
PyObject* py_evaluate_formula(PyObject* module, PyObject* args);
// _pointwise_derivatives() -> [(op, input, formula text), ...]
PyObject* py_pointwise_derivatives(PyObject* module, PyObject* unused);
// _evaluate_derivative(op, input, [grad, result, op's tensors...], [numbers])
PyObject* py_evaluate_derivative(PyObject* module, PyObject* args);

}  // namespace python
}  // namespace kiln
