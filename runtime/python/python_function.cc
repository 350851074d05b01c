// kiln._C._FunctionBase (the ctx of a Python autograd Function) and PyFunctionNode, the
// graph node that calls the Function's Python backward. See python_function.h.
#include "runtime/python/python_function.h"

#include <string>
#include <vector>

#include "generated/api/zeros.h"
#include "runtime/core/autograd_meta.h"
#include "runtime/dispatch/grad_mode.h"
#include "runtime/autograd/saved_variable.h"
#include "runtime/python/gil.h"
#include "runtime/python/node_object.h"
#include "runtime/python/tensor_object.h"

namespace kiln {
namespace python {
namespace {

// Owns one reference (dropped at scope exit, with the GIL held).
class OwnedRef {
 public:
  explicit OwnedRef(PyObject* o) : obj_(o) {}
  ~OwnedRef() { Py_XDECREF(obj_); }
  OwnedRef(const OwnedRef&) = delete;
  OwnedRef& operator=(const OwnedRef&) = delete;
  PyObject* get() const { return obj_; }
  PyObject* release() {
    PyObject* o = obj_;
    obj_ = nullptr;
    return o;
  }

 private:
  PyObject* obj_;
};

struct FunctionObject {
  PyObject_HEAD
  std::weak_ptr<Node> cdata;  // weak: the node owns the ctx, not the other way round
  bool had_graph;             // a node was made, so saved tensors that are gone were freed
  bool materialize_grads;     // undefined output gradients reach backward as zeros
};

FunctionObject* as_function(PyObject* o) { return reinterpret_cast<FunctionObject*>(o); }

class PyFunctionNode final : public Node {
 public:
  PyFunctionNode(PyObject* ctx, std::string name) : ctx_(new_reference(ctx)), name_(std::move(name)) {}
  ~PyFunctionNode() override {
    if (!Py_IsInitialized()) return;  // destroyed after interpreter exit: leak the ctx, don't crash
    GilGuard gil;
    Py_DECREF(ctx_);
  }
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return name_; }
  void release_variables() override {
    for (SavedVariable& s : saved) s.reset_data();
  }
  PyObject* ctx() const { return ctx_; }

  std::vector<bool> is_tensor_input;  // per forward argument: only tensors may get a gradient
  std::vector<int> output_slot;       // per forward output: its input number here, -1 if not a tensor
  // ctx.save_for_backward; outputs among them are saved without their grad_fn (this node), so
  // the node does not keep itself alive through them.
  std::vector<SavedVariable> saved;

