// kiln._C: the extension module. Operators come from generated/python/; this file
// adds the hand-written functions (autograd engine, grad mode, NumPy, runtime knobs).
#include <omp.h>

#include <cstdlib>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "runtime/python/binding_tables.h"
#include "generated/api/view.h"
#include "runtime/autograd/engine.h"
#include "runtime/autograd/inplace_view.h"
#include "runtime/dispatch/grad_mode.h"
#include "runtime/core/allocator.h"
#include "runtime/core/warning.h"
#include "runtime/dispatch/autocast_state.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/kernels/cpu/onednn_common.h"
#include "runtime/kernels/type_promotion.h"
#include "runtime/python/arg_parser.h"
#include "runtime/python/dtype_object.h"
#include "runtime/python/formula_functions.h"
#include "runtime/python/profiler_functions.h"
#include "runtime/python/saved_tensor_hooks.h"
#include "runtime/python/generator_object.h"
#include "runtime/python/node_object.h"
#include "runtime/python/numpy_interop.h"
#include "runtime/python/python_function.h"
#include "runtime/python/registered_classes.h"
#include "runtime/python/serialization.h"
#include "runtime/python/tensor_object.h"
#include "runtime/python/torch_function.h"

namespace kiln {
namespace python {
namespace {

std::vector<TensorBase> tensor_seq(PyObject* seq_obj, const char* what, bool allow_none) {
  std::vector<TensorBase> out;
  PyObject* seq = PySequence_Fast(seq_obj, what);
  if (!seq) throw PythonError();
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(seq, i);
    if (item == Py_None && allow_none) {
      out.emplace_back();
    } else if (is_tensor(item)) {
      out.push_back(unpack_tensor(item));
    } else {
      Py_DECREF(seq);
      throw TypeError(std::string(what) + ": expected a sequence of Tensors, got " + Py_TYPE(item)->tp_name);
    }
  }
  Py_DECREF(seq);
  return out;
}

PyObject* py_backward(PyObject*, PyObject* args) {
  KILN_PY_BEGIN
  PyObject *tensors, *grads;
  int retain_graph, create_graph;
  if (!PyArg_ParseTuple(args, "OOpp", &tensors, &grads, &retain_graph, &create_graph)) return nullptr;
  auto outs = tensor_seq(tensors, "backward", false);
  auto gs = tensor_seq(grads, "backward", true);
  BackwardOptions o{retain_graph != 0, create_graph != 0};
  without_gil([&] { backward(outs, gs, o); });
  Py_RETURN_NONE;
  KILN_PY_END
}

PyObject* py_grad(PyObject*, PyObject* args) {
  KILN_PY_BEGIN
  PyObject *outputs, *inputs, *grads;
  int retain_graph, create_graph, allow_unused;
  if (!PyArg_ParseTuple(args, "OOOppp", &outputs, &inputs, &grads, &retain_graph, &create_graph, &allow_unused))
    return nullptr;
  auto outs = tensor_seq(outputs, "grad", false);
  auto ins = tensor_seq(inputs, "grad", false);
  auto gs = tensor_seq(grads, "grad", true);
  BackwardOptions o{retain_graph != 0, create_graph != 0};
  std::vector<TensorBase> result = without_gil([&] { return grad(outs, ins, gs, o, allow_unused != 0); });
  PyObject* tup = PyTuple_New(static_cast<Py_ssize_t>(result.size()));
  for (size_t i = 0; i < result.size(); ++i) PyTuple_SET_ITEM(tup, i, wrap(result[i]));
  return tup;
  KILN_PY_END
}

PyObject* py_is_grad_enabled(PyObject*, PyObject*) { return PyBool_FromLong(GradMode::is_enabled()); }
PyObject* py_set_grad_enabled(PyObject*, PyObject* arg) {
  if (!PyBool_Check(arg)) {
    PyErr_SetString(PyExc_TypeError, "set_grad_enabled(): expected a bool");
    return nullptr;
  }
  GradMode::set_enabled(arg == Py_True);
  Py_RETURN_NONE;
}

PyObject* py_wrap_scalar(PyObject*, PyObject* arg) {
  KILN_PY_BEGIN
  KILN_CHECK_TYPE(is_scalar_like(arg), "expected a number, got ", Py_TYPE(arg)->tp_name);
  return wrap(Tensor(wrap_scalar(to_scalar(arg))));
  KILN_PY_END
}

// kiln.nn.Parameter(data): a `cls` instance aliasing data (detached) with requires_grad set.
PyObject* py_make_subclass(PyObject*, PyObject* args) {
  KILN_PY_BEGIN
  PyObject *cls, *data;
  int requires_grad = 0;
  if (!PyArg_ParseTuple(args, "OO|p", &cls, &data, &requires_grad)) return nullptr;
  KILN_CHECK_TYPE(PyType_Check(cls) && PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls), &TensorBaseType),
                  "_make_subclass(): cls must be a Tensor subclass");
  KILN_CHECK_TYPE(is_tensor(data), "_make_subclass(): data must be a Tensor");
  const Tensor& t = unpack_tensor(data);
  Tensor alias(Ref<TensorImpl>(new TensorImpl(*t.impl(), t.sizes(), t.strides(), t.storage_offset())));
  if (requires_grad) alias.TensorBase::set_requires_grad(true);
  return wrap_as(reinterpret_cast<PyTypeObject*>(cls), std::move(alias));
  KILN_PY_END
}

