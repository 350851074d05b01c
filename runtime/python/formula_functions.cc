#include "runtime/python/formula_functions.h"

#include <optional>
#include <string>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/jit/formula.h"
#include "runtime/jit/formula_eval.h"
#include "runtime/kernels/cpu/vector_dispatch.h"
#include "runtime/python/arg_parser.h"
#include "runtime/python/dtype_object.h"
#include "runtime/python/tensor_object.h"

namespace kiln {
namespace python {

PyObject* py_pointwise_formulas(PyObject*, PyObject*) {
  PyObject* list = PyList_New(jit::kNumPointwiseFormulas);
  if (!list) return nullptr;
  for (int i = 0; i < jit::kNumPointwiseFormulas; ++i) {
    const jit::PointwiseFormula& f = jit::kPointwiseFormulas[i];
    PyObject* tensors = PyTuple_New(f.nargs);
    PyObject* scalars = PyTuple_New(f.nscalars);
    if (!tensors || !scalars) {
      Py_XDECREF(tensors);
      Py_XDECREF(scalars);
      Py_DECREF(list);
      return nullptr;
    }
    for (int k = 0; k < f.nargs; ++k) PyTuple_SET_ITEM(tensors, k, PyUnicode_FromString(f.args[k]));
    for (int k = 0; k < f.nscalars; ++k) PyTuple_SET_ITEM(scalars, k, PyUnicode_FromString(f.scalars[k]));
    static const char* const kDtypes[] = {"floating", "numeric", "all", "integral"};
    PyObject* item = Py_BuildValue("(sssNNss)", f.op, f.overload, f.text, tensors, scalars,
                                   kDtypes[static_cast<int>(f.dtypes)], f.functor);
    if (!item) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, item);
  }
  return list;
}

namespace {

// The formula (or, with `input`, the derivative row) evaluated on tensors and numbers.
PyObject* evaluate(const char* op, const char* input, PyObject* seq, PyObject* numbers, PyObject* dtype_obj = nullptr) {
  const jit::PointwiseFormula* f = input ? jit::find_derivative(op, input) : jit::find_formula(op);
  KILN_CHECK_VALUE(f != nullptr, "_evaluate_formula(): no pointwise formula for '", op, "'",
                   input ? std::string(" (derivative for '") + input + "')" : std::string());
  PyObject* fast = PySequence_Fast(seq, "_evaluate_formula(): expected a sequence of tensors");
  if (!fast) return nullptr;
  std::vector<TensorBase> inputs;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(fast, i);
    if (!is_tensor(item)) {
      Py_DECREF(fast);
      KILN_CHECK_TYPE(false, "_evaluate_formula(): expected tensors, got ", Py_TYPE(item)->tp_name);
    }
    inputs.push_back(unpack_tensor(item));
  }
  Py_DECREF(fast);
  std::vector<Scalar> scalars;
  if (numbers) {
    PyObject* nums = PySequence_Fast(numbers, "_evaluate_formula(): expected a sequence of numbers");
    if (!nums) return nullptr;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(nums); ++i) {
      PyObject* item = PySequence_Fast_GET_ITEM(nums, i);
      if (!is_scalar_like(item)) {
        Py_DECREF(nums);
        KILN_CHECK_TYPE(false, "_evaluate_formula(): expected numbers, got ", Py_TYPE(item)->tp_name);
      }
      scalars.push_back(to_scalar(item));
    }
    Py_DECREF(nums);
  }
  std::optional<ScalarType> dtype;
  if (dtype_obj && dtype_obj != Py_None) {
    KILN_CHECK_TYPE(is_dtype(dtype_obj), "_evaluate_formula(): dtype must be a kiln.dtype, got ", Py_TYPE(dtype_obj)->tp_name);
    dtype = dtype_value(dtype_obj);
  }
  return wrap(without_gil([&] {
    return input ? jit::evaluate_derivative(*f, inputs, scalars) : jit::evaluate_formula(*f, inputs, scalars, dtype);
  }));
}

}  // namespace

PyObject* py_evaluate_formula(PyObject*, PyObject* args) {
  KILN_PY_BEGIN
  const char* op;
  PyObject* seq;
  PyObject* numbers = nullptr;
  PyObject* dtype = nullptr;  // a cast formula's target
  if (!PyArg_ParseTuple(args, "sO|OO", &op, &seq, &numbers, &dtype)) return nullptr;
  return evaluate(op, nullptr, seq, numbers, dtype);
  KILN_PY_END
}

PyObject* py_evaluate_derivative(PyObject*, PyObject* args) {
  KILN_PY_BEGIN
  const char* op;
  const char* input;
  PyObject* seq;
  PyObject* numbers = nullptr;
  if (!PyArg_ParseTuple(args, "ssO|O", &op, &input, &seq, &numbers)) return nullptr;
  return evaluate(op, input, seq, numbers);
  KILN_PY_END
}

PyObject* py_pointwise_derivatives(PyObject*, PyObject*) {
  PyObject* list = PyList_New(jit::kNumPointwiseDerivatives);
  if (!list) return nullptr;
  for (int i = 0; i < jit::kNumPointwiseDerivatives; ++i) {
    const jit::PointwiseFormula& d = jit::kPointwiseDerivatives[i];
    PyObject* item = Py_BuildValue("(sss)", d.op, d.overload, d.text);
    if (!item) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, item);
  }
  return list;
}

PyObject* py_simd_target(PyObject*, PyObject*) {
  KILN_PY_BEGIN
  return PyUnicode_FromString(cpu::vector_target().c_str());
  KILN_PY_END
}

PyObject* py_simd_targets(PyObject*, PyObject*) {
  KILN_PY_BEGIN
  const std::vector<std::string> names = cpu::vector_targets_available();
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(names.size()));
  if (!list) return nullptr;
  for (size_t i = 0; i < names.size(); ++i) {
    PyObject* item = PyUnicode_FromString(names[i].c_str());
    if (!item) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), item);
  }
  return list;
  KILN_PY_END
}

PyObject* py_simd_use_target(PyObject*, PyObject* name) {
  KILN_PY_BEGIN
  KILN_CHECK_TYPE(name == Py_None || PyUnicode_Check(name), "_simd_use_target(): expected a target name or None");
  const char* text = name == Py_None ? "" : PyUnicode_AsUTF8(name);
  if (!text) return nullptr;
  KILN_CHECK_VALUE(cpu::use_vector_target(text), "_simd_use_target(): '", text,
                   "' is not a target this build has for this CPU (see _simd_targets())");
  Py_RETURN_NONE;
  KILN_PY_END
}

PyObject* py_torch_kernels_use_fma(PyObject*, PyObject*) {
  KILN_PY_BEGIN
  return PyBool_FromLong(cpu::torch_fuses_multiply_add());
  KILN_PY_END
}

}  // namespace python
}  // namespace kiln
