// kiln._C functions over the pointwise formula table (runtime/jit/formula.h), for tests and tools:
//   _pointwise_formulas() -> [(op, schema overload name, formula text, tensor args, Scalar args, dtypes), ...]
//   _evaluate_formula(op, [tensors], [numbers]) -> the formula interpreted element by element
// and over the instruction set their vectorized CPU kernels run (runtime/kernels/cpu/vector_dispatch.h):
//   _simd_target() -> "AVX3", "AVX2", "SSE4", or "SCALAR"/"EMU128" (the baseline: scalar functors)
//   _simd_targets() -> every compiled target this CPU supports, best first
//   _simd_use_target(name) -> run the vector kernels on that target ("" or None: the best again)
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
PyObject* py_simd_target(PyObject* module, PyObject* unused);
PyObject* py_simd_targets(PyObject* module, PyObject* unused);
PyObject* py_simd_use_target(PyObject* module, PyObject* name);
// _torch_kernels_use_fma() -> whether torch's CPU kernels fuse `a * b + c` on this CPU
PyObject* py_torch_kernels_use_fma(PyObject* module, PyObject* unused);

}  // namespace python
}  // namespace kiln
