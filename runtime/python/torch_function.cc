// The C++ side of the __torch_function__ protocol (runtime/python/torch_function.h). The wrapper's
// call costs a plain-tensor call a few pointer compares: an argument whose type is exactly
// kiln.Tensor (or a number, None, a string) never overrides anything.
#include "runtime/python/torch_function.h"

#include <structmember.h>

#include "runtime/python/tensor_object.h"

namespace kiln {
namespace python {
namespace {

struct State {
  bool subclass_disabled = false;  // DisableTorchFunctionSubclass: only modes still run
  bool all_disabled = false;       // DisableTorchFunction: nothing runs
  int mode_depth = 0;              // TorchFunctionModes on this thread's stack
};
thread_local State state;
// Modes pushed on all threads together (changed with the GIL held): while 0, a call whose arguments
// override nothing never reads the thread-local state.
int modes_anywhere = 0;

PyObject* handler = nullptr;        // kiln._torch_function._handle
PyObject* disabled_impl = nullptr;  // kiln._C._disabled_torch_function_impl
PyObject* attr_name = nullptr;      // "__torch_function__", interned

struct DispatcherObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject* impl;
  PyObject* dict;  // __name__, __qualname__, __module__, __doc__, __wrapped__
  // impl's C function when impl is a builtin taking (self, args, kwargs) (the generated bindings):
  // called directly, without the generic call's conversions
  PyCFunctionWithKeywords cfunc;
  PyObject* cself;  // its self (the module), borrowed from impl
};

bool overrides(PyObject* o) {
  PyTypeObject* t = Py_TYPE(o);
  if (t == tensor_class || o == Py_None || t == &PyLong_Type || t == &PyFloat_Type || t == &PyBool_Type ||
      t == &PyUnicode_Type || t == &TensorBaseType) {
    return false;
  }
  PyObject* tf = _PyType_Lookup(t, attr_name);  // borrowed; served from the type attribute cache
  return tf != nullptr && tf != disabled_impl;
}

// An argument, or an element of a list/tuple argument (Tensor[] parameters: torch.cat([x, y])).
bool arg_overrides(PyObject* o) {
  if (PyList_CheckExact(o) || PyTuple_CheckExact(o)) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    PyObject** items = PySequence_Fast_ITEMS(o);
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (overrides(items[i])) return true;
    }
    return false;
  }
  return overrides(o);
}

PyObject* call_handler(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* impl = reinterpret_cast<DispatcherObject*>(self)->impl;
  PyObject* tuple = PyTuple_New(nargs);
  if (!tuple) return nullptr;
  for (Py_ssize_t i = 0; i < nargs; ++i) PyTuple_SET_ITEM(tuple, i, new_reference(args[i]));
  PyObject* kwargs = PyDict_New();
  if (!kwargs) {
    Py_DECREF(tuple);
    return nullptr;
  }
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; i < nkw; ++i) {
    if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0) {
      Py_DECREF(tuple);
      Py_DECREF(kwargs);
      return nullptr;
    }
  }
  PyObject* result = PyObject_CallFunctionObjArgs(handler, self, impl, tuple, kwargs, nullptr);
  Py_DECREF(tuple);
  Py_DECREF(kwargs);
  return result;
}

// impl(*args, **kwargs), calling a builtin's C function directly.
PyObject* call_impl(DispatcherObject* self, PyObject* const* args, Py_ssize_t nargs, size_t nargsf, PyObject* kwnames) {
  if (!self->cfunc) return PyObject_Vectorcall(self->impl, args, nargsf, kwnames);
  PyObject* tuple = PyTuple_New(nargs);
  if (!tuple) return nullptr;
  for (Py_ssize_t i = 0; i < nargs; ++i) PyTuple_SET_ITEM(tuple, i, new_reference(args[i]));
  PyObject* kwargs = nullptr;
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nkw) {
    kwargs = PyDict_New();
    for (Py_ssize_t i = 0; kwargs && i < nkw; ++i) {
      if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0) Py_CLEAR(kwargs);
    }
    if (!kwargs) {
      Py_DECREF(tuple);
      return nullptr;
    }
  }
  PyObject* result = self->cfunc(self->cself, tuple, kwargs);
  Py_DECREF(tuple);
  Py_XDECREF(kwargs);
  return result;
}

