// kiln._C.TensorBase: the Python tensor type. kiln.Tensor (python/kiln/_tensor.py)
// subclasses it with the pure-Python parts (repr, operators, numpy()).
#include "runtime/python/tensor_object.h"

#include <structmember.h>

#include "runtime/python/binding_tables.h"
#include "runtime/autograd/node.h"
#include "runtime/autograd/tensor_hooks.h"
#include "runtime/python/arg_parser.h"
#include "runtime/python/dtype_object.h"
#include "runtime/python/gil.h"
#include "runtime/python/node_object.h"
#include "runtime/python/python_function.h"
#include "runtime/python/registered_classes.h"
#include "runtime/python/tensor_to_list.h"

namespace kiln {
namespace python {

PyTypeObject* tensor_class = nullptr;

PyObject* wrap_as(PyTypeObject* type, Tensor t) {
  if (!t.defined()) Py_RETURN_NONE;
  if (PyObject* existing = static_cast<PyObject*>(t.impl()->pyobj())) return new_reference(existing);
  PyObject* obj = type->tp_alloc(type, 0);
  if (!obj) return nullptr;
  TensorObject* self = reinterpret_cast<TensorObject*>(obj);
  new (&self->cdata) Tensor(std::move(t));
  self->hooks = nullptr;
  self->cdata.impl()->set_pyobj(obj);
  return obj;
}

PyObject* wrap(Tensor t) { return wrap_as(tensor_class ? tensor_class : &TensorBaseType, std::move(t)); }
PyObject* wrap(const TensorBase& t) { return wrap(Tensor(t)); }

namespace {

const Tensor& self_tensor(PyObject* self) { return unpack_tensor(self); }

// The C++ hook holds the hooks list too. When this object is the only way to reach
// the tensor (and its grad_fn), that reference is ours as well: report it, so a hook
// whose closure refers back to the tensor forms a collectable cycle.
bool owns_cpp_hook_reference(TensorObject* self) {
  const Tensor& t = self->cdata;
  if (!t.defined() || t.use_count() != 1) return false;
  return t.is_leaf() || t.grad_fn().use_count() == 1;
}

// The ctx of a Python autograd Function is owned by its node. When this object alone holds the
// tensor and the tensor alone holds that node, the reference is ours: report it, so a ctx
// attribute referring back to this tensor (ctx.out = out) forms a collectable cycle.
PyObject* owned_function_ctx(TensorObject* self) {
  const Tensor& t = self->cdata;
  if (!t.defined() || t.use_count() != 1) return nullptr;
  const std::shared_ptr<Node>& fn = t.grad_fn();
  return fn && fn.use_count() == 1 ? function_ctx(fn.get()) : nullptr;
}

int tensor_traverse(PyObject* obj, visitproc visit, void* arg) {
  TensorObject* self = reinterpret_cast<TensorObject*>(obj);
  if (self->hooks) {
    Py_VISIT(self->hooks);
    if (owns_cpp_hook_reference(self)) Py_VISIT(self->hooks);
  }
  if (PyObject* ctx = owned_function_ctx(self)) Py_VISIT(ctx);
  return 0;
}

int tensor_clear(PyObject* obj) {
  TensorObject* self = reinterpret_cast<TensorObject*>(obj);
  if (self->hooks) {
    PyList_SetSlice(self->hooks, 0, PY_SSIZE_T_MAX, nullptr);
    Py_CLEAR(self->hooks);
  }
  return 0;
}

void tensor_dealloc(PyObject* obj) {
  TensorObject* self = reinterpret_cast<TensorObject*>(obj);
  PyObject_GC_UnTrack(obj);
  Py_CLEAR(self->hooks);
  if (self->cdata.defined() && self->cdata.impl()->pyobj() == obj) self->cdata.impl()->set_pyobj(nullptr);
  self->cdata.~Tensor();
  Py_TYPE(obj)->tp_free(obj);
}

PyObject* tensor_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyErr_SetString(PyExc_TypeError, "use kiln.tensor(data), kiln.empty(...) or kiln.zeros(...) to create tensors");
  return nullptr;
}

Py_hash_t tensor_hash(PyObject* self) { return _Py_HashPointer(self); }

// ---- properties ----

PyObject* get_shape(PyObject* self, void*) {
  KILN_PY_BEGIN
  return make_size(self_tensor(self).sizes());
  KILN_PY_END
}
PyObject* get_dtype(PyObject* self, void*) { return new_reference(dtype_object(self_tensor(self).dtype())); }
PyObject* get_device(PyObject* self, void*) {
  KILN_PY_BEGIN
  return make_device(self_tensor(self).device());
  KILN_PY_END
}
PyObject* get_ndim(PyObject* self, void*) { return PyLong_FromLongLong(self_tensor(self).dim()); }
PyObject* get_requires_grad(PyObject* self, void*) { return PyBool_FromLong(self_tensor(self).requires_grad()); }
int set_requires_grad(PyObject* self, PyObject* value, void*) {
  try {
    if (!value || !PyBool_Check(value)) throw TypeError("requires_grad must be a bool");
    // torch's setter words it apart from requires_grad_() (THPVariable_set_requires_grad).
    KILN_CHECK(value != Py_True || self_tensor(self).is_floating_point(),
               "only Tensors of floating point and complex dtype can require gradients");
    const_cast<Tensor&>(self_tensor(self)).TensorBase::set_requires_grad(value == Py_True);
    return 0;
  } catch (...) {
    set_python_error();
    return -1;
  }
}
// torch's TensorBase::grad() warning: a non-leaf that does not retain its gradient never gets one.
PyObject* get_grad(PyObject* self, void*) {
  const Tensor& t = self_tensor(self);
  Tensor grad = t.grad();
  if (!grad.defined() && !t.is_leaf() && !t.retains_grad() &&
      PyErr_WarnEx(PyExc_UserWarning,
                   "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
                   "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
                   "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
                   "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
                   "github.com/pytorch/pytorch/pull/30531 for more informations.",
                   2) < 0)  // the frame of kiln.Tensor.grad's caller (the property is frame 1)
    return nullptr;  // the warning was turned into an error
  return wrap(grad);
}
int set_grad(PyObject* self, PyObject* value, void*) {
  try {
    if (value == nullptr || value == Py_None) {
      self_tensor(self).set_grad(TensorBase());
    } else {
      if (!is_tensor(value)) throw TypeError("assigned grad expected to be a Tensor or None");
      self_tensor(self).set_grad(unpack_tensor(value));
    }
    return 0;
  } catch (...) {
    set_python_error();
    return -1;
  }
}
PyObject* get_grad_fn(PyObject* self, void*) {
  KILN_PY_BEGIN
  return wrap_node(current_grad_fn(self_tensor(self)));
  KILN_PY_END
}
// The tensor a view shares memory with (the root of a chain of views), or None: torch's Tensor._base.
PyObject* get_base(PyObject* self, void*) {
  const AutogradMeta* meta = self_tensor(self).impl()->autograd_meta();
  if (!meta || !meta->is_view) Py_RETURN_NONE;
  return wrap(Tensor(meta->base));
}
PyObject* get_is_leaf(PyObject* self, void*) { return PyBool_FromLong(self_tensor(self).is_leaf()); }
PyObject* get_version(PyObject* self, void*) { return PyLong_FromLong(self_tensor(self)._version()); }
PyObject* get_output_nr(PyObject* self, void*) { return PyLong_FromLong(self_tensor(self).output_nr()); }
PyObject* get_retains_grad(PyObject* self, void*) { return PyBool_FromLong(self_tensor(self).retains_grad()); }
PyObject* get_is_cuda(PyObject* self, void*) { return PyBool_FromLong(self_tensor(self).is_cuda()); }

PyObject* get_data(PyObject* self, void*) {
  KILN_PY_BEGIN
  // Shares storage, but not the version counter or autograd history (as torch's .data).
  const Tensor& t = self_tensor(self);
  Tensor alias(Ref<TensorImpl>(new TensorImpl(*t.impl(), t.sizes(), t.strides(), t.storage_offset())));
  alias.impl()->set_version_counter(Ref<VersionCounter>::make());
  return wrap(std::move(alias));
  KILN_PY_END
}
int set_data(PyObject* self, PyObject* value, void*) {
  try {
    if (!value || !is_tensor(value))
      throw TypeError(std::string("Variable data has to be a tensor, but got ") + Py_TYPE(value)->tp_name);
    KILN_CHECK(!self_tensor(self).requires_grad() || unpack_tensor(value).is_floating_point(),
               "data set to a tensor that requires gradients must be floating point or complex dtype");
    self_tensor(self).impl()->set_data_from(*unpack_tensor(value).impl());
    return 0;
  } catch (...) {
    set_python_error();
    return -1;
  }
}

const char* typestr(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "|b1";
    case ScalarType::UInt8: return "|u1";
    case ScalarType::Int8: return "|i1";
    case ScalarType::Int16: return "<i2";
    case ScalarType::Int32: return "<i4";
    case ScalarType::Int64: return "<i8";
    case ScalarType::Float16: return "<f2";
    case ScalarType::Float32: return "<f4";
    default: return "<f8";
  }
}

PyObject* get_array_interface(PyObject* self, void*) {
  KILN_PY_BEGIN
  const Tensor& t = self_tensor(self);
  KILN_CHECK(t.is_cpu(), "can't convert ", t.device().str(), " tensor to numpy. Use Tensor.cpu() first.");
  KILN_CHECK(!t.requires_grad(), "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
  KILN_CHECK_TYPE(t.dtype() != ScalarType::BFloat16, "Got unsupported ScalarType BFloat16");  // NumPy has none
  PyObject* shape = PyTuple_New(t.dim());
  PyObject* strides = PyTuple_New(t.dim());
  for (int64_t d = 0; d < t.dim(); ++d) {
    PyTuple_SET_ITEM(shape, d, PyLong_FromLongLong(t.sizes()[d]));
    PyTuple_SET_ITEM(strides, d, PyLong_FromLongLong(t.strides()[d] * t.element_size()));
  }
  PyObject* data = Py_BuildValue("(KO)", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(t.data_ptr())),
                                 Py_False);
  PyObject* dict = Py_BuildValue("{s:N,s:s,s:N,s:N,s:i}", "shape", shape, "typestr", typestr(t.dtype()), "data", data,
                                 "strides", strides, "version", 3);
  return dict;
  KILN_PY_END
}

PyGetSetDef tensor_getset[] = {
    {"shape", get_shape, nullptr, nullptr, nullptr},
    {"dtype", get_dtype, nullptr, nullptr, nullptr},
    {"device", get_device, nullptr, nullptr, nullptr},
    {"ndim", get_ndim, nullptr, nullptr, nullptr},
    {"requires_grad", get_requires_grad, set_requires_grad, nullptr, nullptr},
    {"grad", get_grad, set_grad, nullptr, nullptr},
    {"grad_fn", get_grad_fn, nullptr, nullptr, nullptr},
    {"is_leaf", get_is_leaf, nullptr, nullptr, nullptr},
    {"data", get_data, set_data, nullptr, nullptr},
    {"_version", get_version, nullptr, nullptr, nullptr},
    {"_base", get_base, nullptr, nullptr, nullptr},
    {"output_nr", get_output_nr, nullptr, nullptr, nullptr},
    {"retains_grad", get_retains_grad, nullptr, nullptr, nullptr},
    {"is_cuda", get_is_cuda, nullptr, nullptr, nullptr},
    {"__array_interface__", get_array_interface, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

// ---- hand-written methods (metadata and autograd; operators are generated) ----

PyObject* dim_or_all(PyObject* self, PyObject* args, PyObject* kwargs, bool sizes) {
  KILN_PY_BEGIN
  static PythonArgParser size_parser({"size(int? dim=None)"}, true);
  static PythonArgParser stride_parser({"stride(int? dim=None)"}, true);
  ParsedArgs r = (sizes ? size_parser : stride_parser).parse(args, kwargs);
  const Tensor& t = self_tensor(self);
  if (r.is_none(0)) {
    if (sizes) return make_size(t.sizes());
    PyObject* tup = PyTuple_New(t.dim());
    for (int64_t d = 0; d < t.dim(); ++d) PyTuple_SET_ITEM(tup, d, PyLong_FromLongLong(t.strides()[d]));
    return tup;
  }
  int64_t d = r.int64(0);
  return PyLong_FromLongLong(sizes ? t.size(d) : t.stride(d));
  KILN_PY_END
}
PyObject* m_size(PyObject* self, PyObject* args, PyObject* kwargs) { return dim_or_all(self, args, kwargs, true); }
PyObject* m_stride(PyObject* self, PyObject* args, PyObject* kwargs) { return dim_or_all(self, args, kwargs, false); }
PyObject* m_dim(PyObject* self, PyObject*) { return PyLong_FromLongLong(self_tensor(self).dim()); }
PyObject* m_numel(PyObject* self, PyObject*) { return PyLong_FromLongLong(self_tensor(self).numel()); }
PyObject* m_element_size(PyObject* self, PyObject*) { return PyLong_FromLongLong(self_tensor(self).element_size()); }
PyObject* m_storage_offset(PyObject* self, PyObject*) { return PyLong_FromLongLong(self_tensor(self).storage_offset()); }
PyObject* m_is_contiguous(PyObject* self, PyObject*) { return PyBool_FromLong(self_tensor(self).is_contiguous()); }
PyObject* m_is_view(PyObject* self, PyObject*) {
  const AutogradMeta* meta = self_tensor(self).impl()->autograd_meta();
  return PyBool_FromLong(meta && meta->is_view);
}
// torch's detach_: the tensor itself leaves the graph (a view cannot: its base's history is its own).
PyObject* m_detach_(PyObject* self, PyObject*) {
  KILN_PY_BEGIN
  AutogradMeta* meta = self_tensor(self).impl()->autograd_meta();
  if (meta) {
    KILN_CHECK(!meta->is_view,
               "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) "
               "for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and "
               "hence detach_() cannot be called on these gradients. To fix this error, please refer to the "
               "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.");
    meta->grad_fn.reset();
    meta->output_nr = 0;
    meta->requires_grad = false;
  }
  Py_INCREF(self);
  return self;
  KILN_PY_END
}
// The byte size of the tensor's whole storage (Tensor.untyped_storage().nbytes()).
PyObject* m_storage_nbytes(PyObject* self, PyObject*) {
  return PyLong_FromSize_t(self_tensor(self).impl()->storage()->nbytes());
}
PyObject* m_is_floating_point(PyObject* self, PyObject*) {
  return PyBool_FromLong(self_tensor(self).is_floating_point());
}
PyObject* m_data_ptr(PyObject* self, PyObject*) {
  // torch's data() of a tensor without elements is nullptr, whatever its storage.
  const auto& t = self_tensor(self);
  if (t.numel() == 0) return PyLong_FromLong(0);
  return PyLong_FromUnsignedLongLong(reinterpret_cast<uintptr_t>(t.data_ptr()));
}

PyObject* m_item(PyObject* self, PyObject*) {
  KILN_PY_BEGIN
  Scalar s = self_tensor(self).item();
  if (s.is_boolean()) return PyBool_FromLong(s.to_bool());
  if (s.is_integral(false)) return PyLong_FromLongLong(s.to_long());
  return PyFloat_FromDouble(s.to_double());
  KILN_PY_END
}

PyObject* m_requires_grad_(PyObject* self, PyObject* args, PyObject* kwargs) {
  KILN_PY_BEGIN
  static PythonArgParser parser({"requires_grad_(bool requires_grad=True)"}, true);
  ParsedArgs r = parser.parse(args, kwargs);
  const_cast<Tensor&>(self_tensor(self)).TensorBase::set_requires_grad(r.to_bool(0));
  return new_reference(self);
  KILN_PY_END
}

PyObject* m_retain_grad(PyObject* self, PyObject*) {
  KILN_PY_BEGIN
  retain_grad(self_tensor(self));
  Py_RETURN_NONE;
  KILN_PY_END
}

// The one C++ hook of a tensor with Python hooks: calls each hook in the list in
// order (taking the GIL: the engine runs without it), chaining replacements.
TensorBase run_python_hooks(PyObject* hooks, const TensorBase& grad) {
  PyGILState_STATE s = PyGILState_Ensure();
  TensorBase current = grad;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(hooks); ++i) {
    PyObject* fn = PyList_GET_ITEM(hooks, i);
    Py_INCREF(fn);
    PyObject* g = wrap(current);
    PyObject* res = g ? PyObject_CallFunctionObjArgs(fn, g, nullptr) : nullptr;
    Py_XDECREF(g);
    Py_DECREF(fn);
    if (!res) {
      PythonError err;
      PyGILState_Release(s);
      throw PythonError(std::move(err));
    }
    if (res != Py_None) {
      if (!is_tensor(res)) {
        const std::string type = Py_TYPE(res)->tp_name;  // torch's message names the returned type
        Py_DECREF(res);
        PyGILState_Release(s);
        throw TypeError("expected Variable, but hook returned '" + type + "'");
      }
      current = unpack_tensor(res);
    }
    Py_DECREF(res);
  }
  PyGILState_Release(s);
  return current;
}

PyObject* m_register_hook(PyObject* self, PyObject* fn) {
  KILN_PY_BEGIN
  KILN_CHECK_TYPE(PyCallable_Check(fn), "register_hook(): hook must be callable");
  TensorObject* obj = reinterpret_cast<TensorObject*>(self);
  if (obj->hooks == nullptr) {
    PyObject* hooks = PyList_New(0);
    if (!hooks) return nullptr;
    Py_INCREF(hooks);  // one reference for the C++ hook, one for obj->hooks
    std::shared_ptr<PyObject> holder(hooks, [](PyObject* o) {
      PyGILState_STATE st = PyGILState_Ensure();
      Py_DECREF(o);
      PyGILState_Release(st);
    });
    try {
      register_hook(self_tensor(self),
                    make_grad_hook([holder](const TensorBase& grad) { return run_python_hooks(holder.get(), grad); }));
    } catch (...) {
      Py_DECREF(hooks);
      throw;
    }
    obj->hooks = hooks;
  }
  if (PyList_Append(obj->hooks, fn) < 0) return nullptr;
  Py_RETURN_NONE;
  KILN_PY_END
}

// fn(tensor) after the leaf's .grad was accumulated (Tensor.register_post_accumulate_grad_hook).
PyObject* m_register_post_accumulate_grad_hook(PyObject* self, PyObject* fn) {
  KILN_PY_BEGIN
  KILN_CHECK_TYPE(PyCallable_Check(fn), "register_post_accumulate_grad_hook(): hook must be callable");
  auto hook = std::make_shared<PyRef>(fn);
  register_post_accumulate_grad_hook(self_tensor(self), make_grad_hook([hook](const TensorBase& leaf) {
    GilGuard gil;
    PyObject* arg = wrap(leaf);
    PyObject* res = arg ? PyObject_CallFunctionObjArgs(hook->get(), arg, nullptr) : nullptr;
    Py_XDECREF(arg);
    if (!res) throw PythonError();  // fetched with the GIL held; GilGuard releases it after
    Py_DECREF(res);
    return TensorBase();
  }));
  Py_RETURN_NONE;
  KILN_PY_END
}

#define KILN_METHOD(name, fn, flags) {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(fn)), flags, nullptr}

PyMethodDef hand_methods[] = {
    KILN_METHOD("size", m_size, METH_VARARGS | METH_KEYWORDS),
    KILN_METHOD("stride", m_stride, METH_VARARGS | METH_KEYWORDS),
    KILN_METHOD("dim", m_dim, METH_NOARGS),
    KILN_METHOD("ndimension", m_dim, METH_NOARGS),
    KILN_METHOD("numel", m_numel, METH_NOARGS),
    KILN_METHOD("nelement", m_numel, METH_NOARGS),
    KILN_METHOD("element_size", m_element_size, METH_NOARGS),
    KILN_METHOD("storage_offset", m_storage_offset, METH_NOARGS),
    KILN_METHOD("is_contiguous", m_is_contiguous, METH_NOARGS),
    KILN_METHOD("is_floating_point", m_is_floating_point, METH_NOARGS),
    KILN_METHOD("_is_view", m_is_view, METH_NOARGS),
    KILN_METHOD("detach_", m_detach_, METH_NOARGS),
    KILN_METHOD("_storage_nbytes", m_storage_nbytes, METH_NOARGS),
    KILN_METHOD("data_ptr", m_data_ptr, METH_NOARGS),
    KILN_METHOD("item", m_item, METH_NOARGS),
    KILN_METHOD("tolist", m_tolist, METH_NOARGS),
    KILN_METHOD("requires_grad_", m_requires_grad_, METH_VARARGS | METH_KEYWORDS),
    KILN_METHOD("retain_grad", m_retain_grad, METH_NOARGS),
    KILN_METHOD("_register_hook", m_register_hook, METH_O),
    KILN_METHOD("_register_post_accumulate_grad_hook", m_register_post_accumulate_grad_hook, METH_O),
    {nullptr, nullptr, 0, nullptr},
};

std::vector<PyMethodDef> all_methods() {
  std::vector<PyMethodDef> v;
  for (PyMethodDef* m = hand_methods; m->ml_name; ++m) v.push_back(*m);
  for (PyMethodDef* m = generated_methods; m->ml_name; ++m) v.push_back(*m);
  v.push_back({nullptr, nullptr, 0, nullptr});
  return v;
}

}  // namespace

PyTypeObject TensorBaseType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "kiln._C.TensorBase";
  t.tp_basicsize = sizeof(TensorObject);
  t.tp_dealloc = tensor_dealloc;
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC;
  t.tp_traverse = tensor_traverse;
  t.tp_clear = tensor_clear;
  t.tp_free = PyObject_GC_Del;
  t.tp_new = tensor_new;
  t.tp_hash = tensor_hash;
  t.tp_getset = tensor_getset;
  return t;
}();

bool add_tensor_type(PyObject* module) {
  static std::vector<PyMethodDef> methods = all_methods();
  TensorBaseType.tp_methods = methods.data();
  if (PyType_Ready(&TensorBaseType) < 0) return false;
  Py_INCREF(&TensorBaseType);
  return PyModule_AddObject(module, "TensorBase", reinterpret_cast<PyObject*>(&TensorBaseType)) == 0;
}

}  // namespace python
}  // namespace kiln
