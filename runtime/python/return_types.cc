#include "runtime/python/return_types.h"

#include <structmember.h>

#include <deque>
#include <string>
#include <vector>

namespace kiln {
namespace python {

namespace {
// What a named tuple type is made from; it must outlive the type (the whole process),
// so every one is kept here, reachable (not leaked).
struct NamedTupleSpec {
  std::string name;
  std::vector<PyStructSequence_Field> fields;
  PyStructSequence_Desc desc;
};
std::deque<NamedTupleSpec>& specs() {
  static auto* all = new std::deque<NamedTupleSpec>();
  return *all;
}

// torch's repr of its return types (structseq.cpp): one field a line,
// "torch.return_types.max(\nvalues=tensor(...),\nindices=tensor(...))".
PyObject* named_tuple_repr(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  const Py_ssize_t n = PyTuple_GET_SIZE(self);
  std::string out = std::string(type->tp_name) + "(\n";
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* r = PyObject_Repr(PyTuple_GET_ITEM(self, i));
    if (r == nullptr) return nullptr;
    const char* text = PyUnicode_AsUTF8(r);
    if (text == nullptr) {
      Py_DECREF(r);
      return nullptr;
    }
    out += std::string(type->tp_members[i].name) + "=" + text;
    Py_DECREF(r);
    if (i < n - 1) out += ",\n";
  }
  out += ")";
  return PyUnicode_FromStringAndSize(out.data(), static_cast<Py_ssize_t>(out.size()));
}
}  // namespace

PyTypeObject* named_tuple_type(const char* op, std::initializer_list<const char*> fields) {
  NamedTupleSpec& spec = specs().emplace_back();
  spec.name = std::string("kiln.return_types.") + op;
  for (const char* f : fields) spec.fields.push_back({f, nullptr});
  spec.fields.push_back({nullptr, nullptr});
  spec.desc = {spec.name.c_str(), nullptr, spec.fields.data(), static_cast<int>(fields.size())};
  PyTypeObject* type = PyStructSequence_NewType(&spec.desc);
  if (type == nullptr) throw PythonError();
  type->tp_repr = named_tuple_repr;
  return type;
}

PyObject* wrap_tensors(PyTypeObject* type, const std::vector<Tensor>& tensors) {
  const Py_ssize_t n = static_cast<Py_ssize_t>(tensors.size());
  PyObject* out = type ? PyStructSequence_New(type) : PyTuple_New(n);
  if (out == nullptr) throw PythonError();
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = wrap(tensors[i]);
    if (item == nullptr) {
      Py_DECREF(out);
      throw PythonError();
    }
    if (type) PyStructSequence_SetItem(out, i, item);
    else PyTuple_SET_ITEM(out, i, item);
  }
  return out;
}

}  // namespace python
}  // namespace kiln
