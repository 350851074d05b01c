// Hooks on a node's result (torch's grad_fn.register_hook): hook(grad_inputs, grad_outputs) runs
// after the node computed the gradients for its inputs (grad_inputs, one per next edge) from the
// gradients it received (grad_outputs); a returned list replaces grad_inputs. Kept in a side table
// keyed by the node (not in Node itself) so that nodes without hooks pay one relaxed atomic load.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "runtime/autograd/node.h"

namespace kiln {

using NodePostHook =
    std::function<std::optional<variable_list>(const variable_list& grad_inputs, const variable_list& grad_outputs)>;

// Returns an id for remove_node_post_hook. The hook lives until removed or the node dies.
int64_t add_node_post_hook(const std::shared_ptr<Node>& node, NodePostHook hook);
void remove_node_post_hook(int64_t id);

bool node_has_post_hooks(const Node* node);

// Drops the hooks of a node being deleted (delete_node): a hook holds what it captured (a Python
// hook its closure: the module, its parameters) no longer than its node lives, as in torch.
void drop_node_post_hooks(const Node* node);
// The node's hooks in registration order, each seeing the previous one's grad_inputs.
void run_node_post_hooks(const Node* node, variable_list& grad_inputs, const variable_list& grad_outputs);

}  // namespace kiln