// Tensor.as_subclass(cls): the same elements as an instance of cls, its history going through a view
// of self (torch's AliasBackward0), so gradients reach self.
PyObject* py_as_subclass(PyObject*, PyObject* args) {
  KILN_PY_BEGIN
  PyObject *self, *cls;
  if (!PyArg_ParseTuple(args, "OO", &self, &cls)) return nullptr;
  KILN_CHECK_TYPE(is_tensor(self), "as_subclass(): self must be a Tensor");
  KILN_CHECK(PyType_Check(cls) && PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls), &TensorBaseType),
             "Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. Make sure "
             "your class inherits from Tensor.");
  const Tensor& t = unpack_tensor(self);
  return wrap_as(reinterpret_cast<PyTypeObject*>(cls), kiln::view(t, t.sizes()));
  KILN_PY_END
}

PyObject* py_set_num_threads(PyObject*, PyObject* arg) {
  long n = PyLong_AsLong(arg);
  if (n == -1 && PyErr_Occurred()) return nullptr;
  if (n <= 0) {
    PyErr_SetString(PyExc_ValueError, "set_num_threads(): expected a positive number of threads");
    return nullptr;
  }
  omp_set_num_threads(static_cast<int>(n));
  Py_RETURN_NONE;
}
PyObject* py_get_num_threads(PyObject*, PyObject*) { return PyLong_FromLong(omp_get_max_threads()); }

// torch._C._set_mkldnn_enabled / _get_mkldnn_enabled: whether kiln's CPU kernels call oneDNN where
// torch does (torch.backends.mkldnn.enabled).
PyObject* py_set_mkldnn_enabled(PyObject*, PyObject* arg) {
  if (!PyBool_Check(arg)) {
    PyErr_Format(PyExc_RuntimeError, "set_enabled_mkldnn expects a bool, but got %s", Py_TYPE(arg)->tp_name);
    return nullptr;
  }
  kiln::cpu::set_onednn_enabled(arg == Py_True);
  Py_RETURN_NONE;
}
PyObject* py_get_mkldnn_enabled(PyObject*, PyObject*) { return PyBool_FromLong(kiln::cpu::onednn_enabled()); }

// torch.set_flush_denormal: flush-to-zero and denormals-are-zero in this thread's MXCSR, as torch sets
// them (DAZ needs SSE3's MXCSR); False where the CPU has no such bits.
PyObject* py_set_flush_denormal(PyObject*, PyObject* arg) {
  KILN_PY_BEGIN
  int on = PyObject_IsTrue(arg);
  if (on < 0) throw PythonError();
#if defined(__x86_64__) || defined(__i386__)
  if (__builtin_cpu_supports("sse3")) {
    constexpr unsigned kDenormalsZero = 0x0040, kFlushZero = 0x8000;
    unsigned csr = _mm_getcsr() & ~(kDenormalsZero | kFlushZero);
    if (on) csr |= kDenormalsZero | kFlushZero;
    _mm_setcsr(csr);
    Py_RETURN_TRUE;
  }
#endif
  Py_RETURN_FALSE;
  KILN_PY_END
}

PyObject* py_explain(PyObject*, PyObject* arg) {
  set_explain_enabled(PyObject_IsTrue(arg) == 1);
  Py_RETURN_NONE;
}

PyObject* py_allocator_stats(PyObject*, PyObject*) {
  CpuAllocatorStats s = cpu_allocator_stats();
  return Py_BuildValue("{s:L,s:L,s:L}", "cache_hits", static_cast<long long>(s.cache_hits), "cache_misses",
                       static_cast<long long>(s.cache_misses), "cached_bytes", static_cast<long long>(s.cached_bytes));
}
PyObject* py_empty_cache(PyObject*, PyObject*) {
  cpu_allocator_empty_cache();
  Py_RETURN_NONE;
}
PyObject* py_live_tensors(PyObject*, PyObject*) { return PyLong_FromLongLong(TensorImpl::live_count()); }

