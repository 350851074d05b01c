#include "runtime/python/node_object.h"

#include <string>
#include <unordered_map>

#include "runtime/python/python_function.h"

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

PyObject* node_repr(PyObject* self) {
  return PyUnicode_FromFormat("<%s object at %p>", reinterpret_cast<NodeObject*>(self)->node->name().c_str(),
                              static_cast<void*>(reinterpret_cast<NodeObject*>(self)->node.get()));
}

PyObject* node_next_functions(PyObject* self, void*) {
  return next_functions_tuple(*reinterpret_cast<NodeObject*>(self)->node);
}

PyObject* node_richcompare(PyObject* a, PyObject* b, int op);

PyMethodDef node_methods[] = {
    {"name", node_name, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef node_getset[] = {
    {"next_functions", node_next_functions, nullptr, nullptr, nullptr},
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
  PyObject* cls = PyObject_CallFunction(reinterpret_cast<PyObject*>(&PyType_Type), "s(O){}", name.c_str(),
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

bool add_node_type(PyObject* module) {
  if (PyType_Ready(&NodeType) < 0) return false;
  Py_INCREF(&NodeType);
  return PyModule_AddObject(module, "Node", reinterpret_cast<PyObject*>(&NodeType)) == 0;
}

}  // namespace python
}  // namespace kiln