 private:
  variable_list unpack_grads(PyObject* result) const;
  PyObject* ctx_;
  std::string name_;
};

variable_list PyFunctionNode::apply(variable_list&& grads) {
  GilGuard gil;
  const bool materialize = as_function(ctx_)->materialize_grads;
  // backward gets one gradient per forward output: None for non-tensor outputs.
  OwnedRef args(PyTuple_New(static_cast<Py_ssize_t>(output_slot.size())));
  if (!args.get()) throw PythonError();
  for (size_t i = 0; i < output_slot.size(); ++i) {
    TensorBase g;
    if (output_slot[i] >= 0) {
      g = grads[output_slot[i]];
      if (!g.defined() && materialize) {
        const InputMetadata& m = input_metadata(output_slot[i]);
        g = zeros(IntArrayRef(m.shape), m.dtype, m.device);
      }
    }
    PyObject* item = wrap(g);
    if (!item) throw PythonError();
    PyTuple_SET_ITEM(args.get(), i, item);
  }
  OwnedRef backward(PyObject_GetAttrString(ctx_, "apply"));  // BackwardCFunction.apply -> Function.backward
  OwnedRef result(backward.get() ? PyObject_CallObject(backward.get(), args.get()) : nullptr);
  if (!result.get()) throw PythonError();
  return unpack_grads(result.get());
}

// backward's result: one gradient (or None) per forward argument; extra trailing Nones are fine.
variable_list PyFunctionNode::unpack_grads(PyObject* result) const {
  OwnedRef tuple(PyTuple_Check(result) ? new_reference(result) : PyTuple_Pack(1, result));
  if (!tuple.get()) throw PythonError();
  const size_t expected = is_tensor_input.size();
  const size_t got = static_cast<size_t>(PyTuple_GET_SIZE(tuple.get()));
  bool extras_are_none = true;
  for (size_t i = expected; i < got; ++i) extras_are_none = extras_are_none && PyTuple_GET_ITEM(tuple.get(), i) == Py_None;
  KILN_CHECK(got >= expected && extras_are_none, "function ", name_,
             " returned an incorrect number of gradients (expected ", expected, ", got ", got, ")");
  variable_list out(expected);
  for (size_t i = 0; i < expected; ++i) {
    PyObject* g = PyTuple_GET_ITEM(tuple.get(), i);
    if (g == Py_None) continue;
    KILN_CHECK(is_tensor(g), "function ", name_, " returned a gradient of type ", Py_TYPE(g)->tp_name,
               " at position ", i + 1, " (expected a Tensor or None)");
    KILN_CHECK(is_tensor_input[i], "function ", name_, " returned a gradient different than None at position ", i + 1,
               ", but the corresponding forward input was not a Tensor");
    out[i] = unpack_tensor(g);
  }
  return out;
}

// Reads and removes ctx.<name>, the tuple a FunctionCtx method stored (absent if never called).
std::vector<Tensor> take_tensors(PyObject* ctx, const char* name, const char* method, bool allow_none) {
  std::vector<Tensor> out;
  OwnedRef value(PyObject_GetAttrString(ctx, name));
  if (!value.get()) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) throw PythonError();
    PyErr_Clear();
    return out;
  }
  if (PyObject_DelAttrString(ctx, name) < 0) throw PythonError();
  KILN_CHECK_TYPE(PyTuple_Check(value.get()), method, "(): expected a tuple of tensors in ctx.", name);
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(value.get()); ++i) {
    PyObject* item = PyTuple_GET_ITEM(value.get(), i);
    if (item == Py_None && allow_none) {
      out.emplace_back();
      continue;
    }
    KILN_CHECK_TYPE(is_tensor(item), method, " can only accept tensors, but argument ", i, " is of type ",
                    Py_TYPE(item)->tp_name);
    out.push_back(unpack_tensor(item));
  }
  return out;
}

bool contains(const std::vector<Tensor>& tensors, const TensorImpl* impl) {
  for (const Tensor& t : tensors)
    if (t.defined() && t.impl() == impl) return true;
  return false;
}

// Same storage and version counter, no autograd history.
Tensor alias_of(const Tensor& t) {
  return Tensor(Ref<TensorImpl>(new TensorImpl(*t.impl(), t.sizes(), t.strides(), t.storage_offset())));
}

// Gives one tensor output of forward its history (PyTorch's rules) and returns what apply hands out.
Tensor wrap_output(Tensor var, const std::shared_ptr<PyFunctionNode>& node, bool is_input, bool is_dirty,
                   bool differentiable) {
  if (!node || !differentiable) {
    // Inputs returned unchanged become aliases, so that the input's own history is untouched;
    // what still requires grad here (an input, a tensor from outside) is handed out detached.
    if ((is_input && !is_dirty) || var.requires_grad()) var = alias_of(var);
    if (node) node->output_slot.push_back(static_cast<int>(node->add_input_metadata(var)));
    return var;
  }
  if (is_dirty) {
    // In-place forward: the tensor's history now goes through this node.
    const AutogradMeta* meta = var.impl()->autograd_meta();
    // torch's wording for a dirty leaf (its check_inplace words the in-place op's "is being used")
    KILN_CHECK(!(var.requires_grad() && var.is_leaf()),
               "a leaf Variable that requires grad has been used in an in-place operation.");
    KILN_CHECK_NOT_IMPLEMENTED(!(meta && meta->is_view && meta->base.defined()), node->name(),
                               ": mark_dirty() of a view is not supported; clone() it before modifying it in place");
    rebase_history(var, node, node->name().c_str());
  } else {
    if (is_input) var = alias_of(var);
    set_history(var, node);
  }
  node->output_slot.push_back(static_cast<int>(var.output_nr()));
  return var;
}