PyObject* dispatcher_vectorcall(PyObject* self_obj, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  DispatcherObject* self = reinterpret_cast<DispatcherObject*>(self_obj);
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  const Py_ssize_t total = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
  bool overriding = false;
  for (Py_ssize_t i = 0; i < total && !overriding; ++i) overriding = arg_overrides(args[i]);
  if ((overriding || modes_anywhere > 0) && handler && !state.all_disabled &&
      ((overriding && !state.subclass_disabled) || state.mode_depth > 0)) {
    return call_handler(self_obj, args, nargs, kwnames);
  }
  return call_impl(self, args, nargs, nargsf, kwnames);
}

void dispatcher_dealloc(PyObject* obj) {
  DispatcherObject* self = reinterpret_cast<DispatcherObject*>(obj);
  PyObject_GC_UnTrack(obj);
  Py_CLEAR(self->impl);
  Py_CLEAR(self->dict);
  Py_TYPE(obj)->tp_free(obj);
}

int dispatcher_traverse(PyObject* obj, visitproc visit, void* arg) {
  DispatcherObject* self = reinterpret_cast<DispatcherObject*>(obj);
  Py_VISIT(self->impl);
  Py_VISIT(self->dict);
  return 0;
}

int dispatcher_clear(PyObject* obj) {
  DispatcherObject* self = reinterpret_cast<DispatcherObject*>(obj);
  Py_CLEAR(self->impl);
  Py_CLEAR(self->dict);
  return 0;
}

// Unknown attributes (__text_signature__, __self__, ...) are the wrapped function's.
PyObject* dispatcher_getattro(PyObject* self, PyObject* name) {
  PyObject* found = PyObject_GenericGetAttr(self, name);
  if (found || !PyErr_ExceptionMatches(PyExc_AttributeError)) return found;
  PyErr_Clear();
  return PyObject_GetAttr(reinterpret_cast<DispatcherObject*>(self)->impl, name);
}

PyObject* dispatcher_repr(PyObject* self) { return PyObject_Repr(reinterpret_cast<DispatcherObject*>(self)->impl); }

// Pickled by reference, as a function: module + qualname name this object.
PyObject* dispatcher_reduce(PyObject* self, PyObject*) {
  return PyObject_GetAttrString(self, "__qualname__");
}

