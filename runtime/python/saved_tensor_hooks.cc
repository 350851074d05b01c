#include "runtime/python/saved_tensor_hooks.h"

#include <memory>

#include "runtime/autograd/saved_tensor_hooks.h"
#include "runtime/python/gil.h"
#include "runtime/python/tensor_object.h"

namespace kiln {
namespace python {
namespace {

// What pack_hook returned, unpacked by unpack_hook (which must give a Tensor, as torch checks).
class PyPackedTensor final : public PackedTensor {
 public:
  PyPackedTensor(PyObject* packed, std::shared_ptr<PyRef> unpack_hook)
      : packed_(std::make_unique<PyRef>(packed)), unpack_hook_(std::move(unpack_hook)) {}

  TensorBase unpack() const override {
    GilGuard gil;
    PyObject* result = PyObject_CallFunctionObjArgs(unpack_hook_->get(), packed_->get(), nullptr);
    if (!result) throw PythonError();
    if (!is_tensor(result)) {
      PyErr_Format(PyExc_TypeError, "Output of saved tensor unpack_hook expected to be a Tensor but got result of type %s",
                   Py_TYPE(result)->tp_name);
      Py_DECREF(result);
      throw PythonError();
    }
    TensorBase t = unpack_tensor(result);
    Py_DECREF(result);
    return t;
  }

 private:
  std::unique_ptr<PyRef> packed_;
  std::shared_ptr<PyRef> unpack_hook_;
};

class PySavedTensorHooks final : public SavedTensorHooks {
 public:
  PySavedTensorHooks(PyObject* pack_hook, PyObject* unpack_hook)
      : pack_hook_(std::make_shared<PyRef>(pack_hook)), unpack_hook_(std::make_shared<PyRef>(unpack_hook)) {}

  std::shared_ptr<PackedTensor> pack(const TensorBase& t) override {
    GilGuard gil;
    PyObject* arg = wrap(t);
    if (!arg) throw PythonError();
    PyObject* packed = PyObject_CallFunctionObjArgs(pack_hook_->get(), arg, nullptr);
    Py_DECREF(arg);
    if (!packed) throw PythonError();
    auto result = std::make_shared<PyPackedTensor>(packed, unpack_hook_);
    Py_DECREF(packed);
    return result;
  }

 private:
  std::shared_ptr<PyRef> pack_hook_;
  std::shared_ptr<PyRef> unpack_hook_;
};

PyObject* py_push_saved_tensors_hooks(PyObject*, PyObject* args) {
  KILN_PY_BEGIN
  PyObject* pack_hook = nullptr;
  PyObject* unpack_hook = nullptr;
  if (!PyArg_ParseTuple(args, "OO", &pack_hook, &unpack_hook)) return nullptr;
  if (!PyCallable_Check(pack_hook) || !PyCallable_Check(unpack_hook)) {
    PyErr_SetString(PyExc_TypeError, "saved_tensors_hooks(): pack_hook and unpack_hook must be callable");
    return nullptr;
  }
  push_saved_tensor_hooks(std::make_shared<PySavedTensorHooks>(pack_hook, unpack_hook));
  Py_RETURN_NONE;
  KILN_PY_END
}

PyObject* py_pop_saved_tensors_hooks(PyObject*, PyObject*) {
  KILN_PY_BEGIN
  pop_saved_tensor_hooks();
  Py_RETURN_NONE;
  KILN_PY_END
}

}  // namespace

#define KILN_FN(name, fn, flags) {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(fn)), flags, nullptr}

PyMethodDef saved_tensor_hook_functions[] = {
    KILN_FN("_push_saved_tensors_hooks", py_push_saved_tensors_hooks, METH_VARARGS),
    KILN_FN("_pop_saved_tensors_hooks", py_pop_saved_tensors_hooks, METH_NOARGS),
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace python
}  // namespace kiln
