// Python results of ops returning several tensors: kiln.return_types.<op>
// named tuples (as torch.return_types.max, with .values and .indices) for named
// returns, plain tuples otherwise. Tensor[] results become tuples, as in PyTorch.
#pragma once

#include <Python.h>

#include <initializer_list>
#include <tuple>
#include <vector>

#include "runtime/python/tensor_object.h"

namespace kiln {
namespace python {

// The named tuple type for `op` with these fields (created once, kept for the process).
PyTypeObject* named_tuple_type(const char* op, std::initializer_list<const char*> fields);

// A new tuple (of `type` when it is not null) holding the tensors.
PyObject* wrap_tensors(PyTypeObject* type, const std::vector<Tensor>& tensors);

template <typename... Ts>
PyObject* wrap_tuple(PyTypeObject* type, const std::tuple<Ts...>& t) {
  return wrap_tensors(type, std::apply([](const auto&... x) { return std::vector<Tensor>{x...}; }, t));
}
inline PyObject* wrap(const std::vector<Tensor>& tensors) { return wrap_tensors(nullptr, tensors); }

}  // namespace python
}  // namespace kiln
