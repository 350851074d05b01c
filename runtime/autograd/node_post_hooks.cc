#include "runtime/autograd/node_post_hooks.h"

#include <atomic>
#include <map>
#include <mutex>
#include <vector>

namespace kiln {
namespace {

struct Entry {
  std::weak_ptr<Node> node;  // weak: a hook does not keep its node alive
  const Node* raw;           // the key; valid only while `node` is not expired
  NodePostHook hook;
};

std::mutex& table_mutex() {
  static auto* m = new std::mutex;  // never destroyed: nodes may die during static destruction
  return *m;
}
std::map<int64_t, Entry>& table() {
  static auto* t = new std::map<int64_t, Entry>;
  return *t;
}
std::atomic<int64_t> live_entries{0};
int64_t next_id = 1;

}  // namespace

// (A node's entries go when it is deleted: drop_node_post_hooks, from delete_node.)
int64_t add_node_post_hook(const std::shared_ptr<Node>& node, NodePostHook hook) {
  std::lock_guard<std::mutex> lock(table_mutex());
  const int64_t id = next_id++;
  table().emplace(id, Entry{node, node.get(), std::move(hook)});
  live_entries.store(static_cast<int64_t>(table().size()), std::memory_order_relaxed);
  return id;
}

void remove_node_post_hook(int64_t id) {
  NodePostHook dead;
  std::lock_guard<std::mutex> lock(table_mutex());
  auto it = table().find(id);
  if (it == table().end()) return;
  dead = std::move(it->second.hook);
  table().erase(it);
  live_entries.store(static_cast<int64_t>(table().size()), std::memory_order_relaxed);
}

bool node_has_post_hooks(const Node* node) {
  if (live_entries.load(std::memory_order_relaxed) == 0) return false;
  std::lock_guard<std::mutex> lock(table_mutex());
  for (const auto& [id, e] : table())
    if (e.raw == node && !e.node.expired()) return true;
  return false;
}

void drop_node_post_hooks(const Node* node) {
  if (live_entries.load(std::memory_order_relaxed) == 0) return;
  std::vector<NodePostHook> dead;  // destroyed outside the lock (a Python hook takes the GIL to die)
  std::lock_guard<std::mutex> lock(table_mutex());
  for (auto it = table().begin(); it != table().end();) {
    if (it->second.raw == node) {
      dead.push_back(std::move(it->second.hook));
      it = table().erase(it);
    } else {
      ++it;
    }
  }
  live_entries.store(static_cast<int64_t>(table().size()), std::memory_order_relaxed);
}

void run_node_post_hooks(const Node* node, variable_list& grad_inputs, const variable_list& grad_outputs) {
  std::vector<NodePostHook> hooks;  // copied: a hook may add or remove hooks
  {
    std::lock_guard<std::mutex> lock(table_mutex());
    for (const auto& [id, e] : table())
      if (e.raw == node && !e.node.expired()) hooks.push_back(e.hook);
  }
  for (const NodePostHook& hook : hooks) {
    std::optional<variable_list> replaced = hook(grad_inputs, grad_outputs);
    if (replaced) grad_inputs = std::move(*replaced);
  }
}

}  // namespace kiln