// ctx._wrap_outputs(inputs, outputs): called by Function.apply after forward; returns the outputs.
PyObject* function_wrap_outputs(PyObject* self, PyObject* args) {
  KILN_PY_BEGIN
  PyObject *inputs, *outputs;
  if (!PyArg_ParseTuple(args, "O!O!", &PyTuple_Type, &inputs, &PyTuple_Type, &outputs)) return nullptr;
  FunctionObject* fn = as_function(self);
  KILN_CHECK(!fn->had_graph, "_wrap_outputs(): this ctx already belongs to a graph");

  std::vector<Tensor> input_tensors;
  bool any_requires_grad = false;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(inputs); ++i) {
    PyObject* item = PyTuple_GET_ITEM(inputs, i);
    if (!is_tensor(item)) continue;
    input_tensors.push_back(unpack_tensor(item));
    any_requires_grad = any_requires_grad || input_tensors.back().requires_grad();
  }
  std::shared_ptr<PyFunctionNode> node;
  if (any_requires_grad && GradMode::is_enabled()) {
    OwnedRef type_name(PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(self)), "__name__"));
    const char* name = type_name.get() ? PyUnicode_AsUTF8(type_name.get()) : nullptr;
    if (!name) throw PythonError();
    node = make_node<PyFunctionNode>(self, name);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(inputs); ++i) {
      PyObject* item = PyTuple_GET_ITEM(inputs, i);
      node->is_tensor_input.push_back(is_tensor(item));
      node->add_next_edge(is_tensor(item) ? gradient_edge(unpack_tensor(item)) : Edge());
    }
    fn->cdata = node;
    fn->had_graph = true;
  }

  const std::vector<Tensor> dirty = take_tensors(self, "dirty_tensors", "mark_dirty", false);
  const std::vector<Tensor> non_differentiable =
      take_tensors(self, "non_differentiable", "mark_non_differentiable", false);
  const std::vector<Tensor> to_save = take_tensors(self, "to_save", "save_for_backward", true);

  std::vector<Tensor> output_tensors;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(outputs); ++i)
    if (is_tensor(PyTuple_GET_ITEM(outputs, i))) output_tensors.push_back(unpack_tensor(PyTuple_GET_ITEM(outputs, i)));
  for (const Tensor& t : dirty) {
    KILN_CHECK(contains(output_tensors, t.impl()),
               "Some elements marked as dirty during the forward method were not returned as output. The inputs "
               "that are modified inplace must all be outputs of the Function.");
    t.bump_version();  // counted as modified even when written through .data or NumPy, as in torch
  }

  const Py_ssize_t n = PyTuple_GET_SIZE(outputs);
  OwnedRef result(PyTuple_New(n));
  if (!result.get()) throw PythonError();
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* obj = PyTuple_GET_ITEM(outputs, i);
    if (!is_tensor(obj)) {
      if (node) node->output_slot.push_back(-1);
      PyTuple_SET_ITEM(result.get(), i, new_reference(obj));
      continue;
    }
    const Tensor& var = unpack_tensor(obj);
    const bool differentiable = !contains(non_differentiable, var.impl()) && var.is_floating_point();
    Tensor out = wrap_output(var, node, contains(input_tensors, var.impl()), contains(dirty, var.impl()),
                             differentiable);
    PyObject* wrapped = wrap(std::move(out));
    if (!wrapped) throw PythonError();
    PyTuple_SET_ITEM(result.get(), i, wrapped);
  }
  if (node) {
    for (const Tensor& t : to_save) node->saved.emplace_back(t, t.defined() && t.grad_fn() == node);
  }
  return result.release();
  KILN_PY_END
}

