// grad_fn objects: a Python view of an autograd Node (name, next_functions).
#pragma once

#include <Python.h>

#include <memory>

#include "runtime/autograd/node.h"

namespace kiln {
namespace python {

// None for null; for a node made by a Python autograd Function, its ctx (as in PyTorch).
PyObject* wrap_node(const std::shared_ptr<Node>& node);
// ((next node, input_nr), ...) for each next edge (grad_fn.next_functions).
PyObject* next_functions_tuple(const Node& node);
bool add_node_type(PyObject* module);
// grad_fn.register_hook(fn): fn(grad_inputs, grad_outputs) after the node runs; returns the handle.
PyObject* register_node_hook(const std::shared_ptr<Node>& node, PyObject* fn);

}  // namespace python
}  // namespace kiln