PyObject* py_set_default_dtype(PyObject*, PyObject* arg) {
  KILN_PY_BEGIN
  auto t = as_scalar_type(arg);
  KILN_CHECK_TYPE(t.has_value(), "set_default_dtype(): expected a kiln.dtype");
  set_default_dtype(*t);
  Py_RETURN_NONE;
  KILN_PY_END
}
PyObject* py_get_default_dtype(PyObject*, PyObject*) { return new_reference(dtype_object(default_dtype())); }

// kiln.autocast's thread-local state (runtime/dispatch/autocast_state.h).
PyObject* py_set_autocast_cpu_enabled(PyObject*, PyObject* arg) {
  autocast::set_cpu_enabled(PyObject_IsTrue(arg) == 1);
  Py_RETURN_NONE;
}
PyObject* py_is_autocast_cpu_enabled(PyObject*, PyObject*) { return PyBool_FromLong(autocast::is_cpu_enabled()); }
PyObject* py_set_autocast_cpu_dtype(PyObject*, PyObject* arg) {
  KILN_PY_BEGIN
  auto t = as_scalar_type(arg);
  KILN_CHECK_TYPE(t.has_value(), "set_autocast_cpu_dtype(): expected a kiln.dtype");
  autocast::set_cpu_dtype(*t);
  Py_RETURN_NONE;
  KILN_PY_END
}
PyObject* py_get_autocast_cpu_dtype(PyObject*, PyObject*) { return new_reference(dtype_object(autocast::cpu_dtype())); }

PyObject* py_from_numpy(PyObject*, PyObject* arg) {
  KILN_PY_BEGIN
  return wrap(tensor_from_numpy(arg));
  KILN_PY_END
}

// Tensor.t_(), transpose_(), ... (python/kiln/_inplace_views.py): self takes the geometry and history
// of `view`, the out-of-place view op's result (runtime/autograd/inplace_view.h).
PyObject* py_adopt_view_geometry(PyObject*, PyObject* args) {
  KILN_PY_BEGIN
  PyObject *self, *view;
  const char* op_name;
  if (!PyArg_ParseTuple(args, "OOs", &self, &view, &op_name)) return nullptr;
  KILN_CHECK_TYPE(is_tensor(self) && is_tensor(view), "_adopt_view_geometry(): expected two Tensors");
  adopt_view_geometry(unpack_tensor(self), unpack_tensor(view), op_name);
  return new_reference(self);
  KILN_PY_END
}

// torch's autograd checks of an in-place op on `t` alone (a leaf that requires grad, a view of one, an
// output of a multi-view op): the in-place view methods written in Python run them before their own
// argument checks, in torch's order (x[0].transpose_(0, 1) on a leaf: the leaf error, not the dim's).
PyObject* py_check_inplace(PyObject*, PyObject* args) {
  KILN_PY_BEGIN
  PyObject* self;
  const char* op_name;
  if (!PyArg_ParseTuple(args, "Os", &self, &op_name)) return nullptr;
  KILN_CHECK_TYPE(is_tensor(self), "_check_inplace(): expected a Tensor");
  check_inplace(unpack_tensor(self), op_name);
  Py_RETURN_NONE;
  KILN_PY_END
}

PyObject* py_resize_(PyObject*, PyObject* args) {
  KILN_PY_BEGIN
  static PythonArgParser parser({"resize_(Tensor input, int[] size)"}, false);
  ParsedArgs r = parser.parse(args, nullptr);
  resize_in_place(r.tensor(0), r.intlist(1));
  return new_reference(PyTuple_GET_ITEM(args, 0));
  KILN_PY_END
}

// The out= resize warning's text, for the out= wrappers written in Python (linalg/_out.py).
PyObject* py_out_resized_message(PyObject*, PyObject* args) {
  KILN_PY_BEGIN
  static PythonArgParser parser({"_out_resized_message(int[] out_shape, int[] shape)"}, false);
  ParsedArgs r = parser.parse(args, nullptr);
  const std::string message = out_resized_message(r.intlist(0), r.intlist(1));
  return PyUnicode_FromStringAndSize(message.data(), static_cast<Py_ssize_t>(message.size()));
  KILN_PY_END
}

#define KILN_FN(name, fn, flags) {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(fn)), flags, nullptr}