PyMethodDef dispatcher_methods[] = {
    {"__reduce__", dispatcher_reduce, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

PyTypeObject DispatcherType = {PyVarObject_HEAD_INIT(nullptr, 0)};

PyObject* py_wrap_torch_function(PyObject*, PyObject* args) {
  PyObject *impl, *module, *qualname;
  if (!PyArg_ParseTuple(args, "OUU", &impl, &module, &qualname)) return nullptr;
  if (!PyCallable_Check(impl)) {
    PyErr_SetString(PyExc_TypeError, "_wrap_torch_function(): impl must be callable");
    return nullptr;
  }
  DispatcherObject* self = PyObject_GC_New(DispatcherObject, &DispatcherType);
  if (!self) return nullptr;
  self->vectorcall = dispatcher_vectorcall;
  self->impl = new_reference(impl);
  self->cfunc = nullptr;
  self->cself = nullptr;
  if (PyCFunction_CheckExact(impl) && PyCFunction_GET_FLAGS(impl) == (METH_VARARGS | METH_KEYWORDS)) {
    self->cfunc = reinterpret_cast<PyCFunctionWithKeywords>(reinterpret_cast<void (*)(void)>(PyCFunction_GET_FUNCTION(impl)));
    self->cself = PyCFunction_GET_SELF(impl);
  }
  self->dict = PyDict_New();
  PyObject_GC_Track(reinterpret_cast<PyObject*>(self));
  PyObject* obj = reinterpret_cast<PyObject*>(self);
  if (!self->dict) {
    Py_DECREF(obj);
    return nullptr;
  }
  // __name__: the qualname's last part; __doc__ the function's
  PyObject* dot = PyUnicode_FromString(".");
  PyObject* parts = dot ? PyUnicode_RSplit(qualname, dot, 1) : nullptr;
  Py_XDECREF(dot);
  PyObject* doc = PyObject_GetAttrString(impl, "__doc__");
  if (!doc) PyErr_Clear();
  const bool ok = parts && PyDict_SetItemString(self->dict, "__name__", PyList_GET_ITEM(parts, PyList_GET_SIZE(parts) - 1)) == 0 &&
                  PyDict_SetItemString(self->dict, "__qualname__", qualname) == 0 &&
                  PyDict_SetItemString(self->dict, "__module__", module) == 0 &&
                  PyDict_SetItemString(self->dict, "__doc__", doc ? doc : Py_None) == 0 &&
                  PyDict_SetItemString(self->dict, "__wrapped__", impl) == 0;
  Py_XDECREF(parts);
  Py_XDECREF(doc);
  if (!ok) {
    Py_DECREF(obj);
    return nullptr;
  }
  return obj;
}

PyObject* py_set_torch_function_handler(PyObject*, PyObject* args) {
  PyObject *h, *disabled;
  if (!PyArg_ParseTuple(args, "OO", &h, &disabled)) return nullptr;
  Py_XSETREF(handler, new_reference(h));
  Py_XSETREF(disabled_impl, new_reference(disabled));
  Py_RETURN_NONE;
}

PyObject* py_torch_function_state(PyObject*, PyObject*) {
  return Py_BuildValue("(OOi)", state.subclass_disabled ? Py_True : Py_False, state.all_disabled ? Py_True : Py_False,
                       state.mode_depth);
}

PyObject* py_set_torch_function_state(PyObject*, PyObject* args) {
  int subclass_disabled, all_disabled, depth;
  if (!PyArg_ParseTuple(args, "ppi", &subclass_disabled, &all_disabled, &depth)) return nullptr;
  state.subclass_disabled = subclass_disabled;
  state.all_disabled = all_disabled;
  modes_anywhere += depth - state.mode_depth;
  state.mode_depth = depth;
  Py_RETURN_NONE;
}

// Whether a Tensor subclass's method should run the protocol: torch's torch_function_enabled(),
// or a mode on the stack (which DisableTorchFunctionSubclass leaves running).
PyObject* py_torch_function_active(PyObject*, PyObject*) {
  return PyBool_FromLong(!state.all_disabled && (state.mode_depth > 0 || !state.subclass_disabled));
}

// torch._C._is_torch_function_enabled / _is_torch_function_mode_enabled
PyObject* py_is_torch_function_enabled(PyObject*, PyObject*) {
  return PyBool_FromLong(!state.all_disabled && !state.subclass_disabled);
}
PyObject* py_is_torch_function_mode_enabled(PyObject*, PyObject*) {
  return PyBool_FromLong(!state.all_disabled && state.mode_depth > 0);
}

}  // namespace

#define KILN_TF_FN(name, fn, flags) {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(fn)), flags, nullptr}

PyMethodDef torch_function_functions[] = {
    KILN_TF_FN("_wrap_torch_function", py_wrap_torch_function, METH_VARARGS),
    KILN_TF_FN("_set_torch_function_handler", py_set_torch_function_handler, METH_VARARGS),
    KILN_TF_FN("_torch_function_state", py_torch_function_state, METH_NOARGS),
    KILN_TF_FN("_set_torch_function_state", py_set_torch_function_state, METH_VARARGS),
    KILN_TF_FN("_torch_function_active", py_torch_function_active, METH_NOARGS),
    KILN_TF_FN("_is_torch_function_enabled", py_is_torch_function_enabled, METH_NOARGS),
    KILN_TF_FN("_is_torch_function_mode_enabled", py_is_torch_function_mode_enabled, METH_NOARGS),
    {nullptr, nullptr, 0, nullptr},
};

bool add_torch_function_type(PyObject* module) {
  attr_name = PyUnicode_InternFromString("__torch_function__");
  if (!attr_name) return false;
  DispatcherType.tp_name = "kiln._C._TorchFunctionDispatcher";
  DispatcherType.tp_doc = "A public kiln function that runs the __torch_function__ protocol.";
  DispatcherType.tp_basicsize = sizeof(DispatcherObject);
  DispatcherType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL;
  DispatcherType.tp_vectorcall_offset = offsetof(DispatcherObject, vectorcall);
  DispatcherType.tp_call = PyVectorcall_Call;
  DispatcherType.tp_dictoffset = offsetof(DispatcherObject, dict);
  DispatcherType.tp_dealloc = dispatcher_dealloc;
  DispatcherType.tp_traverse = dispatcher_traverse;
  DispatcherType.tp_clear = dispatcher_clear;
  DispatcherType.tp_getattro = dispatcher_getattro;
  DispatcherType.tp_setattro = PyObject_GenericSetAttr;
  DispatcherType.tp_repr = dispatcher_repr;
  DispatcherType.tp_methods = dispatcher_methods;
  if (PyType_Ready(&DispatcherType) < 0) return false;
  Py_INCREF(&DispatcherType);
  return PyModule_AddObject(module, "_TorchFunctionDispatcher", reinterpret_cast<PyObject*>(&DispatcherType)) == 0;
}

}  // namespace python
}  // namespace kiln
