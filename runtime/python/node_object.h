// grad_fn objects: a Python view of an autograd Node (name, next_functions).
#pragma once

#include <Python.h>

#include <memory>

#include "runtime/autograd/node.h"

namespace kiln {
namespace python {

PyObject* wrap_node(const std::shared_ptr<Node>& node);  // None for null
bool add_node_type(PyObject* module);

}  // namespace python
}  // namespace kiln