PyMethodDef hand_functions[] = {
    KILN_FN("_register_classes", register_classes, METH_VARARGS | METH_KEYWORDS),
    KILN_FN("_backward", py_backward, METH_VARARGS),
    KILN_FN("_adopt_view_geometry", py_adopt_view_geometry, METH_VARARGS),
    KILN_FN("_check_inplace", py_check_inplace, METH_VARARGS),
    KILN_FN("_resize_", py_resize_, METH_VARARGS),
    KILN_FN("_out_resized_message", py_out_resized_message, METH_VARARGS),
    KILN_FN("_grad", py_grad, METH_VARARGS),
    KILN_FN("is_grad_enabled", py_is_grad_enabled, METH_NOARGS),
    KILN_FN("_set_grad_enabled", py_set_grad_enabled, METH_O),
    KILN_FN("_wrap_scalar", py_wrap_scalar, METH_O),
    KILN_FN("_make_subclass", py_make_subclass, METH_VARARGS),
    KILN_FN("_as_subclass", py_as_subclass, METH_VARARGS),
    KILN_FN("set_num_threads", py_set_num_threads, METH_O),
    KILN_FN("_set_mkldnn_enabled", py_set_mkldnn_enabled, METH_O),
    KILN_FN("_get_mkldnn_enabled", py_get_mkldnn_enabled, METH_NOARGS),
    KILN_FN("_set_autocast_cpu_enabled", py_set_autocast_cpu_enabled, METH_O),
    KILN_FN("_is_autocast_cpu_enabled", py_is_autocast_cpu_enabled, METH_NOARGS),
    KILN_FN("_set_autocast_cpu_dtype", py_set_autocast_cpu_dtype, METH_O),
    KILN_FN("_get_autocast_cpu_dtype", py_get_autocast_cpu_dtype, METH_NOARGS),
    KILN_FN("get_num_threads", py_get_num_threads, METH_NOARGS),
    KILN_FN("_explain", py_explain, METH_O),
    KILN_FN("_set_flush_denormal", py_set_flush_denormal, METH_O),
    KILN_FN("_pointwise_formulas", py_pointwise_formulas, METH_NOARGS),
    KILN_FN("_evaluate_formula", py_evaluate_formula, METH_VARARGS),
    KILN_FN("_pointwise_derivatives", py_pointwise_derivatives, METH_NOARGS),
    KILN_FN("_evaluate_derivative", py_evaluate_derivative, METH_VARARGS),
    KILN_FN("_simd_target", py_simd_target, METH_NOARGS),
    KILN_FN("_simd_targets", py_simd_targets, METH_NOARGS),
    KILN_FN("_torch_kernels_use_fma", py_torch_kernels_use_fma, METH_NOARGS),
    KILN_FN("_simd_use_target", py_simd_use_target, METH_O),
    KILN_FN("_allocator_stats", py_allocator_stats, METH_NOARGS),
    KILN_FN("_empty_cache", py_empty_cache, METH_NOARGS),
    KILN_FN("_live_tensor_count", py_live_tensors, METH_NOARGS),
    KILN_FN("set_default_dtype", py_set_default_dtype, METH_O),
    KILN_FN("get_default_dtype", py_get_default_dtype, METH_NOARGS),
    KILN_FN("from_numpy", py_from_numpy, METH_O),
    {nullptr, nullptr, 0, nullptr},
};

std::vector<PyMethodDef> all_functions() {
  std::vector<PyMethodDef> v;
  for (PyMethodDef* m = hand_functions; m->ml_name; ++m) v.push_back(*m);
  for (PyMethodDef* m = serialization_functions; m->ml_name; ++m) v.push_back(*m);
  for (PyMethodDef* m = profiler_functions; m->ml_name; ++m) v.push_back(*m);
  for (PyMethodDef* m = saved_tensor_hook_functions; m->ml_name; ++m) v.push_back(*m);
  for (PyMethodDef* m = torch_function_functions; m->ml_name; ++m) v.push_back(*m);
  for (PyMethodDef* m = generated_functions; m->ml_name; ++m) v.push_back(*m);
  v.push_back({nullptr, nullptr, 0, nullptr});
  return v;
}

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "kiln._C", "kiln's C++ core", -1, nullptr,
                          nullptr,              nullptr,    nullptr,            nullptr};

}  // namespace
}  // namespace python
}  // namespace kiln

namespace {
// torch 1.13's default intra-op thread count: half the logical CPUs on x86-64 (it assumes two
// hyperthreads per core), unless OMP_NUM_THREADS says otherwise. Using every logical CPU makes
// each OpenMP team wait for a descheduled thread whenever another process is busy (measured on a
// 2-CPU box with one busy process: a small transformer's training step 5x slower).
void set_default_num_threads() {
  if (std::getenv("OMP_NUM_THREADS") != nullptr) return;
  int n = omp_get_num_procs();
#if defined(__x86_64__)
  n /= 2;
#endif
  omp_set_num_threads(n > 0 ? n : 1);
}
}  // namespace

PyMODINIT_FUNC PyInit__C() {
  using namespace kiln::python;
  set_default_num_threads();
  static std::vector<PyMethodDef> functions = all_functions();
  module_def.m_methods = functions.data();
  PyObject* m = PyModule_Create(&module_def);
  if (!m) return nullptr;
  if (!add_dtypes(m) || !add_tensor_type(m) || !add_node_type(m) || !add_function_type(m) ||
      !add_generator_type(m) || !add_linalg_error(m) || !add_torch_function_type(m)) {
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
