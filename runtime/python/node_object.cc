#include "runtime/python/node_object.h"

#include <string>
#include <unordered_map>

#include "runtime/autograd/accumulate_grad.h"
#include "runtime/autograd/node_post_hooks.h"
#include "runtime/python/gil.h"
#include "runtime/python/python_function.h"
#include "runtime/python/tensor_object.h"

namespace kiln {
namespace python {
namespace {

struct NodeObject {
  PyObject_HEAD
  std::shared_ptr<Node> node;
};

void node_dealloc(PyObject* obj) {
  reinterpret_cast<NodeObject*>(obj)->node.~shared_ptr<Node>();
  Py_TYPE(obj)->tp_free(obj);
}

PyObject* node_name(PyObject* self, PyObject*) {
  return PyUnicode_FromString(reinterpret_cast<NodeObject*>(self)->node->name().c_str());
}

// The Python class name of a node: torch's C++ nodes name themselves "torch::autograd::AccumulateGrad"
// while their class is AccumulateGrad.
std::string class_name(const std::string& name) {
  const size_t colon = name.rfind("::");
  return colon == std::string::npos ? name : name.substr(colon + 2);
}

PyObject* node_repr(PyObject* self) {
  return PyUnicode_FromFormat("<%s object at %p>",
                              class_name(reinterpret_cast<NodeObject*>(self)->node->name()).c_str(),
                              static_cast<void*>(reinterpret_cast<NodeObject*>(self)->node.get()));
}

// AccumulateGrad.variable: the leaf it accumulates into (other nodes have no such attribute).
PyObject* node_variable(PyObject* self, void*) {
  const auto* acc = dynamic_cast<const AccumulateGrad*>(reinterpret_cast<NodeObject*>(self)->node.get());
  if (acc == nullptr) {
    PyErr_Format(PyExc_AttributeError, "'%s' object has no attribute 'variable'", Py_TYPE(self)->tp_name);
    return nullptr;
  }
  return wrap(acc->variable());
}

PyObject* node_next_functions(PyObject* self, void*) {
  return next_functions_tuple(*reinterpret_cast<NodeObject*>(self)->node);
}

PyObject* node_richcompare(PyObject* a, PyObject* b, int op);

// A tuple of the gradients, None for an undefined one (a new reference, or null with a Python error).
PyObject* grads_tuple(const variable_list& grads) {
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(grads.size()));
  for (size_t i = 0; t && i < grads.size(); ++i) {
    PyObject* item = grads[i].defined() ? wrap(grads[i]) : new_reference(Py_None);
    if (!item) {
      Py_DECREF(t);
      return nullptr;
    }
    PyTuple_SET_ITEM(t, i, item);
  }
  return t;
}

// Calls the Python hook with the GIL taken back; its result (None, or a Tensor/None per grad_input)
// checked as torch's: "hook 'name' has returned an incorrect number of values".
std::optional<variable_list> call_post_hook(PyObject* fn, const variable_list& grad_inputs,
                                            const variable_list& grad_outputs) {
  GilGuard gil;
  PyObject* gi = grads_tuple(grad_inputs);
  PyObject* go = gi ? grads_tuple(grad_outputs) : nullptr;
  PyObject* result = go ? PyObject_CallFunctionObjArgs(fn, gi, go, nullptr) : nullptr;
  Py_XDECREF(gi);
  Py_XDECREF(go);
  if (!result) throw PythonError();
  if (result == Py_None) {
    Py_DECREF(result);
    return std::nullopt;
  }
  PyObject* seq = PySequence_Fast(result, "a backward hook must return None or a tuple of gradients");
  Py_DECREF(result);
  if (!seq) throw PythonError();
  const size_t n = static_cast<size_t>(PySequence_Fast_GET_SIZE(seq));
  std::string name = "?";
  if (PyObject* qual = PyObject_GetAttrString(fn, "__name__")) {
    if (PyUnicode_Check(qual)) name = PyUnicode_AsUTF8(qual);
    Py_DECREF(qual);
  } else {
    PyErr_Clear();
  }
  variable_list out(grad_inputs.size());
  try {
    KILN_CHECK(n == grad_inputs.size(), "hook '", name, "' has returned an incorrect number of values (got ", n,
               ", but expected ", grad_inputs.size(), ")");
    for (size_t i = 0; i < n; ++i) {
      PyObject* item = PySequence_Fast_GET_ITEM(seq, i);
      if (item == Py_None) continue;
      KILN_CHECK_TYPE(is_tensor(item), "expected a Tensor or None as the hook's value ", i, ", got ",
                      Py_TYPE(item)->tp_name);
      out[i] = unpack_tensor(item);
    }
  } catch (...) {
    Py_DECREF(seq);
    throw;
  }
  Py_DECREF(seq);
  return out;
}

PyObject* node_register_hook(PyObject* self, PyObject* fn) {
  KILN_PY_BEGIN
  return register_node_hook(reinterpret_cast<NodeObject*>(self)->node, fn);
  KILN_PY_END
}

PyObject* py_remove_node_hook(PyObject*, PyObject* id) {
  KILN_PY_BEGIN
  const long long value = PyLong_AsLongLong(id);
  if (value == -1 && PyErr_Occurred()) return nullptr;
  remove_node_post_hook(value);
  Py_RETURN_NONE;
  KILN_PY_END
}

PyMethodDef module_functions[] = {
    {"_remove_node_hook", py_remove_node_hook, METH_O, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

PyMethodDef node_methods[] = {
    {"name", node_name, METH_NOARGS, nullptr},
    {"register_hook", node_register_hook, METH_O,
     "hook(grad_inputs, grad_outputs) after this node ran; a non-None result replaces grad_inputs."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef node_getset[] = {
    {"next_functions", node_next_functions, nullptr, nullptr, nullptr},
    {"variable", node_variable, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

Py_hash_t node_hash(PyObject* self) { return _Py_HashPointer(reinterpret_cast<NodeObject*>(self)->node.get()); }

PyTypeObject NodeType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "kiln._C.Node";
  t.tp_basicsize = sizeof(NodeObject);
  t.tp_dealloc = node_dealloc;
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;  // subclassed per node name (see node_class)
  t.tp_repr = node_repr;
  t.tp_methods = node_methods;
  t.tp_getset = node_getset;
  t.tp_hash = node_hash;
  t.tp_richcompare = node_richcompare;
  return t;
}();

// Two wrappers of the same node compare equal (`y.grad_fn == y.grad_fn`).
PyObject* node_richcompare(PyObject* a, PyObject* b, int op) {
  if (!PyObject_TypeCheck(b, &NodeType) || (op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
  bool same = reinterpret_cast<NodeObject*>(a)->node == reinterpret_cast<NodeObject*>(b)->node;
  return PyBool_FromLong(op == Py_EQ ? same : !same);
}

// One Python class per node name, so type(y.grad_fn).__name__ is 'MulBackward0' as in torch
// (a subclass of kiln._C.Node, made on first use and kept for the process).
PyTypeObject* node_class(const std::string& name) {
  static std::unordered_map<std::string, PyTypeObject*> classes;
  auto it = classes.find(name);
  if (it != classes.end()) return it->second;
  PyObject* cls = PyObject_CallFunction(reinterpret_cast<PyObject*>(&PyType_Type), "s(O){}", class_name(name).c_str(),
                                        reinterpret_cast<PyObject*>(&NodeType));
  if (cls == nullptr) return nullptr;
  classes.emplace(name, reinterpret_cast<PyTypeObject*>(cls));
  return reinterpret_cast<PyTypeObject*>(cls);
}

}  // namespace

PyObject* next_functions_tuple(const Node& node) {
  const auto& edges = node.next_edges();
  PyObject* tup = PyTuple_New(static_cast<Py_ssize_t>(edges.size()));
  if (!tup) return nullptr;
  for (size_t i = 0; i < edges.size(); ++i) {
    PyObject* fn = wrap_node(edges[i].function);
    PyObject* pair = fn ? Py_BuildValue("(NI)", fn, edges[i].input_nr) : nullptr;
    if (!pair) {
      Py_DECREF(tup);
      return nullptr;
    }
    PyTuple_SET_ITEM(tup, i, pair);
  }
  return tup;
}

PyObject* wrap_node(const std::shared_ptr<Node>& node) {
  if (!node) Py_RETURN_NONE;
  if (PyObject* ctx = function_ctx(node.get())) {
    Py_INCREF(ctx);
    return ctx;
  }
  PyTypeObject* cls = node_class(node->name());
  if (cls == nullptr) return nullptr;
  PyObject* obj = cls->tp_alloc(cls, 0);
  if (!obj) return nullptr;
  new (&reinterpret_cast<NodeObject*>(obj)->node) std::shared_ptr<Node>(node);
  return obj;
}

PyObject* register_node_hook(const std::shared_ptr<Node>& node, PyObject* fn) {
  KILN_CHECK_TYPE(PyCallable_Check(fn), "register_hook(): the hook must be callable, got ", Py_TYPE(fn)->tp_name);
  KILN_CHECK(node != nullptr, "register_hook(): this grad_fn's graph was freed");
  auto ref = std::make_shared<PyRef>(fn);
  const int64_t id = add_node_post_hook(node, [ref](const variable_list& gi, const variable_list& go) {
    return call_post_hook(ref->get(), gi, go);
  });
  // The handle (kiln.autograd.graph): handle.remove() unregisters the hook.
  PyObject* graph = PyImport_ImportModule("kiln.autograd.graph");
  PyObject* handle = graph ? PyObject_CallMethod(graph, "_NodeHookHandle", "L", static_cast<long long>(id)) : nullptr;
  Py_XDECREF(graph);
  if (!handle) remove_node_post_hook(id);
  return handle;
}

bool add_node_type(PyObject* module) {
  if (PyModule_AddFunctions(module, module_functions) < 0) return false;
  if (PyType_Ready(&NodeType) < 0) return false;
  Py_INCREF(&NodeType);
  return PyModule_AddObject(module, "Node", reinterpret_cast<PyObject*>(&NodeType)) == 0;
}

}  // namespace python
}  // namespace kiln
