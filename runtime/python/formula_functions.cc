#include "runtime/python/formula_functions.h"

#include <vector>

#include "runtime/core/error.h"
#include "runtime/jit/formula.h"
#include "runtime/jit/formula_eval.h"
#include "runtime/kernels/cpu/vector_dispatch.h"
#include "runtime/python/tensor_object.h"

namespace kiln {
namespace python {

PyObject* py_pointwise_formulas(PyObject*, PyObject*) {
  PyObject* list = PyList_New(jit::kNumPointwiseFormulas);
  if (!list) return nullptr;
  for (int i = 0; i < jit::kNumPointwiseFormulas; ++i) {
    PyObject* item = Py_BuildValue("(ss)", jit::kPointwiseFormulas[i].op, jit::kPointwiseFormulas[i].text);
    if (!item) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, item);
  }
  return list;
}

PyObject* py_evaluate_formula(PyObject*, PyObject* args) {
  KILN_PY_BEGIN
  const char* op;
  PyObject* seq;
  if (!PyArg_ParseTuple(args, "sO", &op, &seq)) return nullptr;
  const jit::PointwiseFormula* f = jit::find_formula(op);
  KILN_CHECK_VALUE(f != nullptr, "_evaluate_formula(): no pointwise formula for '", op, "'");
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
  return wrap(without_gil([&] { return jit::evaluate_formula(*f, inputs); }));
  KILN_PY_END
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

}  // namespace python
}  // namespace kiln