PyObject* function_new(PyTypeObject* type, PyObject*, PyObject*) {
  PyObject* obj = type->tp_alloc(type, 0);
  if (!obj) return nullptr;
  FunctionObject* self = as_function(obj);
  new (&self->cdata) std::weak_ptr<Node>();
  self->had_graph = false;
  self->materialize_grads = true;
  return obj;
}

void function_dealloc(PyObject* obj) {
  as_function(obj)->cdata.~weak_ptr<Node>();
  Py_TYPE(obj)->tp_free(obj);
}

PyObject* get_saved_tensors(PyObject* self, void*) {
  KILN_PY_BEGIN
  FunctionObject* fn = as_function(self);
  std::shared_ptr<Node> node = fn->cdata.lock();
  KILN_CHECK(node || !fn->had_graph, "the saved tensors of ", Py_TYPE(self)->tp_name,
             " are gone: its graph was freed (all its outputs were deleted)");
  if (!node) return PyTuple_New(0);  // no graph was recorded, so nothing was saved
  const std::vector<SavedVariable>& saved = static_cast<PyFunctionNode*>(node.get())->saved;
  OwnedRef tuple(PyTuple_New(static_cast<Py_ssize_t>(saved.size())));
  if (!tuple.get()) return nullptr;
  for (size_t i = 0; i < saved.size(); ++i) {
    PyObject* item = wrap(saved[i].unpack(node));  // raises if freed or modified in place
    if (!item) return nullptr;
    PyTuple_SET_ITEM(tuple.get(), i, item);
  }
  return tuple.release();
  KILN_PY_END
}

PyObject* get_materialize_grads(PyObject* self, void*) { return PyBool_FromLong(as_function(self)->materialize_grads); }
int set_materialize_grads(PyObject* self, PyObject* value, void*) {
  if (!value || !PyBool_Check(value)) {
    PyErr_SetString(PyExc_TypeError, "materialize_grads must be a bool");
    return -1;
  }
  as_function(self)->materialize_grads = value == Py_True;
  return 0;
}

PyObject* get_next_functions(PyObject* self, void*) {
  std::shared_ptr<Node> node = as_function(self)->cdata.lock();
  return node ? next_functions_tuple(*node) : PyTuple_New(0);
}

PyObject* function_name(PyObject* self, PyObject*) {
  return PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(self)), "__name__");
}

// ctx.register_hook(fn) on a custom Function's grad_fn: as grad_fn.register_hook on the other nodes.
PyObject* function_register_hook(PyObject* self, PyObject* fn) {
  KILN_PY_BEGIN
  return register_node_hook(as_function(self)->cdata.lock(), fn);
  KILN_PY_END
}

PyMethodDef function_methods[] = {
    {"_wrap_outputs", function_wrap_outputs, METH_VARARGS, nullptr},
    {"register_hook", function_register_hook, METH_O, nullptr},
    {"name", function_name, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef function_getset[] = {
    {"saved_tensors", get_saved_tensors, nullptr, nullptr, nullptr},
    {"materialize_grads", get_materialize_grads, set_materialize_grads, nullptr, nullptr},
    {"next_functions", get_next_functions, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyTypeObject FunctionBaseType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "kiln._C._FunctionBase";
  t.tp_basicsize = sizeof(FunctionObject);
  t.tp_dealloc = function_dealloc;
  // Python subclasses (python/kiln/autograd/function.py) add __dict__, __weakref__ and GC support.
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  t.tp_new = function_new;
  t.tp_methods = function_methods;
  t.tp_getset = function_getset;
  return t;
}();

}  // namespace

PyObject* function_ctx(const Node* node) {
  const auto* fn = dynamic_cast<const PyFunctionNode*>(node);
  return fn ? fn->ctx() : nullptr;
}

bool add_function_type(PyObject* module) {
  if (PyType_Ready(&FunctionBaseType) < 0) return false;
  Py_INCREF(&FunctionBaseType);
  return PyModule_AddObject(module, "_FunctionBase", reinterpret_cast<PyObject*>(&FunctionBaseType)) == 0;
}

}  // namespace python
}  // namespace kiln
